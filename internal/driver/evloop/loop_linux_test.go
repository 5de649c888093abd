package evloop

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/benchrig/benchrig/internal/driver"
)

// byteProto is a protocol for the Loop's tests: a request is the byte 'q',
// its answer the byte 'a'. Each socket is one end of a socketpair; a
// goroutine serves the other end as serve says (by the socket's number,
// from 0).
type byteProto struct {
	l     *Loop
	t     *testing.T
	serve func(n int, peer *os.File)
	reqs  []byte
	buf   [256]byte

	mu      sync.Mutex
	sockets int
	sends   map[int]int // batches sent, by connection
}

func newLoop(t *testing.T, conns int, serve func(n int, peer *os.File)) (*Loop, *byteProto) {
	t.Helper()
	return newLoopOf(t, conns, serve, false)
}

// ringProto is byteProto taking its bytes from the loop (a Feeder), which
// lets a Run go on io_uring.
type ringProto struct{ *byteProto }

func (p ringProto) Feed(c *Conn, b []byte) {
	if len(b) == 0 {
		p.fail(c, driver.Error, "closed")
		return
	}
	p.answer(c, len(b))
}

func (p ringProto) ReadFailed(c *Conn, err error) { p.fail(c, driver.Error, err.Error()) }

// newLoopOf is newLoop, with a Feeder for a handler when feeder is set.
func newLoopOf(t *testing.T, conns int, serve func(n int, peer *os.File), feeder bool) (*Loop, *byteProto) {
	t.Helper()
	l := &Loop{}
	p := &byteProto{l: l, t: t, serve: serve, sends: map[int]int{}}
	for range 64 {
		p.reqs = append(p.reqs, 'q')
	}
	var h Handler = p
	if feeder {
		h = ringProto{p}
	}
	if err := l.Init(h, conns, func() {
		for _, c := range l.Conns {
			p.Drop(c)
		}
	}); err != nil {
		l.P.Shutdown()
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	for range conns {
		c := &Conn{}
		l.Add(c)
		if err := p.open(c); err != nil {
			t.Fatal(err)
		}
	}
	return l, p
}

func (p *byteProto) open(c *Conn) error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		return err
	}
	c.Fd, c.Gen, c.St = fds[0], c.Gen+1, Open
	if err := p.l.P.Add(c.Fd, unix.EPOLLIN, int32(c.I), int32(c.Gen)); err != nil {
		return err
	}
	p.mu.Lock()
	n := p.sockets
	p.sockets++
	p.mu.Unlock()
	peer := os.NewFile(uintptr(fds[1]), "peer")
	go func() {
		defer peer.Close()
		p.serve(n, peer)
	}()
	return nil
}

func (p *byteProto) Send(c *Conn, seq uint64, k int, now int64) {
	p.mu.Lock()
	p.sends[c.I]++
	p.mu.Unlock()
	c.Inflight, c.Sent = k, now
	p.l.Inflight += k
	c.Out.Pending = p.reqs[:k]
	p.l.Write(c)
}

func (p *byteProto) Read(c *Conn) {
	n, err := ReadNonblock(c.Fd, p.buf[:])
	switch {
	case err == unix.EAGAIN:
		return
	case err != nil:
		p.fail(c, driver.Error, err.Error())
		return
	case n == 0:
		p.fail(c, driver.Error, "closed")
		return
	}
	p.answer(c, n)
}

// answer handles n answers that arrived on c.
func (p *byteProto) answer(c *Conn, n int) {
	now := driver.Now()
	for range n {
		if c.Inflight == 0 {
			p.fail(c, driver.Error, "unsolicited")
			return
		}
		o := driver.Outcome{Class: driver.OK, Done: now}
		if !p.l.Answered(c) {
			o.Class = driver.Drained
		}
		p.l.W.Record(&o, c.Sent)
	}
	if c.Inflight == 0 {
		c.Backoff.Reset()
		p.l.Queue(c)
	}
}

func (p *byteProto) Connected(*Conn) { p.t.Error("Connected called: no connect is in progress") }

func (p *byteProto) WriteFailed(c *Conn, err error) { p.fail(c, driver.Error, err.Error()) }

func (p *byteProto) Reopen(c *Conn, now int64) {
	if p.l.Stopping {
		c.St = Down
		return
	}
	if err := p.open(c); err != nil {
		p.t.Error(err)
		return
	}
	if c.Reopen {
		c.Reopen = false
		p.l.W.Reconnected(c.Cause, 0)
		c.Cause = ""
	}
	p.l.Queue(c)
}

