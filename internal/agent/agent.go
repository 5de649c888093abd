package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchrig/benchrig/internal/load"
	procfs "github.com/benchrig/benchrig/internal/proc"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/run"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/system"
)

// Config is how an agent reaches its coordinator.
type Config struct {
	// Coordinator is the coordinator's host:port.
	Coordinator string
	// Index is the agent index asked for (-1: the coordinator picks; a
	// Kubernetes Indexed Job gives JOB_COMPLETION_INDEX).
	Index int
	Token Token
	// DialFor bounds how long the agent retries connecting (0: 2 min).
	DialFor time.Duration
	// Version is benchrig's version, told to the coordinator.
	Version string
	// Logf receives the agent's log lines (never the token).
	Logf func(format string, args ...any)
	// TLS, if set, is how the agent checks the coordinator's certificate
	// (RootCAs, ServerName); the connection is then encrypted.
	TLS *tls.Config
	// Timings bound the waits until the welcome; the coordinator's
	// dead-man, in the welcome, is used from then on.
	Timings Timings
}

// agentRun is one agent's connection to its coordinator.
type agentRun struct {
	cfg   Config
	l     *link
	index int
	n     int
	suite *suite.Suite
	plan  *suite.Plan
	eng   *load.Engine
	// live is eng for the heartbeat's progress (nil between samples).
	live atomic.Pointer[load.Engine]
	// abort ends the window in flight (the reader calls it on mAbort).
	amu   sync.Mutex
	abort context.CancelFunc
}

