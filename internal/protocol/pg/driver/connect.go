package pg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/secret"
)

// Every PostgreSQL connection benchrig opens (the benchmark's, and the
// control, statistics and pre-flight connections) is opened through Bound
// or Connect: its connect, from the dial through the startup message to
// the first ReadyForQuery, is bounded in time (ConnectTimeout, or the DSN's
// connect_timeout), and every backend message it reads, from the first
// answer to the startup message on, is bounded in size (a max_message cap):
// a longer one fails the connection as soon as its header arrives, naming
// the bound. The statements run on them are bounded by contexts with
// deadlines (OpTimeout, pg.timeout); the event loops check their own
// framing against the same cap.

// ConnectTimeout bounds opening one connection (dial, startup,
// authentication, up to the server's first ReadyForQuery) when the DSN
// sets no connect_timeout: a server that accepts and then says nothing, or
// floods notices, fails the connect within it.
const ConnectTimeout = 5 * time.Second

// OpTimeout bounds one statement of benchrig's own (a pre-flight check, a
// statistics or plan reading) on a control connection.
const OpTimeout = 10 * time.Second

// Bound sets the connect deadline (ConnectTimeout unless the DSN set
// connect_timeout) and the message cap maxMessage (bytes, header
// included; ≤ 0: DefaultMaxMessage) on cc.
func Bound(cc *pgx.ConnConfig, maxMessage int64) {
	if maxMessage <= 0 {
		maxMessage = DefaultMaxMessage
	}
	if cc.ConnectTimeout <= 0 {
		cc.ConnectTimeout = ConnectTimeout
	}
	// pgproto3 bounds the body, the message less its 4-byte length.
	cc.MaxProtocolMessageBodyLen = int(maxMessage - 4)
}

// Connect opens one connection to dsn for benchrig's own statements
// (control, statistics, pre-flight), bounded as Bound says with
// DefaultMaxMessage. Errors name the redacted DSN, never the password, and
// a message over the cap says so.
func Connect(ctx context.Context, dsn secret.DSN) (*pgx.Conn, error) {
	cc, err := pgclient.ParseDSN(dsn.Reveal())
	if err != nil {
		return nil, err
	}
	Bound(cc, DefaultMaxMessage)
	return connectConfig(ctx, cc, dsn, "the control connection's bound")
}

// connectConfig opens a connection with a bounded config; what names the
// cap in an error ("pg.max_message").
func connectConfig(ctx context.Context, cc *pgx.ConnConfig, dsn secret.DSN, what string) (*pgx.Conn, error) {
	conn, err := pgclient.ConnectConfig(ctx, cc, dsn.Reveal())
	if err != nil {
		return nil, capError(err, what)
	}
	return conn, nil
}

// capError makes a connect error caused by a message over the cap say so
// in words (pgconn's says "invalid body length").
func capError(err error, what string) error {
	var long *pgproto3.ExceededMaxBodyLenErr
	if errors.As(err, &long) {
		return fmt.Errorf("%w: a backend message of %d bytes exceeds %s of %d bytes", err, long.ActualBodyLen+4, what, long.MaxExpectedBodyLen+4)
	}
	return err
}

// opCtx is ctx bounded by d (OpTimeout when d ≤ 0).
func opCtx(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		d = OpTimeout
	}
	return context.WithTimeout(ctx, d)
}
