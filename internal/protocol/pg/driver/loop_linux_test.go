//go:build linux

package pg

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/protocol/pg/driver/pgtest"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/testenv"
	"github.com/benchrig/benchrig/internal/textclip"
	"github.com/benchrig/benchrig/internal/workload"
)

// testWork is a LoopWork shared by the loops of a test: a claim counter up
// to limit (0: none) and every outcome recorded, by seq order of record.
type testWork struct {
	mu         sync.Mutex
	next       uint64
	limit      uint64
	outs       []driver.Outcome
	reconnects int
}

func (w *testWork) Claim(n int) (uint64, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.limit != 0 && w.next >= w.limit {
		return 0, 0
	}
	k := uint64(n)
	if w.limit != 0 {
		k = min(k, w.limit-w.next)
	}
	seq := w.next
	w.next += k
	return seq, int(k)
}

func (w *testWork) Record(o *driver.Outcome, sent int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.outs = append(w.outs, *o)
}

func (w *testWork) Reconnected(string, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.reconnects++
}

// loopDriver makes a driver on the test server.
func loopDriver(t *testing.T, cfg Config) *Driver {
	t.Helper()
	cfg.DSN = secret.NewDSN(needServer(t).DSN())
	if cfg.Workload.Rows == 0 {
		cfg.Workload.Rows = testRows
	}
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// runLoops opens loops of conns connections each and runs them to limit
// requests, then closes them.
func runLoops(t *testing.T, d *Driver, loops, conns int, limit uint64, hook func(*loop)) *testWork {
	t.Helper()
	ctx := testCtx(t)
	w := &testWork{limit: limit}
	var ls []driver.Loop
	for i := 0; i < loops; i++ {
		l, err := d.OpenLoop(ctx, conns)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		if hook != nil {
			hook(l.(*loop))
		}
		ls = append(ls, l)
	}
	errs := make([]error, len(ls))
	var wg sync.WaitGroup
	for i, l := range ls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = l.Run(ctx, 1, 0, w)
		}()
	}
	wg.Wait()
	for _, l := range ls {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if uint64(len(w.outs)) != limit {
		t.Fatalf("%d outcomes recorded, want %d", len(w.outs), limit)
	}
	return w
}

// loopRowsConfigs are the read configurations the rows tests run.
var loopRowsConfigs = []Config{
	{Path: PreparedOne, Workload: workload.Config{Kind: workload.Uniform, Batch: 3, Seed: 5}},
	{Path: Any, Workload: workload.Config{Kind: workload.Zipf, Batch: 16, Seed: 7}},
	{Path: Any, Form: FormArray, Workload: workload.Config{Kind: workload.Zipf, Batch: 16, Seed: 7}},
	{Path: Any, Form: FormIn, Workload: workload.Config{Kind: workload.Uniform, Batch: 60, Seed: 9}},
}

func TestLoopRowsMatchFetch(t *testing.T) {
	for _, cfg := range loopRowsConfigs {
		t.Run(cfg.WithDefaults().Label(), func(t *testing.T) {
			d := loopDriver(t, cfg)
			loopRowsMatch(t, d, d)
		})
	}
}

// TestLoopRowsSplitAnywhere: the same reads through a proxy that relays
// every message in three writes (pgtest.Fragment), so the loop's reads end
// in headers, lengths and values: every request is answered, with the rows
// Fetch reads.
func TestLoopRowsSplitAnywhere(t *testing.T) {
	p := hostileProxy(t, pgtest.Fragment, 0)
	for _, cfg := range loopRowsConfigs[:2] { // one row a statement; many rows a statement
		t.Run(cfg.WithDefaults().Label(), func(t *testing.T) {
			direct := loopDriver(t, cfg)
			cfg.DSN = secret.NewDSN(p.DSN())
			cfg.Workload.Rows = testRows
			d, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			before := p.Fragmented.Load()
			loopRowsMatch(t, d, direct)
			if p.Fragmented.Load() == before {
				t.Error("the proxy split no message: the test read every reply whole")
			}
		})
	}
}

