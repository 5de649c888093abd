package http

import (
	"errors"
	"fmt"

	"github.com/benchrig/benchrig/internal/driver"
)

// Framing violations: the response's length cannot be trusted, so neither
// can anything after it on the connection. Each is counted as an error by
// its own message (failure), and the connection is replaced.
var (
	// errConflictingLength: two Content-Length headers with different
	// values (RFC 9112 §6.3: unrecoverable).
	errConflictingLength = fmt.Errorf("%w: conflicting Content-Length", errMalformed)
	// errLengthAndChunked: Content-Length beside chunked
	// Transfer-Encoding, the shape of response splitting (RFC 9112 §6.3:
	// "ought to be handled as an error").
	errLengthAndChunked = fmt.Errorf("%w: Content-Length with chunked Transfer-Encoding", errMalformed)
	// errUnsolicited: bytes arrived with no request outstanding, after
	// the last response of a batch (body bytes past its Content-Length,
	// a second response) or on an idle connection.
	errUnsolicited = errors.New("unsolicited bytes on idle connection")
)

// failure is how an error that ends a connection is counted, the same way
// by the blocking connections and the event loop: its class and message.
func failure(err error) (driver.Class, string) {
	switch {
	case driver.IsTimeout(err):
		return driver.Timeout, "timeout"
	case errors.Is(err, errConflictingLength):
		return driver.Error, "conflicting Content-Length"
	case errors.Is(err, errLengthAndChunked):
		return driver.Error, "Content-Length with chunked Transfer-Encoding"
	case errors.Is(err, errUnsolicited):
		return driver.Error, errUnsolicited.Error()
	case errors.Is(err, errTooManyHeaders):
		return driver.Error, fmt.Sprintf("more than %d header lines", maxHeaderLines)
	case errors.Is(err, errHeadersTooLarge):
		return driver.Error, "header section longer than 1 MiB"
	case errors.Is(err, errMalformed):
		return driver.Error, "malformed response"
	}
	return driver.Error, driver.Msg(err)
}

// checkFraming applies the rules that need every header: called once the
// blank line ends them.
func checkFraming(length int64, chunked bool) error {
	if chunked && length >= 0 {
		return errLengthAndChunked
	}
	return nil
}
