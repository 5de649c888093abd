package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sort"
	"sync"
	"time"

	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/run"
	"github.com/benchrig/benchrig/internal/system"
)

// CoordinatorConfig is how a coordinator waits for its agents.
type CoordinatorConfig struct {
	// Agents is how many agents the run waits for (1 … load.MaxShares).
	Agents int
	Token  Token
	// JoinFor bounds the wait for every agent to join (0: 5 min).
	JoinFor time.Duration
	// Logf receives the coordinator's log lines (joins, refusals, losses;
	// never the token).
	Logf func(format string, args ...any)
	// TLS, if set, encrypts every agent's connection (its certificate
	// is what agents check); the token still proves both sides.
	TLS *tls.Config
	// Timings are the run's deadlines (zero: the defaults).
	Timings Timings
}

// Coordinator hands out shares to agents and merges their parts.
type Coordinator struct {
	cfg CoordinatorConfig
	ln  *net.TCPListener

	mu     sync.Mutex
	agents []*remote // joined, by index; nil until joined
	joined chan struct{}
	ids    uint64
}

// remote is the coordinator's side of one agent.
type remote struct {
	index int
	addr  string
	host  *result.Host
	l     *link
	inbox chan *message
	// lost is closed when the agent is gone; why says why.
	lost     chan struct{}
	lostOnce sync.Once
	why      error
	cancel   context.CancelFunc
	// progress is the agent's latest live reading; second its latest
	// complete second (pings carry each second once).
	pmu      sync.Mutex
	progress load.Progress
	second   load.LiveSecond
}

// noteLive keeps what an agent's ping says of its window in flight.
func (r *remote) noteLive(p *load.Progress) {
	r.pmu.Lock()
	defer r.pmu.Unlock()
	if p == nil {
		r.progress = load.Progress{}
		return
	}
	if !r.progress.Running || p.Elapsed < r.progress.Elapsed {
		r.second = load.LiveSecond{T: -1} // a new window
	}
	if p.Second.T >= 0 {
		r.second = p.Second
	}
	r.progress = *p
	r.progress.Second = r.second
}

// live is the agent's latest reading.
func (r *remote) live() load.Progress {
	r.pmu.Lock()
	defer r.pmu.Unlock()
	return r.progress
}

func (r *remote) name() string {
	h := ""
	if r.host != nil && r.host.Hostname != "" {
		h = " on " + r.host.Hostname
	}
	return fmt.Sprintf("agent %d (%s%s)", r.index, r.addr, h)
}

func (r *remote) lose(err error) {
	r.lostOnce.Do(func() {
		r.why = err
		close(r.lost)
		r.cancel()
		_ = r.l.c.Close()
	})
}

func (r *remote) gone() bool {
	select {
	case <-r.lost:
		return true
	default:
		return false
	}
}

// NewCoordinator returns a coordinator; Listen starts it.
func NewCoordinator(cfg CoordinatorConfig) (*Coordinator, error) {
	if cfg.Agents < 1 || cfg.Agents > load.MaxShares {
		return nil, fmt.Errorf("--agents must be 1 to %d, got %d", load.MaxShares, cfg.Agents)
	}
	if cfg.Token.empty() {
		return nil, errors.New("coordinator: no token")
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	var err error
	if cfg.Timings, err = cfg.Timings.Resolved(); err != nil {
		return nil, err
	}
	return &Coordinator{cfg: cfg, agents: make([]*remote, cfg.Agents), joined: make(chan struct{})}, nil
}

// Listen opens the coordinator's port; Addr tells the address.
func (c *Coordinator) Listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", addr, err)
	}
	c.ln = ln.(*net.TCPListener)
	return nil
}

// Addr is the address the coordinator listens on.
func (c *Coordinator) Addr() string { return c.ln.Addr().String() }

// Wait accepts agents until all of them joined (each proved the token),
// then sends every one its index and the resolved suite.
func (c *Coordinator) Wait(ctx context.Context, resolved []byte, smoke bool) error {
	limit := c.cfg.JoinFor
	if limit <= 0 {
		limit = 5 * time.Minute
	}
	wctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	stop := context.AfterFunc(wctx, func() { _ = c.ln.SetDeadline(time.Now()) })
	defer stop()
	go func() {
		select {
		case <-c.joined:
			_ = c.ln.SetDeadline(time.Now())
		case <-wctx.Done():
		}
	}()
	for {
		conn, err := c.ln.Accept()
		if err != nil {
			select {
			case <-c.joined:
				// no one else joins this run: stop listening.
				_ = c.ln.Close()
				return c.welcome(resolved, smoke)
			default:
			}
			if wctx.Err() != nil {
				return fmt.Errorf("waited %s for %d agents, %d joined: %w", limit, c.cfg.Agents, c.count(), wctx.Err())
			}
			return fmt.Errorf("accept agents: %w", err)
		}
		if c.cfg.TLS != nil {
			conn = tls.Server(conn, c.cfg.TLS) // handshakes on the hello's read, within its deadline
		}
		go c.admit(ctx, conn)
	}
}

func (c *Coordinator) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, a := range c.agents {
		if a != nil {
			n++
		}
	}
	return n
}