func (p *byteProto) TimedOut(c *Conn, _ int64) { p.fail(c, driver.Timeout, "timeout") }

func (p *byteProto) Drop(c *Conn) {
	if c.Fd >= 0 {
		p.l.P.CloseSocket(c.Fd)
	}
	c.Fd, c.St = -1, Down
	c.Out.Reset()
}

func (p *byteProto) Op(_ *Conn, j int) uint8 { return uint8(j) }

func (p *byteProto) fail(c *Conn, class driver.Class, msg string) {
	now := driver.Now()
	p.l.FailOutstanding(c, &driver.Outcome{Class: class, Done: now, Msg: msg})
	p.Drop(c)
	c.Cause = driver.CauseError
	p.l.Pause(c, now)
}

// echo answers every request at once.
func echo(_ int, peer *os.File) {
	b := make([]byte, 256)
	for {
		n, err := peer.Read(b)
		if err != nil {
			return
		}
		for i := range b[:n] {
			b[i] = 'a'
		}
		if _, err := peer.Write(b[:n]); err != nil {
			return
		}
	}
}

// silent reads the requests and never answers.
func silent(_ int, peer *os.File) {
	b := make([]byte, 256)
	for {
		if _, err := peer.Read(b); err != nil {
			return
		}
	}
}

// silentFirst is silent on the first socket, then echo.
func silentFirst(n int, peer *os.File) {
	if n == 0 {
		silent(n, peer)
		return
	}
	echo(n, peer)
}

// work grants left requests and keeps every outcome.
type work struct {
	next     uint64
	left     int
	claimed  chan struct{} // closed at the first claim
	once     sync.Once
	onRecord func(o *driver.Outcome)
	outs     []driver.Outcome
	causes   []string
	badSent  int
}

func newWork(left int) *work { return &work{left: left, claimed: make(chan struct{})} }

func (w *work) Claim(n int) (uint64, int) {
	w.once.Do(func() { close(w.claimed) })
	k := min(n, w.left)
	w.left -= k
	w.next += uint64(k)
	return w.next - uint64(k), k
}

func (w *work) Record(o *driver.Outcome, sent int64) {
	if sent <= 0 || o.Done < sent {
		w.badSent++
	}
	w.outs = append(w.outs, *o)
	if w.onRecord != nil {
		w.onRecord(o)
	}
}

func (w *work) Reconnected(cause string, _ int) { w.causes = append(w.causes, cause) }

func (w *work) count(class driver.Class) int {
	n := 0
	for _, o := range w.outs {
		if o.Class == class {
			n++
		}
	}
	return n
}

func run(t *testing.T, l *Loop, pipeline int, deadline int64, w *work) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := l.Run(ctx, pipeline, deadline, w); err != nil {
		t.Fatal(err)
	}
	if w.badSent != 0 {
		t.Errorf("%d outcomes with a send time after their completion", w.badSent)
	}
	if l.Inflight != 0 || l.stale != 0 {
		t.Errorf("after Run: %d in flight, %d connections stale", l.Inflight, l.stale)
	}
}

func TestLoopRecordsEveryClaimedRequest(t *testing.T) {
	l, p := newLoop(t, 3, echo)
	for _, pipeline := range []int{0, 1, 5} {
		w := newWork(1001)
		run(t, l, pipeline, 0, w)
		if len(w.outs) != 1001 || w.count(driver.OK) != 1001 || len(w.causes) != 0 {
			t.Errorf("pipeline %d: %d outcomes, %d OK, reconnects %v", pipeline, len(w.outs), w.count(driver.OK), w.causes)
		}
	}
	for i := range l.Conns {
		if p.sends[i] == 0 {
			t.Errorf("connection %d sent nothing", i)
		}
	}
}

func TestLoopOnlyRunsOneConnection(t *testing.T) {
	l, p := newLoop(t, 3, echo)
	l.Only = l.Conns[1]
	w := newWork(7)
	run(t, l, 1, 0, w)
	if w.count(driver.OK) != 7 || p.sends[1] != 7 || p.sends[0]+p.sends[2] != 0 {
		t.Errorf("%d OK, batches by connection %v", w.count(driver.OK), p.sends)
	}
}

// windowLen is a window long enough for a Run's first batches to be sent
// in it on a loaded machine.
const windowLen = 500 * time.Millisecond

