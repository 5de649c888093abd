//go:build linux

package resp

import (
	"errors"
	"math"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/redisephemeral"
	"github.com/benchrig/benchrig/internal/secret"
)

// The event loop (OpenLoop) against a real redis-server and against fake
// servers for the edge cases.

// testWork is a LoopWork: a claim counter up to limit, every outcome and
// reconnect cause recorded.
type testWork struct {
	mu     sync.Mutex
	next   uint64
	limit  uint64
	outs   []driver.Outcome
	causes []string
}

func (w *testWork) Claim(n int) (uint64, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.next >= w.limit {
		return 0, 0
	}
	k := min(uint64(n), w.limit-w.next)
	seq := w.next
	w.next += k
	return seq, int(k)
}

func (w *testWork) Record(o *driver.Outcome, _ int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.outs = append(w.outs, *o)
}

func (w *testWork) Reconnected(cause string, _ int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.causes = append(w.causes, cause)
}

// classes counts the outcomes by class.
func (w *testWork) classes() map[driver.Class]int {
	m := map[driver.Class]int{}
	for _, o := range w.outs {
		m[o.Class]++
	}
	return m
}

// openLoop opens a loop of conns connections on d, closed at the test's end.
func openLoop(t *testing.T, d *Driver, conns int) *loop {
	t.Helper()
	l, err := d.OpenLoop(testCtx(t), conns)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l.(*loop)
}

// runLoop runs limit requests, pipeline per batch, through a loop of conns
// connections on d; every request is recorded once.
func runLoop(t *testing.T, d *Driver, conns, pipeline int, limit uint64) *testWork {
	t.Helper()
	l := openLoop(t, d, conns)
	w := &testWork{limit: limit}
	if err := l.Run(testCtx(t), pipeline, 0, w); err != nil {
		t.Fatal(err)
	}
	if uint64(len(w.outs)) != limit {
		t.Fatalf("%d outcomes recorded, want %d", len(w.outs), limit)
	}
	return w
}

// calls returns the calls of each command from redis's commandstats.
func calls(t *testing.T, s *redisephemeral.Server) map[string]int64 {
	t.Helper()
	stats, err := s.Info(testCtx(t), "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for k, v := range stats {
		if name, ok := strings.CutPrefix(k, "cmdstat_"); ok {
			v, _, _ = strings.Cut(strings.TrimPrefix(v, "calls="), ",")
			n, _ := strconv.ParseInt(v, 10, 64)
			out[name] = n
		}
	}
	return out
}

// The loop's counts are the server's: every command sent once (INFO
// commandstats calls), hits and nils as redis counted them (keyspace_hits,
// keyspace_misses), for GET, MGET, SET and a custom command, one at a time
// and pipelined, over several connections, with batches cut short at the
// end.
func TestLoopCountsMatchRedis(t *testing.T) {
	s := startRedis(t, redisephemeral.Options{})
	for i := 1; i <= 64; i += 2 {
		redisDo(t, s, "SET", "item:"+strconv.Itoa(i), `{"id":`+strconv.Itoa(i)+`}`)
	}
	for _, tc := range []struct {
		name     string
		cfg      Config
		cmd      string
		pipeline int
		keys     int64 // keys read per request
	}{
		{"GET", Config{Command: CommandGET}, "get", 1, 1},
		{"GET x16", Config{Command: CommandGET}, "get", 16, 1},
		{"MGET 1", Config{Batch: 1}, "mget", 1, 1},
		{"MGET 4 x16", Config{Batch: 4}, "mget", 16, 4},
		{"MGET 64 x3", Config{Batch: 64}, "mget", 3, 64},
		{"SET x16", Config{Command: CommandSET, KeySpace: 1000, KeyTemplate: "set:{id}"}, "set", 16, 0},
		{"INCR x7", Config{Args: []string{"INCR", "counter"}}, "incr", 7, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const limit = 1001
			tc.cfg.Addr = s.Addr()
			if tc.cfg.KeySpace == 0 {
				tc.cfg.KeySpace = 64
			}
			d := newDriver(t, tc.cfg)
			before, err := s.Stats(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			callsBefore := calls(t, s)
			w := runLoop(t, d, 3, tc.pipeline, limit)
			after, err := s.Stats(testCtx(t))
			if err != nil {
				t.Fatal(err)
			}
			if got := calls(t, s)[tc.cmd] - callsBefore[tc.cmd]; got != limit {
				t.Fatalf("redis counted %d %s calls, want %d", got, tc.cmd, limit)
			}
			cl := w.classes()
			if cl[driver.OK]+cl[driver.Miss] != limit {
				t.Fatalf("outcomes %v, want %d OK or misses", cl, limit)
			}
			st, delta := d.Stats(), after.Sub(before)
			if tc.keys > 0 {
				if st.Hits+st.Nils != limit*tc.keys || st.Hits != delta.KeyspaceHits || st.Nils != delta.KeyspaceMisses {
					t.Fatalf("driver %d hits, %d nils; redis %d, %d; want %d keys", st.Hits, st.Nils, delta.KeyspaceHits, delta.KeyspaceMisses, limit*tc.keys)
				}
				if tc.keys == 1 && int64(cl[driver.Miss]) != st.Nils {
					t.Fatalf("%d misses, %d nils", cl[driver.Miss], st.Nils)
				}
			}
			for _, o := range w.outs {
				if o.Bytes <= 0 || o.Done <= 0 {
					t.Fatalf("outcome %+v: no bytes or no time", o)
				}
			}
		})
	}
	if got := redisDo(t, s, "GET", "counter"); got != "1001" {
		t.Fatalf("counter = %s, want 1001", got)
	}
}

