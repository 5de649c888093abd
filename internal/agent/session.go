package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/run"
	"github.com/benchrig/benchrig/internal/system"
)

// barrierLead is how far ahead of now a window's common start is set: time
// for the message to reach every agent (plus twice the slowest round trip).
const barrierLead = 300 * time.Millisecond

// partSlack is how long after a window's planned end (duration + the
// engine's drain grace + the barrier) the coordinator waits for a part.
const partSlack = 10 * time.Second

// session is one sample's load on the agents: a run.LoadEngine.
type session struct {
	c       *Coordinator
	spec    system.Spec
	agents  []*remote
	offsets []Offset
	parts   []result.AgentPart
	once    sync.Once
}

var (
	_ run.LoadEngine = (*session)(nil)
	_ run.Annotator  = (*session)(nil)
)

// sample makes the session of one sample over the agents still there.
func (c *Coordinator) sample(spec system.Spec) (*session, error) {
	if spec.Remote == nil {
		return nil, fmt.Errorf("the %s path of this sample cannot run on agents (agents build http and resp drivers; pg paths run on one machine)", spec.Protocol)
	}
	agents := c.live()
	if len(agents) == 0 {
		return nil, fmt.Errorf("no agent left of the %d the run began with", c.cfg.Agents)
	}
	if _, err := (load.Share{Index: 0, Count: len(agents)}).Connections(spec.Engine.Connections); err != nil {
		return nil, err
	}
	s := &session{c: c, spec: spec, agents: agents, offsets: make([]Offset, len(agents)), parts: make([]result.AgentPart, len(agents))}
	for i, a := range agents {
		s.parts[i] = result.AgentPart{Agent: a.index, Share: load.Share{Index: i, Count: len(agents)}.String(), Addr: a.addr, Host: a.host}
	}
	return s, nil
}

// each runs f for every agent in parallel and joins the errors, each
// naming its agent and share.
func (s *session) each(f func(i int, a *remote) error) error {
	errs := make([]error, len(s.agents))
	var wg sync.WaitGroup
	for i, a := range s.agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(i, a); err != nil {
				s.parts[i].Error = err.Error()
				errs[i] = fmt.Errorf("share %s missing: %w", s.parts[i].Share, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Open measures every agent's clock and opens its share's connections.
func (s *session) Open(ctx context.Context) error {
	err := s.each(func(i int, a *remote) error {
		o, err := s.c.clock(ctx, a)
		if err != nil {
			return err
		}
		s.offsets[i] = o
		s.parts[i].ClockOffsetUS, s.parts[i].RTTUS = o.Offset.Microseconds(), o.RTT.Microseconds()
		cfg, err := load.Share{Index: i, Count: len(s.agents)}.Config(s.spec.Engine)
		if err != nil {
			return err
		}
		s.parts[i].Connections = cfg.Connections
		reply, err := s.c.call(ctx, a, &message{Type: mOpen, Open: &openRequest{Key: s.spec.Key, Cell: s.spec.Cell, Engine: cfg, Remote: s.spec.Remote}}, mReply)
		if err != nil {
			return err
		}
		if reply.Error != "" {
			return fmt.Errorf("%s: %s", a.name(), reply.Error)
		}
		return nil
	})
	if err != nil {
		_ = s.Close()
		return oneLine(err)
	}
	return nil
}

// Run releases the window on every agent at one common start and merges
// their parts. A part that does not come (its agent died, was cut off or
// timed out) fails the window, naming the missing share and agent.
func (s *session) Run(ctx context.Context, w load.Window) (*result.Load, error) {
	var worst time.Duration
	for _, o := range s.offsets {
		worst = max(worst, o.RTT)
	}
	start := time.Now().Add(barrierLead + 2*worst)
	wctx := ctx
	if w.Duration > 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeout(ctx, time.Until(start)+w.Duration+load.RateDrainGrace+partSlack)
		defer cancel()
	}
	placed := make([]Placed, len(s.agents))
	err := s.each(func(i int, a *remote) error {
		at := start.Add(s.offsets[i].Offset).UnixNano()
		reply, err := s.c.call(wctx, a, &message{Type: mWindow, Window: &windowReq{Window: w, StartAt: at}}, mPart)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
				err = fmt.Errorf("%s: no part within %s of the window's end", a.name(), load.RateDrainGrace+partSlack)
				a.lose(err)
			}
			return err
		}
		if reply.Error != "" || reply.Part == nil || reply.Part.Load == nil {
			return fmt.Errorf("%s: %s", a.name(), reply.Error)
		}
		p := reply.Part
		if p.Load.Interrupted {
			return fmt.Errorf("%s: its window was interrupted", a.name())
		}
		began := time.Unix(0, p.StartNS).Add(-s.offsets[i].Offset)
		placed[i] = Placed{Part: p, Start: began}
		s.parts[i].StartSkewUS = began.Sub(start).Microseconds()
		s.parts[i].Sent, s.parts[i].Requests = p.Load.Sent, p.Load.Requests
		s.parts[i].Errors = p.Load.Errors + p.Load.Timeouts + p.Load.Unexpected
		cl := p.Load.Client
		s.parts[i].Client = &cl
		return nil
	})
	if err != nil {
		if ctx.Err() != nil { // interrupted (Ctrl-C): the agents stop now
			for _, a := range s.agents {
				if !a.gone() {
					_ = a.l.send(&message{Type: mAbort})
				}
			}
		}
		return nil, oneLine(err)
	}
	return Merge(placed, s.spec.Engine, w)
}

// Close closes every agent's connections of the sample (bounded).
func (s *session) Close() error {
	s.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), s.c.cfg.Timings.AgentTimeout)
		defer cancel()
		var wg sync.WaitGroup
		for _, a := range s.agents {
			if !a.gone() {
				wg.Add(1)
				go func() { defer wg.Done(); _, _ = s.c.call(ctx, a, &message{Type: mClose}, mReply) }()
			}
		}
		wg.Wait()
	})
	return nil
}

// Annotate implements run.Annotator: the sample records every part.
func (s *session) Annotate(smp *result.Sample) { smp.Agents = s.parts }

// oneLine joins a joined error's lines with "; " (a sample's Error is one
// line).
func oneLine(err error) error {
	return errors.New(strings.ReplaceAll(err.Error(), "\n", "; "))
}
