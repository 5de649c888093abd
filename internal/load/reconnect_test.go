package load

import (
	"context"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/result"
)

// keepAliveDriver's connections answer `answers` requests each, then say
// their keep-alive connection ended before the next response (a Reconnect
// with Retry), as a server closing idle connections does.
type keepAliveDriver struct {
	answers int
	written bool
	opens   int
}

func (d *keepAliveDriver) Name() string     { return "keepalive" }
func (d *keepAliveDriver) Ops() []string    { return []string{"request"} }
func (d *keepAliveDriver) MaxPipeline() int { return 1 }
func (d *keepAliveDriver) Open(context.Context, int) (driver.Conn, error) {
	d.opens++
	return &keepAliveConn{d: d}, nil
}

type keepAliveConn struct {
	d    *keepAliveDriver
	done int
}

func (c *keepAliveConn) Do(_ context.Context, reqs []driver.Request, out []driver.Outcome) error {
	if c.done == c.d.answers {
		time.Sleep(2 * time.Millisecond) // the dead connection costs time
		out[0] = driver.Outcome{Class: driver.Error, Done: driver.Now(), Msg: "connection closed by server"}
		return &driver.Reconnect{Cause: driver.CauseIdleClosed, Retry: true, Written: c.d.written}
	}
	c.done++
	out[0] = driver.Outcome{Class: driver.OK, Done: driver.Now()}
	return nil
}

func (c *keepAliveConn) Close() error { return nil }

func TestReconnectResendOnce(t *testing.T) {
	for _, tc := range []struct {
		name            string
		answers         int
		written         bool
		ok, errs, resnt int64
	}{
		// each connection answers 2: the 3rd is re-sent on a new one
		{"re-sent", 2, true, 30, 0, 14},
		// never written (found closed before the send): sent, not re-sent
		{"not written", 2, false, 30, 0, 0},
		// a new connection that fails too: re-sent once, then an error
		{"once only", 0, true, 0, 30, 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &keepAliveDriver{answers: tc.answers, written: tc.written}
			e, err := New(Config{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1}}, d)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.Open(context.Background()); err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			res, err := e.Run(context.Background(), Window{Requests: 30})
			if err != nil {
				t.Fatal(err)
			}
			if res.Requests != tc.ok || res.Errors != tc.errs || res.Resent != tc.resnt || res.Sent != 30 {
				t.Errorf("%d ok, %d errors, %d re-sent, %d sent; want %d, %d, %d, 30: %v", res.Requests, res.Errors, res.Resent, res.Sent, tc.ok, tc.errs, tc.resnt, res.Messages)
			}
			var sum int64
			for _, n := range res.ReconnectCauses {
				sum += n
			}
			if sum != res.Reconnects || res.ReconnectCauses[driver.CauseIdleClosed] == 0 {
				t.Errorf("reconnects %d, by cause %v", res.Reconnects, res.ReconnectCauses)
			}
			// every 3rd request first waited 2 ms on the dead connection:
			// timed from its first send, its latency is at least that (a
			// lower bound that holds however slow the machine is)
			if tc.ok > 0 && res.Latency.MaxUS < 2000 {
				t.Errorf("max latency %d µs: a re-sent request is not timed from its first send", res.Latency.MaxUS)
			}
		})
	}
}