// loopRowsMatch runs 60 reads of d on a loop of 3 connections and checks
// each one's rows against Fetch's on a connection of direct's.
func loopRowsMatch(t *testing.T, d, direct *Driver) {
	t.Helper()
	ref, err := direct.OpenConn(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	checked := 0
	w := runLoops(t, d, 1, 3, 60, func(l *loop) {
		// What the loop held when a request timed out (it failed once in
		// CI: one request of 60, 10 s, not reproduced).
		l.onTimeout = func(c *lconn) {
			t.Logf("connection %d timed out: seq %d, key %d of %d, %d rows of it, %d bytes unparsed %q, %d bytes unwritten, backend %d",
				c.I, c.seq, c.ki, len(c.keys), c.n, len(c.rbuf), textclip.Cut(string(c.rbuf), 80), len(c.Out.Pending), c.pid)
		}
		// on the loop's goroutine: Errorf, never Fatal
		l.onRows = func(seq uint64, rows []any) {
			want, err := fetchRows(testCtx(t), d, ref, seq)
			if err != nil {
				t.Errorf("seq %d: Fetch: %v", seq, err)
				return
			}
			if !reflect.DeepEqual(rows, want) {
				t.Errorf("seq %d: loop rows %v, Fetch %v", seq, rows, want)
			}
			checked++
		}
	})
	for _, o := range w.outs {
		if o.Class != driver.OK || o.Bytes <= 0 {
			t.Errorf("outcome %+v, want OK with bytes", o)
		}
	}
	if checked != 60 {
		t.Errorf("%d reads compared, want 60", checked)
	}
}

// fetchRows is what Fetch on ref reads for the keys of d's request seq.
func fetchRows(ctx context.Context, d *Driver, ref *Conn, seq uint64) ([]any, error) {
	_, keys := d.Workload().Keys(seq, nil)
	ptrs := make([]*int64, len(keys))
	for i := range keys {
		ptrs[i] = &keys[i]
	}
	return ref.Fetch(ctx, ptrs)
}

func TestLoopMixedCounts(t *testing.T) {
	s := needServer(t)
	ctx := testCtx(t)
	ctl := controlConn(t, ctx, s)
	ds := pgclient.Dataset{Rows: testRows, PayloadBytes: testPayload}
	if err := pgclient.ResetDataset(ctx, ctl, ds); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := pgclient.ResetDataset(ctx, ctl, ds); err != nil {
			t.Error(err)
		}
	}()
	before, err := pgclient.TakeStats(ctx, ctl)
	if err != nil {
		t.Fatal(err)
	}
	d := loopDriver(t, Config{Path: Any, Workload: workload.Config{Kind: workload.Mixed, Batch: 4, WriteEvery: 3}})
	const n = 300
	w := runLoops(t, d, 2, 3, n, nil)
	var got [2]int
	for _, o := range w.outs {
		if o.Class != driver.OK {
			t.Fatalf("outcome %+v, want OK", o)
		}
		got[o.Op]++
	}
	var want [2]int
	for seq := uint64(0); seq < n; seq++ {
		want[d.Workload().Index(d.Workload().Op(seq))]++
	}
	if got != want {
		t.Errorf("ops %v (%v), want %v", got, d.Ops(), want)
	}
	writes := int64(want[d.Workload().Index(workload.Write)])
	delta := waitStats(t, ctl, before, func(d pgclient.Stats) bool { return d.TupUpdated >= writes })
	if delta.TupUpdated != writes {
		t.Errorf("tup_updated delta %d, want %d", delta.TupUpdated, writes)
	}
}

func TestLoopServerErrorKeepsConnection(t *testing.T) {
	d := loopDriver(t, Config{Workload: workload.Config{Kind: workload.Writes},
		UpdateSQL: "UPDATE items SET revision = revision WHERE id = $1 AND 1 / (id - id) = 1"})
	w := runLoops(t, d, 1, 1, 5, nil)
	for _, o := range w.outs {
		if o.Class != driver.Error || !strings.HasPrefix(o.Msg, "SQLSTATE 22012: division by zero") {
			t.Errorf("outcome %+v, want an Error with SQLSTATE 22012", o)
		}
	}
	if w.reconnects != 0 {
		t.Errorf("%d reconnects, want 0: a server error leaves the connection usable", w.reconnects)
	}
}

