//go:build linux

package pg

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/protocol/pg/driver/pgtest"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/workload"
)

// hostileGuard is the tests' own bound: generous, it fails a test only on
// a hang. Every assertion that benchrig bounded a wait is that the call
// returned while this context was still live (its own deadline fired).
const hostileGuard = 90 * time.Second

func hostileProxy(t *testing.T, b pgtest.Behaviour, after int64) *pgtest.Proxy {
	t.Helper()
	p, err := pgtest.Start(needServer(t).DSN(), b, pgtest.Options{After: after})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// Every connection benchrig opens — a benchmark connection (OpenConn, an
// event loop's), the control connection (Connect), the pre-flight's — is
// bounded from the startup message on, in time and in message size, against
// a server that misbehaves during the startup (issue 26, items 2 and 3).
func TestHostileConnectBounded(t *testing.T) {
	needServer(t)
	opens := []struct {
		name string
		open func(ctx context.Context, dsn string) error
	}{
		{"OpenConn", func(ctx context.Context, dsn string) error {
			d, err := New(Config{DSN: secret.NewDSN(dsn), Workload: workload.Config{Rows: testRows}})
			if err != nil {
				return err
			}
			c, err := d.OpenConn(ctx)
			if err == nil {
				c.Close()
			}
			return err
		}},
		{"OpenLoop", func(ctx context.Context, dsn string) error {
			d, err := New(Config{DSN: secret.NewDSN(dsn), Path: Any, Workload: workload.Config{Rows: testRows}})
			if err != nil {
				return err
			}
			l, err := d.OpenLoop(ctx, 2)
			if err == nil {
				l.Close()
			}
			return err
		}},
		{"Connect", func(ctx context.Context, dsn string) error {
			c, err := Connect(ctx, secret.NewDSN(dsn))
			if err == nil {
				c.Close(context.Background())
			}
			return err
		}},
		{"Preflight", func(ctx context.Context, dsn string) error {
			return Preflight(ctx, secret.NewDSN(dsn), []Config{{Path: Any, Workload: workload.Config{Rows: testRows}}})
		}},
	}
	cases := []struct {
		b    pgtest.Behaviour
		want string // in the error
	}{
		{pgtest.AuthOKThenSilent, "timeout"},
		{pgtest.NoticeFlood, "timeout"},
		{pgtest.HugeParameter, "exceeds"},
		{pgtest.UnsupportedAuth, "authentication"},
		{pgtest.CloseAfterAuth, "EOF"},
	}
	for _, tc := range cases {
		for _, o := range opens {
			t.Run(string(tc.b)+"/"+o.name, func(t *testing.T) {
				t.Parallel()
				p := hostileProxy(t, tc.b, 0)
				ctx, cancel := context.WithTimeout(context.Background(), hostileGuard)
				defer cancel()
				start := time.Now()
				err := o.open(ctx, p.DSN())
				took := time.Since(start)
				if ctx.Err() != nil {
					t.Fatalf("%s returned only when the test's own %s guard expired: %v", o.name, hostileGuard, err)
				}
				if err == nil {
					t.Fatalf("%s against %s succeeded", o.name, tc.b)
				}
				if !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error %q does not say %q", err, tc.want)
				}
				if tc.b == pgtest.HugeParameter {
					if !strings.Contains(err.Error(), "bytes exceeds") || !strings.Contains(err.Error(), "67108864") {
						t.Errorf("error %q does not name the bound", err)
					}
					// The client refused the message at its header: what
					// went out is what the socket buffers took, far below
					// the 1 GiB the message claimed.
					if n := p.HugeBytes.Load(); n >= DefaultMaxMessage {
						t.Errorf("%d bytes of the 1 GiB message were read", n)
					}
				}
				t.Logf("%s: %s after %s", o.name, err, took.Round(time.Millisecond))
			})
		}
	}
}

// hostileWork records outcomes from any goroutine, claims without end.
type hostileWork struct {
	mu   sync.Mutex
	next uint64
	outs []driver.Outcome
}

func (w *hostileWork) Claim(n int) (uint64, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	seq := w.next
	w.next += uint64(n)
	return seq, n
}

