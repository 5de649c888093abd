package resp

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/redisephemeral"
	"github.com/benchrig/benchrig/internal/resp/resptest"
)

// The hot path (build 64 keys, write, parse the MGET reply, count) allocates
// nothing once buffers have grown. Measured against a real redis-server,
// which allocates in its own process, so only this process is counted.
func TestMGET64ZeroAllocAgainstRedis(t *testing.T) {
	s := startRedis(t, redisephemeral.Options{})
	for i := 1; i <= 128; i += 2 {
		redisDo(t, s, "SET", "item:"+strconv.Itoa(i), `{"id":`+strconv.Itoa(i)+`}`)
	}
	d := newDriver(t, Config{Addr: s.Addr(), Batch: 64, Timeout: 10 * time.Second})
	c := open(t, d)
	reqs := make([]driver.Request, 4)
	out := make([]driver.Outcome, 4)
	ctx := testCtx(t)
	seq := uint64(0)
	var err error
	run := func() {
		for i := range reqs {
			reqs[i].Seq = seq
			seq++
		}
		if e := c.Do(ctx, reqs, out); e != nil {
			err = e
		}
	}
	for i := 0; i < 20; i++ { // warm up
		run()
	}
	allocs := testing.AllocsPerRun(200, run)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out {
		if o.Class != driver.OK && o.Class != driver.Miss { // keys left missing on purpose
			t.Fatalf("outcome %v %q", o.Class, o.Msg)
		}
	}
	if allocs != 0 {
		t.Fatalf("%.2f allocations per Do of 4 pipelined 64-key MGETs, want 0", allocs)
	}
	if st := d.Stats(); st.Hits == 0 || st.Nils == 0 || st.Hits != st.Nils {
		t.Fatalf("stats %+v: want as many hits as nils (odd keys set)", st)
	}
}

// The same against the in-process test server, so the property is checked
// where redis-server is not installed. The server's goroutine runs in this
// process, so its allocations would count too: it has none on this path.
func TestMGET64ZeroAllocAgainstTestServer(t *testing.T) {
	srv := startTestServer(t, resptest.Options{})
	for i := 1; i <= 128; i += 2 {
		srv.Set("item:"+strconv.Itoa(i), []byte(`{"id":`+strconv.Itoa(i)+`}`))
	}
	d := newDriver(t, Config{Addr: srv.Addr(), Batch: 64, Timeout: 10 * time.Second})
	c := open(t, d)
	reqs := make([]driver.Request, 4)
	out := make([]driver.Outcome, 4)
	ctx := testCtx(t)
	seq := uint64(0)
	var err error
	run := func() {
		for i := range reqs {
			reqs[i].Seq = seq
			seq++
		}
		if e := c.Do(ctx, reqs, out); e != nil {
			err = e
		}
	}
	for i := 0; i < 20; i++ {
		run()
	}
	allocs := testing.AllocsPerRun(200, run)
	if err != nil {
		t.Fatal(err)
	}
	if allocs != 0 {
		t.Fatalf("%.2f allocations per Do of 4 pipelined 64-key MGETs, want 0", allocs)
	}
}

// zeroAllocDo fails unless Do of 4 pipelined requests on a connection of d
// allocates nothing once warmed up; it returns the last outcomes.
func zeroAllocDo(t *testing.T, d *Driver) []driver.Outcome { return zeroAllocDoN(t, d, 4) }

// zeroAllocDoN fails unless Do of depth pipelined requests on a connection
// of d allocates nothing once warmed up; it returns the last outcomes.
func zeroAllocDoN(t *testing.T, d *Driver, depth int) []driver.Outcome {
	t.Helper()
	c := open(t, d)
	reqs := make([]driver.Request, depth)
	out := make([]driver.Outcome, depth)
	ctx := testCtx(t)
	seq := uint64(0)
	var err error
	run := func() {
		for i := range reqs {
			reqs[i].Seq = seq
			seq++
		}
		if e := c.Do(ctx, reqs, out); e != nil {
			err = e
		}
	}
	for i := 0; i < 20; i++ {
		run()
	}
	allocs := testing.AllocsPerRun(200, run)
	if err != nil {
		t.Fatal(err)
	}
	if allocs != 0 {
		t.Fatalf("%.2f allocations per Do of %d pipelined %s requests (batch %d), want 0", allocs, depth, d.cfg.Command, d.cfg.Batch)
	}
	return out
}

