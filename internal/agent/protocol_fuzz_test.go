package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/result"
)

// FuzzCoordinator speaks to a coordinator as an agent would, with the
// input's bytes: as a peer that does not hold the token (authed false:
// the input is its whole side of the connection), or as an agent that
// joined with the token (the input is every line it sends after the
// handshake, while the coordinator measures its clock and asks for one
// window's part). No input may panic the coordinator, admit a peer without
// the token, or wait past its bounds; a part it receives is merged, its
// counts summed.
func FuzzCoordinator(f *testing.F) {
	tok, err := NewToken(bytes.Repeat([]byte("k"), 32))
	if err != nil {
		f.Fatal(err)
	}
	line, replies := fuzzLine, fuzzReplies()
	zero := 0
	for _, seed := range []struct {
		in     string
		authed bool
	}{
		{line(&message{Type: mHello, Nonce: []byte("n")}) + line(&message{Type: mAuth, Proof: []byte("guess")}), false},
		{line(&message{Type: mHello, Index: &zero}), false},
		{"not json\n", false},
		{replies + fuzzPartLine(), true},
		{replies + line(&message{Type: mPing}) + line(&message{Type: mPart, ID: 99}) + line(&message{Type: mPart, ID: ClockRounds + 1}), true},
		{line(&message{Type: mClock, ID: 1}) + "{\"type\":\"clock\",\"id\":2,\"t1\":1e30}\n", true},
	} {
		f.Add([]byte(seed.in), seed.authed)
	}
	fuzzcheck.Limit()
	f.Fuzz(func(t *testing.T, data []byte, authed bool) {
		if len(data) > 1<<16 {
			return
		}
		fuzzcheck.Bound(t, len(data), func() { _ = coordinatorInput(t, tok, data, authed) })
	})
}

// coordinatorInput is one input of FuzzCoordinator; it returns how far
// the coordinator went: "refused", "joined", "clock", "part" or "merged".
func coordinatorInput(t *testing.T, tok Token, data []byte, authed bool) string {
	c, err := NewCoordinator(CoordinatorConfig{Agents: 1, Token: tok})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	coord, agent := net.Pipe()
	defer coord.Close()
	defer agent.Close()
	admitted := make(chan struct{})
	go func() { c.admit(ctx, coord); close(admitted) }()
	if !authed {
		// the peer's side: the input, then the end of the connection
		go func() { _, _ = bufio.NewReader(agent).WriteTo(discard{}) }()
		_, _ = agent.Write(data)
		_ = agent.Close()
		<-admitted
		if c.agents[0] != nil {
			t.Fatal("a peer without the token was admitted")
		}
		return "refused"
	}
	// the handshake, with the token
	enc, sc := json.NewEncoder(agent), bufio.NewScanner(agent)
	if err := enc.Encode(&message{Type: mHello, Nonce: []byte("agent nonce")}); err != nil || !sc.Scan() {
		t.Fatalf("hello: %v", err)
	}
	var ch message
	if err := json.Unmarshal(sc.Bytes(), &ch); err != nil || ch.Type != mChallenge || !tok.verify("coordinator", []byte("agent nonce"), ch.Proof) {
		t.Fatalf("challenge %+v: %v", ch, err)
	}
	if err := enc.Encode(&message{Type: mAuth, Proof: tok.mac("agent", ch.Nonce)}); err != nil {
		t.Fatal(err)
	}
	<-admitted
	r := c.agents[0]
	if r == nil {
		t.Fatal("the agent with the token was refused")
	}
	// The agent's side from now on: the input's lines first, then a true
	// answer to every request (a clock reply, an empty part), so that
	// every call ends, on the input's reply when it has the right one.
	written := make(chan struct{})
	go func() { _, _ = agent.Write(data); close(written) }()
	requests := make(chan message, ClockRounds+2)
	go func() { // the coordinator's requests, read as they come
		defer close(requests)
		for sc.Scan() {
			var m message
			if json.Unmarshal(sc.Bytes(), &m) == nil && (m.Type == mClock || m.Type == mWindow) {
				requests <- m
			}
		}
	}()
	go func() { // answered once the input is written
		<-written
		for m := range requests {
			reply := &message{Type: mPart, ID: m.ID}
			if m.Type == mClock {
				reply = &message{Type: mClock, ID: m.ID, T1: m.T0, T2: m.T0}
			}
			if enc.Encode(reply) != nil {
				return
			}
		}
	}()
	if _, err := c.clock(ctx, r); err != nil {
		return "joined"
	}
	reply, err := c.call(ctx, r, &message{Type: mWindow, Window: &windowReq{Window: load.Window{Duration: time.Second}}}, mPart)
	if err != nil || reply.Part == nil || reply.Part.Load == nil {
		return "clock"
	}
	p := reply.Part.Load
	res, err := Merge([]Placed{{Part: reply.Part, Start: time.Unix(0, 0)}, {Part: reply.Part, Start: time.Unix(0, 0)}}, load.Config{}, load.Window{Duration: time.Second})
	if err != nil {
		return "part"
	}
	if res.Requests != 2*p.Requests || res.Sent != 2*p.Sent || res.Errors != 2*p.Errors {
		t.Fatalf("merged %d requests, %d sent of two parts of %d, %d", res.Requests, res.Sent, p.Requests, p.Sent)
	}
	return "merged"
}

// TestCoordinatorFuzzSeeds: the harness of FuzzCoordinator reaches what
// its seeds are for: a refusal, the clock, and a part merged.
func TestCoordinatorFuzzSeeds(t *testing.T) {
	tok, _ := NewToken(bytes.Repeat([]byte("k"), 32))
	for _, c := range []struct {
		in     string
		authed bool
		want   string
	}{
		{"{\"type\":\"hello\"}\n", false, "refused"},
		{"", true, "clock"},
		{"not json\n", true, "joined"},
		{fuzzReplies() + fuzzPartLine(), true, "merged"},
	} {
		if got := coordinatorInput(t, tok, []byte(c.in), c.authed); got != c.want {
			t.Errorf("%.60q: reached %s, want %s", c.in, got, c.want)
		}
	}
}

// fuzzLine is a message as a line of the protocol.
func fuzzLine(m *message) string { b, _ := json.Marshal(m); return string(b) + "\n" }

// fuzzReplies are an agent's replies to the coordinator's clock rounds.
func fuzzReplies() string {
	var s string
	for id := uint64(1); id <= ClockRounds; id++ {
		s += fuzzLine(&message{Type: mClock, ID: id, T1: 5, T2: 6})
	}
	return s
}

// fuzzPartLine is an agent's part of the first window, after the clock.
func fuzzPartLine() string {
	return fuzzLine(&message{Type: mPart, ID: ClockRounds + 1, Part: &Part{Load: &result.Load{Mode: "closed", Connections: 2, Seconds: 1, Sent: 10, Requests: 10,
		Timeline: []result.Second{{T: 0, Requests: 6}, {T: 1, Requests: 4}}}, Seconds: [][]int64{{100, 6}, {200, 4}}}})
}

// discard takes every byte.
type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