// Validation on the loop path: the rows compared with the reference, a
// reference that disagrees caught with the goroutine path's message.
func TestLoopValidation(t *testing.T) {
	s := startRedis(t, redisephemeral.Options{})
	for id := int64(1); id <= rowsKeySpace; id++ {
		if !rowsMissing(id) {
			redisDo(t, s, "SET", `CRUD:bench.public.items:{"id":`+strconv.FormatInt(id, 10)+`}`, seedRow(id))
		}
	}
	cfg := Config{Addr: s.Addr(), KeyTemplate: rowsTemplate, DB: "bench", Batch: 64, KeySpace: rowsKeySpace,
		ValidateSampled: 1, Reference: seedReference}
	d := newDriver(t, cfg)
	w := runLoop(t, d, 2, 4, 40)
	st := d.Stats()
	if cl := w.classes(); cl[driver.OK]+cl[driver.Miss] != 40 || st.Mismatches != 0 || st.Validated != 40*64 || st.Nils == 0 {
		t.Fatalf("outcomes %v, stats %+v", cl, st)
	}
	cfg.Reference = func(id int64) ([]byte, bool) {
		if id == 5 {
			return []byte("not the row"), true
		}
		return seedReference(id)
	}
	cfg.Batch, cfg.Command = 1, CommandGET
	d = newDriver(t, cfg)
	w = runLoop(t, d, 1, 8, 16)
	bad := 0
	for _, o := range w.outs {
		if o.Class == driver.Unexpected && o.Msg == msgValueMismatch {
			bad++
		}
	}
	if st := d.Stats(); bad != 1 || st.Mismatches != 1 {
		t.Fatalf("%d mismatched outcomes, stats %+v: want key 5's", bad, st)
	}
}

// The handshake (AUTH, PING) is the goroutine path's, before the loop
// takes the socket over; a wrong password fails OpenLoop.
func TestLoopAuth(t *testing.T) {
	const pass = "redis-pw-4c1a"
	s := startRedis(t, redisephemeral.Options{Password: secret.New(pass)})
	d := newDriver(t, Config{Addr: s.Addr(), Command: CommandGET, Auth: AuthConfig{Token: secret.New(pass)}})
	if cl := runLoop(t, d, 2, 4, 20).classes(); cl[driver.Miss] != 20 {
		t.Fatalf("outcomes %v, want 20 misses", cl)
	}
	d = newDriver(t, Config{Addr: s.Addr(), Auth: AuthConfig{Token: secret.New("not-the-password")}})
	if _, err := d.OpenLoop(testCtx(t), 1); err == nil || !strings.Contains(err.Error(), "WRONGPASS") || strings.Contains(err.Error(), "not-the-password") {
		t.Fatalf("wrong password: %v", err)
	}
}