// Run connects to the coordinator, joins, and runs every share it is sent
// until the coordinator says bye (nil) or goes away (an error: all load
// stopped at once, within DeadMan when the link went silent).
func Run(ctx context.Context, cfg Config) error {
	var err error
	if cfg.Token.empty() {
		return errors.New("agent: no token")
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Timings, err = cfg.Timings.Resolved(); err != nil {
		return err
	}
	c, err := dial(ctx, cfg)
	if err != nil {
		return err
	}
	a := &agentRun{cfg: cfg, l: newLink(c, cfg.Timings.AgentTimeout)}
	defer c.Close()
	hb, stopHB := context.WithCancel(ctx)
	defer stopHB()
	if err := a.join(hb); err != nil {
		return err
	}
	cfg.Logf("joined coordinator %s as agent %d of %d", cfg.Coordinator, a.index, a.n)
	return a.serve(ctx)
}

func dial(ctx context.Context, cfg Config) (net.Conn, error) {
	limit := cfg.DialFor
	if limit <= 0 {
		limit = 2 * time.Minute
	}
	dctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	var d net.Dialer
	for {
		c, err := d.DialContext(dctx, "tcp", cfg.Coordinator)
		if err == nil && cfg.TLS != nil {
			tc := tls.Client(c, cfg.TLS)
			if err = tc.HandshakeContext(dctx); err != nil {
				_ = c.Close()
				return nil, fmt.Errorf("TLS with coordinator %s: %w", cfg.Coordinator, err)
			}
			return tc, nil
		}
		if err == nil {
			return c, nil
		}
		select {
		case <-dctx.Done():
			return nil, fmt.Errorf("connect to coordinator %s (for %s): %w", cfg.Coordinator, limit, err)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// join proves the token both ways and receives the index and the suite.
func (a *agentRun) join(ctx context.Context) error {
	mine := nonce()
	hello := &message{Type: mHello, Host: result.ReadHost(), Version: a.cfg.Version, Nonce: mine}
	if a.cfg.Index >= 0 {
		i := a.cfg.Index
		hello.Index = &i
	}
	if err := a.l.send(hello); err != nil {
		return err
	}
	ch, err := a.l.recv(a.cfg.Timings.AgentTimeout)
	if err != nil {
		return fmt.Errorf("join %s: %w", a.cfg.Coordinator, err)
	}
	if ch.Type == mRefused {
		return fmt.Errorf("join %s: %w: %s", a.cfg.Coordinator, ErrRefused, ch.Reason)
	}
	if ch.Type != mChallenge || !a.cfg.Token.verify("coordinator", mine, ch.Proof) {
		return fmt.Errorf("join %s: the coordinator did not prove it holds the token: not loading anything for it", a.cfg.Coordinator)
	}
	if err := a.l.send(&message{Type: mAuth, Proof: a.cfg.Token.mac("agent", ch.Nonce)}); err != nil {
		return err
	}
	// The coordinator answers once all agents joined; both sides beat
	// meanwhile, and a silent coordinator is given up after the dead-man.
	go a.l.heartbeat(ctx, a.progress)
	var w *message
	for w == nil || w.Type == mPing {
		if w, err = a.l.recv(a.cfg.Timings.DeadMan); err != nil {
			return fmt.Errorf("join %s: waiting for the other agents: %w", a.cfg.Coordinator, err)
		}
	}
	if w.Type == mRefused {
		return fmt.Errorf("join %s: %w: %s", a.cfg.Coordinator, ErrRefused, w.Reason)
	}
	if w.Type != mWelcome || w.Index == nil {
		return fmt.Errorf("join %s: expected a welcome, got %q", a.cfg.Coordinator, w.Type)
	}
	s, err := suite.Parse("the coordinator's suite", w.Suite)
	if err != nil {
		return fmt.Errorf("the coordinator's suite: %w", err)
	}
	p, err := s.Plan()
	if err != nil {
		return fmt.Errorf("the coordinator's suite: %w", err)
	}
	a.index, a.n, a.suite, a.plan = *w.Index, w.Agents, s, p
	if w.DeadManMS > 0 {
		d := time.Duration(w.DeadManMS) * time.Millisecond
		if d > MaxTiming {
			return fmt.Errorf("join %s: the coordinator's dead-man %s is longer than %s", a.cfg.Coordinator, d, MaxTiming)
		}
		a.cfg.Timings.DeadMan = d
	}
	return nil
}

// serve answers the coordinator until bye, or stops everything when it goes
// away.
func (a *agentRun) serve(ctx context.Context) error {
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	defer a.closeEngine()
	dm := a.cfg.Timings.DeadMan
	go a.l.watchdog(ctx, dm, func() {
		stop(fmt.Errorf("coordinator %s silent for %s", a.cfg.Coordinator, dm))
		_ = a.l.c.Close()
	})
	work := make(chan *message, 4)
	go func() {
		for {
			m, err := a.l.recv(0)
			if err != nil {
				stop(fmt.Errorf("coordinator %s: %w", a.cfg.Coordinator, err))
				return
			}
			switch m.Type {
			case mPing:
			case mClock:
				t1 := time.Now().UnixNano()
				_ = a.l.send(&message{Type: mClock, ID: m.ID, T0: m.T0, T1: t1, T2: time.Now().UnixNano()})
			case mBye:
				stop(errBye)
				return
			case mAbort:
				a.amu.Lock()
				if a.abort != nil {
					a.abort()
				}
				a.amu.Unlock()
			default:
				select {
				case work <- m:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	for {
		select {
		case <-ctx.Done():
			a.closeEngine() // the dead-man switch: all load stops here
			if err := context.Cause(ctx); errors.Is(err, errBye) {
				a.cfg.Logf("coordinator said the run is over")
				return nil
			} else if err != nil {
				a.cfg.Logf("stopped all load: %v", err)
				return err
			}
			return ctx.Err()
		case m := <-work:
			reply := a.handle(ctx, m)
			if reply != nil {
				if err := a.l.send(reply); err != nil {
					stop(err)
				}
			}
		}
	}
}

var errBye = errors.New("bye")

// maxLead bounds how far ahead a window's start may be.
const maxLead = time.Minute

func (a *agentRun) handle(ctx context.Context, m *message) *message {
	switch m.Type {
	case mOpen:
		err := a.open(ctx, m.Open)
		r := &message{Type: mReply, ID: m.ID}
		if err != nil {
			r.Error = err.Error()
			a.cfg.Logf("open a share: %v", err)
		}
		return r
	case mWindow:
		p, err := a.window(ctx, m.Window)
		r := &message{Type: mPart, ID: m.ID, Part: p}
		if err != nil {
			r.Error = err.Error()
		}
		return r
	case mClose:
		a.closeEngine()
		return &message{Type: mReply, ID: m.ID}
	}
	return &message{Type: mReply, ID: m.ID, Error: fmt.Sprintf("unknown message %q", m.Type)}
}

// open builds the share's driver and engine and opens its connections.
func (a *agentRun) open(ctx context.Context, o *openRequest) error {
	a.closeEngine()
	if o == nil || o.Remote == nil {
		return errors.New("open: no share")
	}
	var cell *suite.Cell
	for i := range a.plan.Cells {
		if a.plan.Cells[i].ID == o.Cell {
			cell = &a.plan.Cells[i]
			break
		}
	}
	if cell == nil {
		return fmt.Errorf("cell %q is not in the suite's plan", o.Cell)
	}
	t, err := a.suite.TargetFor(*cell)
	if err != nil {
		return err
	}
	env := system.Env{Suite: a.suite, Name: run.VariantKey(*cell), Target: t, Params: cell.Params, Cells: []suite.Cell{*cell}}
	spec, err := system.AddressDriver(env, *cell, system.Spec{Engine: o.Engine}, o.Remote.Vars, o.Remote.Addr, nil)
	if err != nil {
		return err
	}
	e, err := load.New(o.Engine, spec.Driver)
	if err != nil {
		return err
	}
	if err := e.Open(ctx); err != nil {
		return err
	}
	a.eng = e
	a.live.Store(e)
	return nil
}

// progress is the engine's window in flight, nil when none runs.
func (a *agentRun) progress() *load.Progress {
	e := a.live.Load()
	if e == nil {
		return nil
	}
	p := e.Progress()
	if !p.Running {
		return nil
	}
	u, s := procfs.SelfCPU()
	p.ClientCPU = (u + s).Seconds()
	return &p
}

// window waits for the common start, runs the share's window, and returns
// its part.
func (a *agentRun) window(ctx context.Context, w *windowReq) (*Part, error) {
	if a.eng == nil || w == nil {
		return nil, errors.New("window before open")
	}
	d := time.Until(time.Unix(0, w.StartAt))
	if d > maxLead {
		return nil, fmt.Errorf("window start %s ahead: at most %s accepted (are the clocks that far apart?)", d.Round(time.Millisecond), maxLead)
	}
	if d > 0 {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
	wctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	a.amu.Lock()
	a.abort = func() { cancel(errors.New("aborted by the coordinator")) }
	a.amu.Unlock()
	defer func() { a.amu.Lock(); a.abort = nil; a.amu.Unlock() }()
	start := time.Now().UnixNano()
	res, err := a.eng.Run(wctx, w.Window)
	if err != nil {
		return nil, err
	}
	if wctx.Err() != nil {
		return nil, fmt.Errorf("window interrupted: %w", context.Cause(wctx))
	}
	return &Part{Load: res, Seconds: a.eng.SecondHistograms(), StartNS: start}, nil
}

func (a *agentRun) closeEngine() {
	a.live.Store(nil)
	if a.eng != nil {
		_ = a.eng.Close()
		a.eng = nil
	}
}
