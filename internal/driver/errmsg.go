package driver

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
)

// Msg turns an I/O error into a short message without addresses or ports,
// so errors counted by message fall into a few stable buckets
// ("connection reset by peer", not one bucket per local port).
func Msg(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed by server"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset by peer"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.EPIPE):
		return "broken pipe"
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, net.ErrClosed):
		return "connection closed"
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return Msg(op.Err)
	}
	var se *os.SyscallError
	if errors.As(err, &se) {
		return se.Err.Error()
	}
	return err.Error()
}

// IsTimeout reports whether err is a deadline or timeout error.
func IsTimeout(err error) bool {
	if errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
