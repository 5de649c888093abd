package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/system"
)

// Timings of the protocol.
const (
	// HeartbeatEvery is how often each side says it is alive.
	HeartbeatEvery = 200 * time.Millisecond
	// DeadMan is how long, by default, an agent goes on without a word
	// from its coordinator: then it stops all load (within a second).
	DeadMan = time.Second
	// AgentTimeout is how long, by default, a coordinator waits without a
	// word from an agent before it counts the agent lost.
	AgentTimeout = 3 * time.Second
	// MaxTiming bounds either deadline of Timings.
	MaxTiming = 10 * time.Minute
	// MaxMessage bounds one message (a part with a long timeline).
	MaxMessage = 64 << 20
)

// Timings are a run's protocol deadlines; a zero field takes its default
// (DeadMan, AgentTimeout). The coordinator's dead-man reaches its agents
// in the welcome, so one run has one. A machine whose scheduler can starve
// a process for longer than these (a loaded load generator) needs longer
// ones: `benchrig run --dead-man D --agent-timeout D`.
type Timings struct {
	DeadMan      time.Duration
	AgentTimeout time.Duration
}

// Resolved fills the defaults and checks the bounds.
func (t Timings) Resolved() (Timings, error) {
	if t.DeadMan == 0 {
		t.DeadMan = DeadMan
	}
	if t.AgentTimeout == 0 {
		t.AgentTimeout = AgentTimeout
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--dead-man", t.DeadMan}, {"--agent-timeout", t.AgentTimeout}} {
		if d.v < 2*HeartbeatEvery || d.v > MaxTiming {
			return t, fmt.Errorf("%s %s: want %s to %s (the heartbeat is every %s)", d.flag, d.v, 2*HeartbeatEvery, MaxTiming, HeartbeatEvery)
		}
	}
	return t, nil
}

// Message types.
const (
	mHello     = "hello"     // agent → coordinator: index wanted, host, nonce
	mChallenge = "challenge" // coordinator → agent: its nonce and proof
	mAuth      = "auth"      // agent → coordinator: its proof
	mRefused   = "refused"   // coordinator → agent
	mWelcome   = "welcome"   // coordinator → agent: index, suite
	mClock     = "clock"     // both ways: NTP-style exchange
	mOpen      = "open"      // coordinator → agent: a sample's share
	mWindow    = "window"    // coordinator → agent: run a window at a time
	mPart      = "part"      // agent → coordinator: the window's part
	mClose     = "close"     // coordinator → agent: close the sample's connections
	mAbort     = "abort"     // coordinator → agent: end the window in flight now (Ctrl-C)
	mReply     = "reply"     // agent → coordinator: open/close done (Error if not)
	mPing      = "ping"      // both ways: heartbeat
	mBye       = "bye"       // coordinator → agent: the run is over
)

// message is every message of the protocol; Type says which fields count.
type message struct {
	Type string `json:"type"`
	// ID pairs a request with its reply.
	ID uint64 `json:"id,omitempty"`

	Index   *int         `json:"index,omitempty"`
	Agents  int          `json:"agents,omitempty"`
	Host    *result.Host `json:"host,omitempty"`
	Version string       `json:"version,omitempty"`
	Nonce   []byte       `json:"nonce,omitempty"`
	Proof   []byte       `json:"proof,omitempty"`
	Reason  string       `json:"reason,omitempty"`
	Suite   []byte       `json:"suite,omitempty"`
	Smoke   bool         `json:"smoke,omitempty"`
	// DeadManMS is the coordinator's dead-man, in the welcome.
	DeadManMS int64 `json:"dead_man_ms,omitempty"`

	// clock: T0 coordinator send, T1 agent receive, T2 agent send (Unix ns).
	T0 int64 `json:"t0,omitempty"`
	T1 int64 `json:"t1,omitempty"`
	T2 int64 `json:"t2,omitempty"`

	Open   *openRequest `json:"open,omitempty"`
	Window *windowReq   `json:"window,omitempty"`
	Part   *Part        `json:"part,omitempty"`
	Error  string       `json:"error,omitempty"`
	// Live is an agent's ping: its window in flight.
	Live *load.Progress `json:"live,omitempty"`
}