func (w *hostileWork) Record(o *driver.Outcome, _ int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.outs = append(w.outs, *o)
}

func (w *hostileWork) Reconnected(string, int) {}

// counts returns the outcomes by class and by message.
func (w *hostileWork) counts() (map[driver.Class]int, map[string]int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	byClass, byMsg := map[driver.Class]int{}, map[string]int{}
	for _, o := range w.outs {
		byClass[o.Class]++
		if o.Class != driver.OK {
			byMsg[o.Msg]++
		}
	}
	return byClass, byMsg
}

// Against a server that goes bad after 20 requests, every wait of the
// event loop and of the blocking connection is bounded — a window's Run,
// the statistics' Touch and the plan readings — and a reply that is not
// what was asked for is an error, never a success (issue 26, items 2 and
// 3).
func TestHostileMidRunBounded(t *testing.T) {
	needServer(t)
	cases := []struct {
		b    pgtest.Behaviour
		want string // a message of the failures ("" any)
	}{
		{pgtest.MidRunStall, ""},
		{pgtest.MidRunNoticeFlood, ""},
		{pgtest.SlowDrip, ""},
		{pgtest.MidRunGarbage, ""},
		{pgtest.BadMessageType, "unknown backend message type 'q'"},
		{pgtest.DoubleReply, "backend message with no request outstanding"},
		{pgtest.HugeRow, "(DataRow) of 1073741824 bytes exceeds pg.max_message"},
		{pgtest.MidRunClose, ""},
	}
	for _, tc := range cases {
		t.Run(string(tc.b), func(t *testing.T) {
			t.Parallel()
			p := hostileProxy(t, tc.b, 20)
			d, err := New(Config{DSN: secret.NewDSN(p.DSN()), Path: Any, Timeout: time.Second,
				Workload: workload.Config{Rows: testRows, Batch: 4}})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), hostileGuard)
			defer cancel()
			ml, err := d.OpenLoop(ctx, 2)
			if err != nil {
				t.Fatal(err)
			}
			defer ml.Close()
			l := ml.(*loop)
			w := &hostileWork{}
			if err := l.Run(ctx, 1, driver.Now()+int64(time.Second), w); err != nil && ctx.Err() == nil {
				t.Logf("Run: %v", err)
			}
			if ctx.Err() != nil {
				t.Fatalf("the loop's Run returned only at the test's guard")
			}
			if !p.Triggered() {
				t.Fatalf("the proxy never misbehaved: %d outcomes", len(w.outs))
			}
			_ = l.Touch(ctx)
			_, _ = l.PlanStats(ctx)
			if ctx.Err() != nil {
				t.Fatalf("Touch or PlanStats returned only at the test's guard")
			}
			byClass, byMsg := w.counts()
			faithful := 20
			if tc.b == pgtest.DoubleReply {
				faithful += 2 // the first copy of a reply is the reply
			}
			if byClass[driver.OK] > faithful {
				t.Errorf("%d requests OK through a proxy that relayed only %d faithfully: %v", byClass[driver.OK], faithful, byMsg)
			}
			if tc.want != "" && !hasMsg(byMsg, tc.want) {
				t.Errorf("no failure %q: %v", tc.want, byMsg)
			}

			// The blocking connection: Do, PlanStats, Fetch.
			c, err := d.OpenConn(ctx)
			if err != nil {
				t.Logf("OpenConn after the trigger: %v", err)
				return
			}
			defer c.Close()
			out := make([]driver.Outcome, 1)
			_ = c.Do(ctx, []driver.Request{{Seq: 1}}, out)
			_, _ = c.PlanStats(ctx)
			one := int64(1)
			_, _ = c.Fetch(ctx, []*int64{&one})
			if ctx.Err() != nil {
				t.Fatalf("the blocking connection returned only at the test's guard")
			}
			if out[0].Class == driver.OK && tc.b != pgtest.DoubleReply {
				t.Errorf("a request through %s was OK", tc.b)
			}
		})
	}
}

// hasMsg reports whether a message of byMsg contains want.
func hasMsg(byMsg map[string]int, want string) bool {
	for m := range byMsg {
		if strings.Contains(m, want) {
			return true
		}
	}
	return false
}