// The peers scripts' cases allocate nothing per request either, against a
// real redis-server and the test server: GET one at a time and pipelined
// ×16, MGET of 1 key, and the seeds' JSON rows validated at 1 key and in
// pipelined GETs; every outcome a hit or an expected nil, every validated
// value equal to the reference.
func TestPeerCasesZeroAlloc(t *testing.T) {
	type tc struct {
		name  string
		cfg   Config
		depth int
	}
	plain := func(addr string) []tc {
		return []tc{
			{"GET", Config{Addr: addr, Command: CommandGET, KeySpace: 128}, 1},
			{"GET pipelined x16", Config{Addr: addr, Command: CommandGET, KeySpace: 128}, 16},
			{"MGET 1", Config{Addr: addr, Batch: 1, KeySpace: 128}, 1},
			{"MGET 64 pipelined x2", Config{Addr: addr, Batch: 64, KeySpace: 128}, 2},
			{"JSON rows MGET 1 validated", Config{Addr: addr, KeyTemplate: rowsTemplate, DB: "bench", Batch: 1,
				KeySpace: rowsKeySpace, ValidateSampled: 1, Reference: seedReference}, 1},
			{"JSON rows GET pipelined x16 validated", Config{Addr: addr, Command: CommandGET, KeyTemplate: rowsTemplate, DB: "bench",
				KeySpace: rowsKeySpace, ValidateSampled: 1, Reference: seedReference}, 16},
		}
	}
	fill := func(set func(key, val string)) {
		for i := 1; i <= 128; i += 2 {
			set("item:"+strconv.Itoa(i), `{"id":`+strconv.Itoa(i)+`}`)
		}
		for id := int64(1); id <= rowsKeySpace; id++ {
			if !rowsMissing(id) {
				set(fmt.Sprintf(`CRUD:bench.public.items:{"id":%d}`, id), seedRow(id))
			}
		}
	}
	check := func(t *testing.T, c tc) {
		c.cfg.Timeout = 10 * time.Second
		d := newDriver(t, c.cfg)
		for _, o := range zeroAllocDoN(t, d, c.depth) {
			if o.Class != driver.OK && o.Class != driver.Miss { // keys left missing on purpose
				t.Fatalf("outcome %v %q", o.Class, o.Msg)
			}
		}
		st := d.Stats()
		if st.Hits == 0 || st.Nils == 0 || st.Mismatches != 0 || (c.cfg.ValidateSampled > 0 && st.Validated != st.Hits+st.Nils) {
			t.Fatalf("stats %+v: want hits and nils, every value validated when asked, none differing", st)
		}
	}
	t.Run("redis-server", func(t *testing.T) {
		s := startRedis(t, redisephemeral.Options{})
		fill(func(k, v string) { redisDo(t, s, "SET", k, v) })
		for _, c := range plain(s.Addr()) {
			t.Run(c.name, func(t *testing.T) { check(t, c) })
		}
	})
	t.Run("test server", func(t *testing.T) {
		srv := startTestServer(t, resptest.Options{})
		fill(func(k, v string) { srv.Set(k, []byte(v)) })
		for _, c := range plain(srv.Addr()) {
			t.Run(c.name, func(t *testing.T) { check(t, c) })
		}
	})
}

// The seeds' case allocates nothing either: 64 keys in the template form,
// ~165-byte JSON rows, every value validated against the reference, hits
// and nils counted; against a real redis-server and the test server.
func TestSeedRows64ZeroAlloc(t *testing.T) {
	fill := func(set func(key, val string)) {
		for id := int64(1); id <= rowsKeySpace; id++ {
			if !rowsMissing(id) {
				set(fmt.Sprintf(`CRUD:bench.public.items:{"id":%d}`, id), seedRow(id))
			}
		}
	}
	cfg := func(addr string) Config {
		return Config{Addr: addr, KeyTemplate: rowsTemplate, DB: "bench", Batch: 64, KeySpace: rowsKeySpace,
			ValidateSampled: 1, Reference: seedReference, Timeout: 10 * time.Second}
	}
	check := func(t *testing.T, d *Driver) {
		for _, o := range zeroAllocDo(t, d) {
			if o.Class != driver.OK && o.Class != driver.Miss { // keys left missing on purpose
				t.Fatalf("outcome %v %q", o.Class, o.Msg)
			}
		}
		st := d.Stats()
		if st.Mismatches != 0 || st.Validated != st.Hits+st.Nils || st.Nils == 0 || st.Hits == 0 {
			t.Fatalf("stats %+v: want every value validated, none differing, hits and nils", st)
		}
	}
	t.Run("redis-server", func(t *testing.T) {
		s := startRedis(t, redisephemeral.Options{})
		fill(func(k, v string) { redisDo(t, s, "SET", k, v) })
		check(t, newDriver(t, cfg(s.Addr())))
	})
	t.Run("test server", func(t *testing.T) {
		srv := startTestServer(t, resptest.Options{})
		fill(func(k, v string) { srv.Set(k, []byte(v)) })
		check(t, newDriver(t, cfg(srv.Addr())))
	})
}