// openRequest is one sample's share for one agent.
type openRequest struct {
	Key    string         `json:"key"`
	Cell   string         `json:"cell"`
	Engine load.Config    `json:"engine"`
	Remote *system.Remote `json:"remote"`
}

// windowReq starts a window at StartAt (Unix ns on the agent's clock).
type windowReq struct {
	Window  load.Window `json:"window"`
	StartAt int64       `json:"start_at"`
}

// Part is what one agent measured in one window: the ordinary result.Load
// (its histograms encoded, as every results file carries them) plus the
// per-second histograms its timeline's percentiles came from, so that the
// coordinator's merge is lossless.
type Part struct {
	Load *result.Load `json:"load"`
	// Seconds are the per-second latency histograms as value, count pairs
	// (load.Engine.SecondHistograms).
	Seconds [][]int64 `json:"seconds,omitempty"`
	// StartNS is when the window began, Unix ns on the agent's clock.
	StartNS int64 `json:"start_ns"`
}

// link is one side of a connection: JSON lines in, JSON lines out (writes
// serialised), and when the other side last said anything.
type link struct {
	c    net.Conn
	sc   *bufio.Scanner
	wmu  sync.Mutex
	enc  *json.Encoder
	seen chan struct{} // a token per message read, for a watchdog
	// writeFor bounds one send (the run's AgentTimeout).
	writeFor time.Duration
}

func newLink(c net.Conn, writeFor time.Duration) *link {
	sc := bufio.NewScanner(c)
	sc.Buffer(make([]byte, 64<<10), MaxMessage)
	return &link{c: c, sc: sc, enc: json.NewEncoder(c), seen: make(chan struct{}, 1), writeFor: writeFor}
}

// send writes one message, within the link's writeFor.
func (l *link) send(m *message) error {
	l.wmu.Lock()
	defer l.wmu.Unlock()
	_ = l.c.SetWriteDeadline(time.Now().Add(l.writeFor))
	if err := l.enc.Encode(m); err != nil {
		return fmt.Errorf("send %s: %w", m.Type, err)
	}
	return nil
}

// recv reads one message; timeout bounds the wait (0: none).
func (l *link) recv(timeout time.Duration) (*message, error) {
	if timeout > 0 {
		_ = l.c.SetReadDeadline(time.Now().Add(timeout))
	} else {
		_ = l.c.SetReadDeadline(time.Time{})
	}
	if !l.sc.Scan() {
		err := l.sc.Err()
		if err == nil {
			err = errors.New("connection closed")
		}
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("message longer than %d bytes", MaxMessage)
		}
		return nil, err
	}
	var m message
	if err := json.Unmarshal(l.sc.Bytes(), &m); err != nil {
		return nil, fmt.Errorf("decode message: %w", err)
	}
	select {
	case l.seen <- struct{}{}:
	default:
	}
	return &m, nil
}

// heartbeat pings every HeartbeatEvery until ctx ends or a send fails.
// An agent's pings carry live, when it gives one: the progress of its
// window in flight (for the coordinator's live page), its last complete
// second only once.
func (l *link) heartbeat(ctx context.Context, live func() *load.Progress) {
	t := time.NewTicker(HeartbeatEvery)
	defer t.Stop()
	sent, elapsed := -1, time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			m := &message{Type: mPing}
			if live != nil {
				if p := live(); p != nil {
					if p.Elapsed < elapsed { // a new window
						sent = -1
					}
					elapsed = p.Elapsed
					if p.Second.T == sent {
						p.Second = load.LiveSecond{T: -1}
					} else if p.Second.T >= 0 {
						sent = p.Second.T
					}
					m.Live = p
				}
			}
			if l.send(m) != nil {
				return
			}
		}
	}
}

// watchdog calls lost when no message arrived for d, or ctx ends first.
func (l *link) watchdog(ctx context.Context, d time.Duration, lost func()) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-l.seen:
			if !t.Stop() {
				<-t.C
			}
			t.Reset(d)
		case <-t.C:
			lost()
			return
		}
	}
}