func TestLoopTimeoutReplacesConnection(t *testing.T) {
	// Even keys sleep past the timeout, twice as long as it. The timeout
	// bounds the reconnect too (a connect and its prepares): on a loaded
	// machine 100 ms was not enough for it, so it is long against what the
	// load adds (testenv.Patience).
	timeout := testenv.Patience(500*time.Millisecond, 5*time.Second)
	d := loopDriver(t, Config{Workload: workload.Config{Kind: workload.Writes}, Timeout: timeout,
		UpdateSQL: fmt.Sprintf("UPDATE items SET revision = revision WHERE id = $1 AND (SELECT true FROM pg_sleep(CASE WHEN $1 %% 2 = 0 THEN %.3f ELSE 0 END))", 2*timeout.Seconds())})
	w := runLoops(t, d, 1, 1, 6, nil)
	timeouts, ok := 0, 0
	for _, o := range w.outs {
		switch {
		case o.Class == driver.Timeout && o.Msg == "timeout":
			timeouts++
		case o.Class == driver.OK:
			ok++
		default:
			t.Errorf("outcome %+v", o)
		}
	}
	if timeouts == 0 || ok == 0 || w.reconnects != timeouts {
		t.Errorf("%d timeouts, %d OK, %d reconnects: want both outcomes and a reconnect per timeout", timeouts, ok, w.reconnects)
	}
}

func TestLoopCancelReturnsPromptly(t *testing.T) {
	d := loopDriver(t, Config{Path: PreparedOne, Workload: workload.Config{Kind: workload.Uniform, Batch: 1}})
	l, err := d.OpenLoop(testCtx(t), 2)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	w := &testWork{}
	err = l.Run(ctx, 1, 0, w)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Run: %v, want context.Canceled", err)
	}
	if len(w.outs) == 0 {
		t.Error("no request completed before the cancellation")
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("Run returned %s after a cancellation at 200ms", el)
	}
}

func TestLoopUnsupportedFallsBack(t *testing.T) {
	for _, cfg := range []Config{
		{Path: PreparedOne, BatchMode: Pipeline},
		// A key array the hot path does not encode (text).
		{Path: SQL, SQL: `SELECT array_to_json(array(SELECT row_to_json(t) FROM unnest(string_to_array($1, ',')::bigint[]) WITH ORDINALITY u(id, n) LEFT JOIN items t USING (id) ORDER BY n))`},
	} {
		d := loopDriver(t, cfg)
		l, err := d.OpenLoop(testCtx(t), 1)
		if !errors.Is(err, driver.ErrNoLoop) {
			if l != nil {
				l.Close()
			}
			t.Errorf("%s: OpenLoop error %v, want driver.ErrNoLoop", cfg.Label(), err)
		}
	}
}

// TestLoopBackends: Touch runs one operation per connection, one
// connection at a time, and PIDs names the loop's backends, also after
// Close.
func TestLoopBackends(t *testing.T) {
	s := needServer(t)
	ctx := testCtx(t)
	d := loopDriver(t, Config{Path: Any, Workload: workload.Config{Kind: workload.Hot, Batch: 4}})
	l, err := d.OpenLoop(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	b := l.(Backends)
	if b.LastDone() != 0 {
		t.Errorf("LastDone %d before any request", b.LastDone())
	}
	lp := l.(*loop)
	var seqs []uint64
	lp.onRows = func(seq uint64, _ []any) {
		if lp.Inflight != 1 {
			t.Errorf("%d requests in flight during Touch, want 1", lp.Inflight)
		}
		seqs = append(seqs, seq)
	}
	before := driver.Now()
	if err := b.Touch(ctx); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seqs, []uint64{0, 0, 0}) {
		t.Errorf("Touch read seqs %v, want seq 0 on each of 3 connections", seqs)
	}
	if b.LastDone() < before {
		t.Errorf("LastDone %d, before Touch %d", b.LastDone(), before)
	}

	ctl, err := pgclient.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close(ctx)
	pids := b.PIDs()
	var n int
	if err := ctl.QueryRow(ctx, "SELECT count(*)::int FROM pg_stat_activity WHERE pid = ANY($1)", pids).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if len(pids) != 3 || n != 3 {
		t.Errorf("PIDs %v, %d of them in pg_stat_activity: want 3 live backends", pids, n)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if after := b.PIDs(); !reflect.DeepEqual(after, pids) {
		t.Errorf("PIDs after Close %v, want %v", after, pids)
	}
}
