package pgclient

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// WireProbeTimeout bounds ProbeWire's wait for the server's answer.
const WireProbeTimeout = 2 * time.Second

// sslRequestCode is the SSLRequest message's protocol code (1234.5679).
const sslRequestCode = 80877103

// ProbeWire asks the first server of cfg whether it speaks PostgreSQL's
// protocol before a real connection is tried: it sends an SSLRequest,
// which every PostgreSQL server answers at once with one byte ('S' or
// 'N', or an ErrorResponse 'E'), and closes. A RESP or HTTP server, or
// one that says nothing, is named in a clear error within
// WireProbeTimeout, where pgx would wait out its whole connect timeout
// and then report a TLS timeout. A server it cannot reach is left for the
// real connection to report (nil).
func ProbeWire(ctx context.Context, cfg *pgx.ConnConfig) error {
	network, addr := "tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port)))
	if strings.HasPrefix(cfg.Host, "/") {
		network, addr = "unix", filepath.Join(cfg.Host, ".s.PGSQL."+strconv.Itoa(int(cfg.Port)))
	}
	ctx, cancel := context.WithTimeout(ctx, WireProbeTimeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { c.SetDeadline(time.Now()) }) // Ctrl-C
	defer stop()
	msg := make([]byte, 8)
	binary.BigEndian.PutUint32(msg, 8)
	binary.BigEndian.PutUint32(msg[4:], sslRequestCode)
	if _, err := c.Write(msg); err != nil {
		return nil
	}
	buf := make([]byte, 64)
	n, err := c.Read(buf)
	return judgeWireAnswer(addr, buf[:n], err, ctx.Err())
}

// judgeWireAnswer names what answered an SSLRequest: nil for PostgreSQL.
func judgeWireAnswer(addr string, got []byte, readErr, ctxErr error) error {
	if len(got) == 0 {
		switch {
		case ctxErr == context.Canceled:
			return ctxErr
		case errors.Is(readErr, os.ErrDeadlineExceeded) || ctxErr != nil:
			return fmt.Errorf("postgres: %s accepted a connection but did not answer PostgreSQL's SSLRequest within %s: it does not speak PostgreSQL's protocol (a Redis or HTTP server, waiting for a line?); check the DSN's host and port", addr, WireProbeTimeout)
		default:
			return fmt.Errorf("postgres: %s closed the connection without answering PostgreSQL's SSLRequest: it does not speak PostgreSQL's protocol; check the DSN's host and port", addr)
		}
	}
	switch got[0] {
	case 'S', 'N':
		if len(got) == 1 {
			return nil
		}
	case 'E':
		return nil // an ErrorResponse: PostgreSQL (or a proxy) refusing it
	}
	what := "a server that is not PostgreSQL"
	switch {
	case got[0] == '-' || got[0] == '+' || got[0] == '$' || got[0] == '*' || got[0] == ':':
		what = "a RESP (Redis-protocol) server"
	case strings.HasPrefix(string(got), "HTTP/"):
		what = "an HTTP server"
	}
	return fmt.Errorf("postgres: %s is %s: it answered PostgreSQL's SSLRequest with %q; check the DSN's host and port", addr, what, got)
}
