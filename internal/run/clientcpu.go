package run

import (
	"sync"
	"time"

	"github.com/benchrig/benchrig/internal/proc"
	"github.com/benchrig/benchrig/internal/result"
)

// clientSampler reads benchrig's own CPU (getrusage) at every interval and
// at every phase edge through a sample, so reports can draw the client's
// cores over time beside the server's.
type clientSampler struct {
	mu      sync.Mutex
	begin   time.Time
	u0, s0  time.Duration
	phase   string
	samples []result.ClientCPUSample
	quit    chan struct{}
	done    chan struct{}
}

// startClientSampler starts reading every interval (≥ 100 ms).
func startClientSampler(interval time.Duration) *clientSampler {
	if interval < 100*time.Millisecond {
		interval = time.Second
	}
	c := &clientSampler{begin: time.Now(), quit: make(chan struct{}), done: make(chan struct{})}
	c.u0, c.s0 = proc.SelfCPU()
	c.take()
	go func() {
		defer close(c.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-c.quit:
				return
			case <-t.C:
				c.take()
			}
		}
	}()
	return c
}

// mark starts a phase: the reading at its edge carries the new phase.
func (c *clientSampler) mark(phase string) {
	c.mu.Lock()
	c.phase = phase
	c.mu.Unlock()
	c.take()
}

func (c *clientSampler) take() {
	u, s := proc.SelfCPU()
	now := time.Now()
	c.mu.Lock()
	c.samples = append(c.samples, result.ClientCPUSample{Time: now.UTC(), Offset: now.Sub(c.begin).Seconds(), Phase: c.phase,
		UserSeconds: (u - c.u0).Seconds(), SystemSeconds: (s - c.s0).Seconds()})
	c.mu.Unlock()
}

// stop takes a last reading and returns them all.
func (c *clientSampler) stop() []result.ClientCPUSample {
	close(c.quit)
	<-c.done
	c.take()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.samples
}