// Over TLS the engine keeps a goroutine per connection.
func TestLoopRefusesTLS(t *testing.T) {
	d := newDriver(t, Config{Addr: "127.0.0.1:1", TLS: TLSConfig{Enabled: true, InsecureSkipVerify: true}})
	if _, err := d.OpenLoop(testCtx(t), 1); !errors.Is(err, driver.ErrNoLoop) {
		t.Fatalf("OpenLoop over TLS: %v, want ErrNoLoop", err)
	}
}

// A server error is an Error outcome by its interned code, and the first
// one is kept in full, as on the goroutine path.
func TestLoopServerErrors(t *testing.T) {
	s := startRedis(t, redisephemeral.Options{})
	d := newDriver(t, Config{Addr: s.Addr(), Args: []string{"FLY", "{key}"}})
	w := runLoop(t, d, 2, 4, 9)
	for _, o := range w.outs {
		if o.Class != driver.Error || o.Msg != "ERR" {
			t.Fatalf("outcome %v %q, want error ERR", o.Class, o.Msg)
		}
	}
	if fe := d.Stats().FirstServerError; !strings.HasPrefix(fe, "ERR unknown command") {
		t.Fatalf("FirstServerError = %q", fe)
	}
}

// At the window's deadline the requests in flight are Outstanding; the
// answers that come during the drain are Drained; Run returns within
// DrainGrace.
func TestLoopDrainsAtDeadline(t *testing.T) {
	addr := fakeServer(t, func(nc net.Conn, _, _ int, _ [][]byte) bool {
		time.Sleep(150 * time.Millisecond)
		nc.Write([]byte("$2\r\nok\r\n"))
		return true
	})
	d := newDriver(t, Config{Addr: addr, Command: CommandGET})
	l := openLoop(t, d, 2)
	w := &testWork{limit: math.MaxInt64}
	start := time.Now()
	if err := l.Run(testCtx(t), 1, driver.Now()+int64(50*time.Millisecond), w); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > driver.DrainGrace+time.Second/2 {
		t.Fatalf("Run took %s", el)
	}
	cl := w.classes()
	if cl[driver.Outstanding] != 2 || cl[driver.Drained] != 2 || len(w.outs) != 4 {
		t.Fatalf("outcomes %v, want 2 outstanding then drained", cl)
	}
	// the next window goes on on the same connections
	w = &testWork{limit: 2}
	if err := l.Run(testCtx(t), 1, 0, w); err != nil {
		t.Fatal(err)
	}
	if cl := w.classes(); cl[driver.OK] != 2 || len(w.causes) != 0 {
		t.Fatalf("next window: outcomes %v, reconnects %q", cl, w.causes)
	}
}

// pacedWork is a driver.PacedWork of n requests due every gap from start.
type pacedWork struct {
	testWork
	start, gap int64
	n, next    int
	back       []int // due, waiting
}

func (w *pacedWork) Due(now int64, _ int) (int64, bool) {
	for w.next < w.n && w.start+int64(w.next)*w.gap <= now {
		w.back = append(w.back, w.next)
		w.next++
	}
	if w.next == w.n {
		return math.MaxInt64, len(w.back) > 0
	}
	return w.start + int64(w.next)*w.gap, true
}

func (w *pacedWork) Take(int64) (uint64, bool) {
	if len(w.back) == 0 {
		return 0, false
	}
	seq := w.back[0]
	w.back = w.back[1:]
	return uint64(seq), true
}

// The loop paces a constant rate (evloop's open loop): every request of
// the schedule sent once, when due, and answered.
func TestLoopPaces(t *testing.T) {
	s := startRedis(t, redisephemeral.Options{})
	d := newDriver(t, Config{Addr: s.Addr(), Command: CommandGET})
	l := openLoop(t, d, 3)
	if !l.Paces() {
		t.Fatal("the loop does not pace")
	}
	const n = 200
	w := &pacedWork{start: driver.Now(), gap: int64(500 * time.Microsecond), n: n}
	before := calls(t, s)["get"]
	if err := l.Run(testCtx(t), 1, 0, w); err != nil {
		t.Fatal(err)
	}
	if cl := w.classes(); cl[driver.Miss] != n || len(w.outs) != n {
		t.Fatalf("outcomes %v, want %d misses (no key is set)", cl, n)
	}
	if got := calls(t, s)["get"] - before; got != n {
		t.Fatalf("redis counted %d GETs, want %d", got, n)
	}
}