// admit runs the handshake with one connecting agent.
func (c *Coordinator) admit(ctx context.Context, conn net.Conn) {
	to := c.cfg.Timings.AgentTimeout
	l := newLink(conn, to)
	addr := conn.RemoteAddr().String()
	refuse := func(reason string) {
		c.cfg.Logf("refused agent from %s: %s", addr, reason)
		_ = l.send(&message{Type: mRefused, Reason: reason})
		_ = conn.Close()
	}
	h, err := l.recv(to)
	if err != nil || h.Type != mHello {
		refuse("no hello")
		return
	}
	mine := nonce()
	if err := l.send(&message{Type: mChallenge, Nonce: mine, Proof: c.cfg.Token.mac("coordinator", h.Nonce)}); err != nil {
		_ = conn.Close()
		return
	}
	au, err := l.recv(to)
	if err != nil || au.Type != mAuth || !c.cfg.Token.verify("agent", mine, au.Proof) {
		refuse("wrong token")
		return
	}
	c.mu.Lock()
	idx := -1
	if h.Index != nil {
		i := *h.Index
		switch {
		case i < 0 || i >= len(c.agents):
			c.mu.Unlock()
			refuse(fmt.Sprintf("index %d out of range: this run has agents 0 to %d", i, len(c.agents)-1))
			return
		case c.agents[i] != nil:
			c.mu.Unlock()
			refuse(fmt.Sprintf("index %d already joined", i))
			return
		}
		idx = i
	} else {
		for i, a := range c.agents {
			if a == nil {
				idx = i
				break
			}
		}
	}
	if idx < 0 {
		c.mu.Unlock()
		refuse(fmt.Sprintf("the run has its %d agents", len(c.agents)))
		return
	}
	rctx, cancel := context.WithCancel(ctx)
	r := &remote{index: idx, addr: addr, host: h.Host, l: l, inbox: make(chan *message, 4), lost: make(chan struct{}), cancel: cancel}
	c.agents[idx] = r
	full := true
	for _, a := range c.agents {
		full = full && a != nil
	}
	c.mu.Unlock()
	c.cfg.Logf("%s joined", r.name())
	go c.read(rctx, r)
	go l.heartbeat(rctx, nil)
	go l.watchdog(rctx, to, func() { r.lose(fmt.Errorf("no word for %s", to)) })
	if full {
		close(c.joined)
	}
}

// read passes an agent's replies to its inbox until the link fails.
func (c *Coordinator) read(ctx context.Context, r *remote) {
	for {
		m, err := r.l.recv(0)
		if err != nil {
			r.lose(err)
			return
		}
		if m.Type == mPing {
			r.noteLive(m.Live)
			continue
		}
		select {
		case r.inbox <- m:
		case <-ctx.Done():
			return
		}
	}
}

func (c *Coordinator) welcome(resolved []byte, smoke bool) error {
	for _, r := range c.live() {
		i := r.index
		if err := r.l.send(&message{Type: mWelcome, Index: &i, Agents: c.cfg.Agents, Suite: resolved, Smoke: smoke, DeadManMS: c.cfg.Timings.DeadMan.Milliseconds()}); err != nil {
			r.lose(err)
		}
	}
	c.cfg.Logf("all %d agents joined", c.cfg.Agents)
	return nil
}

// live returns the agents still there, by index.
func (c *Coordinator) live() []*remote {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*remote
	for _, a := range c.agents {
		if a != nil && !a.gone() {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].index < out[j].index })
	return out
}

// call sends m to r and waits for the reply of type want.
func (c *Coordinator) call(ctx context.Context, r *remote, m *message, want string) (*message, error) {
	c.mu.Lock()
	c.ids++
	m.ID = c.ids
	c.mu.Unlock()
	if err := r.l.send(m); err != nil {
		r.lose(err)
		return nil, fmt.Errorf("%s lost: %w", r.name(), err)
	}
	for {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-r.lost:
			return nil, fmt.Errorf("%s lost: %v", r.name(), r.why)
		case reply := <-r.inbox:
			if reply.ID != m.ID || reply.Type != want {
				continue // a late reply to an abandoned call
			}
			return reply, nil
		}
	}
}

// clock measures r's offset with ClockRounds exchanges.
func (c *Coordinator) clock(ctx context.Context, r *remote) (Offset, error) {
	var o Offset
	for i := 0; i < ClockRounds; i++ {
		t0 := time.Now().UnixNano()
		reply, err := c.call(ctx, r, &message{Type: mClock, T0: t0}, mClock)
		if err != nil {
			return o, err
		}
		o = best(o, offsetOf(t0, reply.T1, reply.T2, time.Now().UnixNano()), i == 0)
	}
	return o, nil
}

// Close tells the agents the run is over and stops listening.
func (c *Coordinator) Close() {
	for _, r := range c.live() {
		_ = r.l.send(&message{Type: mBye})
		r.lose(errors.New("run over"))
	}
	if c.ln != nil {
		_ = c.ln.Close()
	}
}

// Executor is the run.Executor that drives the agents for each sample.
func (c *Coordinator) Executor() run.Executor {
	return func(ctx context.Context, spec system.Spec) (run.LoadEngine, error) {
		return c.sample(spec)
	}
}
