package postgres

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/protocol/pg/driver"
)

// pgSampleDriver is one sample's pg driver. It keeps the connections and
// event loops it opened, so that the sample's statistics source can make
// their backends publish their counters at the edges of the load window.
type pgSampleDriver struct {
	*pg.Driver
	mu    sync.Mutex
	conns []*sampleConn
	loops []*planLoop
	plans samplePlans // read at the connections' close (plans.go)
}

// sampleLoop is an event loop of the sample's driver.
type sampleLoop interface {
	driver.Loop
	pg.Backends
}

// sampleConn is a pg connection that remembers when its last operation
// ended.
type sampleConn struct {
	*pg.Conn
	last      atomic.Int64 // driver.Now() of the last outcome
	inDo      atomic.Int32 // Do calls in flight
	plans     *samplePlans
	closeOnce sync.Once
}

var (
	_ driver.Driver      = (*pgSampleDriver)(nil)
	_ driver.Multiplexer = (*pgSampleDriver)(nil)
	_ driver.Conn        = (*sampleConn)(nil)
)

// Open opens one connection and keeps it.
func (d *pgSampleDriver) Open(ctx context.Context, worker int) (driver.Conn, error) {
	c, err := d.Driver.OpenConn(ctx)
	if err != nil {
		return nil, fmt.Errorf("pg: worker %d: %w", worker, err)
	}
	sc := &sampleConn{Conn: c, plans: &d.plans}
	d.mu.Lock()
	d.conns = append(d.conns, sc)
	d.mu.Unlock()
	return sc, nil
}

// OpenLoop opens an event loop of the driver's and keeps it. A loop that
// does not report its backends is refused (driver.ErrNoLoop): the engine
// then opens connections one by one, which are tracked.
func (d *pgSampleDriver) OpenLoop(ctx context.Context, conns int) (driver.Loop, error) {
	l, err := d.Driver.OpenLoop(ctx, conns)
	if err != nil {
		return nil, err
	}
	sl, ok := l.(sampleLoop)
	if !ok {
		_ = l.Close()
		return nil, fmt.Errorf("pg: %T does not report its backends: %w", l, driver.ErrNoLoop)
	}
	pl := &planLoop{sampleLoop: sl, plans: &d.plans}
	d.mu.Lock()
	d.loops = append(d.loops, pl)
	d.mu.Unlock()
	return pl, nil
}

// Do performs the operations and notes when the last one ended.
func (c *sampleConn) Do(ctx context.Context, reqs []driver.Request, out []driver.Outcome) error {
	c.inDo.Add(1)
	defer c.inDo.Add(-1)
	err := c.Conn.Do(ctx, reqs, out)
	if n := len(out); n > 0 {
		c.last.Store(out[n-1].Done)
	}
	return err
}

// open returns the connections and loops opened so far.
func (d *pgSampleDriver) open() ([]*sampleConn, []*planLoop) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]*sampleConn(nil), d.conns...), append([]*planLoop(nil), d.loops...)
}
