package resp

import (
	"strconv"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/resp/resptest"
	"github.com/benchrig/benchrig/internal/target/redis"
)

// The hot path (build 64 keys, write, parse the MGET reply, count) allocates
// nothing once buffers have grown. Measured against a real redis-server,
// which allocates in its own process, so only this process is counted.
func TestMGET64ZeroAllocAgainstRedis(t *testing.T) {
	s := startRedis(t, redis.Options{})
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
		if o.Class != driver.OK {
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