// The requests in flight at the deadline are reported Outstanding then
// (Done = the deadline), and their answers after it count as Drained.
func TestLoopWindowEndDrainsOutstanding(t *testing.T) {
	release := make(chan struct{})
	l, _ := newLoop(t, 2, func(_ int, peer *os.File) {
		b := make([]byte, 256)
		n, err := peer.Read(b)
		if err != nil {
			return
		}
		<-release // answered only once the loop reported them Outstanding
		for i := range b[:n] {
			b[i] = 'a'
		}
		_, _ = peer.Write(b[:n])
		silent(0, peer)
	})
	w := newWork(1 << 40)
	var once sync.Once
	w.onRecord = func(o *driver.Outcome) {
		if o.Class == driver.Outstanding {
			once.Do(func() { close(release) })
		}
	}
	deadline := driver.Now() + int64(windowLen)
	run(t, l, 3, deadline, w)
	if w.count(driver.Outstanding) != 6 || w.count(driver.Drained) != 6 || len(w.outs) != 12 {
		t.Fatalf("outcomes %+v", w.outs)
	}
	ops := map[uint8]int{}
	for _, o := range w.outs[:6] {
		ops[o.Op]++
		if o.Class != driver.Outstanding || o.Done != deadline {
			t.Errorf("at the window's end: %+v, want Outstanding at the deadline", o)
		}
	}
	if ops[1] != 2 || ops[2] != 2 || ops[3] != 2 {
		t.Errorf("Outstanding by Op %v: want each request of both batches", ops)
	}
	for _, c := range l.Conns {
		if c.St != Open || c.Stale || c.Inflight != 0 {
			t.Errorf("connection %d after draining: state %d, stale %v, %d in flight", c.I, c.St, c.Stale, c.Inflight)
		}
	}
}

// Requests still unanswered DrainGrace after the deadline: their
// connection is closed, and the next Run reopens it (CauseWindowEnd).
func TestLoopWindowEndCutsUnanswered(t *testing.T) {
	l, _ := newLoop(t, 1, silentFirst)
	w := newWork(1 << 40)
	run(t, l, 2, driver.Now()+int64(windowLen), w)
	c := l.Conns[0]
	if w.count(driver.Outstanding) != 2 || len(w.outs) != 2 {
		t.Fatalf("outcomes %+v", w.outs)
	}
	if c.St != Down || !c.Reopen || c.Cause != driver.CauseWindowEnd || c.Stale || c.Inflight != 0 {
		t.Fatalf("connection after the window: %+v", *c)
	}
	w = newWork(10)
	run(t, l, 2, 0, w)
	if w.count(driver.OK) != 10 || len(w.causes) != 1 || w.causes[0] != driver.CauseWindowEnd {
		t.Errorf("next Run: %d OK, reconnects %v", w.count(driver.OK), w.causes)
	}
}

// A request that outlives Loop.Timeout fails, and its connection is
// reopened after the back-off.
func TestLoopTimeoutFailsAndReopens(t *testing.T) {
	l, _ := newLoop(t, 1, silentFirst)
	l.Timeout = int64(50 * time.Millisecond)
	w := newWork(10)
	w.onRecord = func(o *driver.Outcome) {
		if o.Class == driver.Timeout {
			l.Timeout = 0 // the answers of the echo, however late, are no timeouts
		}
	}
	run(t, l, 1, 0, w)
	if w.count(driver.Timeout) != 1 || w.count(driver.OK) != 9 || len(w.causes) != 1 || w.causes[0] != driver.CauseError {
		t.Errorf("outcomes %+v, reconnects %v", w.outs, w.causes)
	}
}

func TestLoopCancelAbortsAndCloseEnds(t *testing.T) {
	l, _ := newLoop(t, 2, silent)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := newWork(1 << 40)
	go func() {
		<-w.claimed
		cancel()
	}()
	if err := l.Run(ctx, 4, 0, w); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: %v", err)
	}
	for _, c := range l.Conns {
		if c.St != Down || c.Inflight != 0 || c.Fd != -1 {
			t.Errorf("connection %d after cancel: %+v", c.I, *c)
		}
	}
	if l.Inflight != 0 || len(w.outs) != 0 {
		t.Errorf("after cancel: %d in flight, outcomes %+v", l.Inflight, w.outs)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Run(context.Background(), 1, 0, newWork(1)); !errors.Is(err, ErrClosed) {
		t.Errorf("Run after Close: %v", err)
	}
}
