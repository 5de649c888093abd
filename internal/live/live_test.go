package live

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/result"
)

// start starts a server closed at the end of the test.
func start(t *testing.T, o Options) *Server {
	t.Helper()
	s, err := Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// get requests path (with its query) of s by method, through 127.0.0.1.
func get(t *testing.T, s *Server, method, pathQuery string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+local(s)+pathQuery, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

// local is s's address through 127.0.0.1 (it may listen on all).
func local(s *Server) string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Addr().(*net.TCPAddr).Port))
}

// fixtureSamples are the samples of a results file written by benchrig
// run (the report's fixtures).
func fixtureSamples(t *testing.T, name string) []result.Sample {
	t.Helper()
	_, samples, _, err := result.ReadFile("../report/testdata/results/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return samples
}

// TestTokenOffLoopback: a server on all interfaces without a token
// generates one and answers only requests carrying it (the page and its
// event stream), 403 without detail otherwise; a given token is used;
// a short one is refused at Start; the comparison is constant-time.
func TestTokenOffLoopback(t *testing.T) {
	s := start(t, Options{Addr: "0.0.0.0:0"})
	u, err := url.Parse(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	tok := u.Query().Get("token")
	if len(tok) < 32 {
		t.Fatalf("URL %s: want a generated token of at least 32 characters", s.URL())
	}
	for _, pq := range []string{"/", "/events", "/?token=", "/?token=" + tok[:len(tok)-1] + "x", "/events?token=" + tok + "x"} {
		if code, body := get(t, s, "GET", pq); code != http.StatusForbidden || body != "forbidden\n" {
			t.Errorf("GET %s: %d %q, want 403 without detail", pq, code, body)
		}
	}
	if code, body := get(t, s, "GET", "/?token="+tok); code != 200 || !strings.Contains(body, `id="status"`) {
		t.Errorf("GET / with the token: %d, want the page", code)
	}
	if code, _ := get(t, s, "HEAD", "/events?token="+tok); code != 200 {
		t.Errorf("HEAD /events with the token: %d, want 200", code)
	}

	given := "a-token-given-by-the-caller"
	s2 := start(t, Options{Addr: "0.0.0.0:0", Token: given})
	if !strings.Contains(s2.URL(), "token="+given) {
		t.Errorf("URL %s does not carry the given token", s2.URL())
	}
	if code, _ := get(t, s2, "GET", "/?token="+given); code != 200 {
		t.Errorf("given token: %d", code)
	}
	if code, _ := get(t, s2, "GET", "/?token="+tok); code != 403 {
		t.Errorf("another server's token: %d, want 403", code)
	}
	if _, err := Start(Options{Addr: "0.0.0.0:0", Token: "short"}); err == nil {
		t.Error("a 5-character token was accepted")
	}

	// A loopback server without a token answers only requests naming
	// this machine (a rebound DNS name is refused).
	lo := start(t, Options{})
	if !strings.HasPrefix(lo.URL(), "http://127.0.0.1:") || strings.Contains(lo.URL(), "token") {
		t.Errorf("loopback URL %s", lo.URL())
	}
	req, _ := http.NewRequest("GET", "http://"+local(lo)+"/", nil)
	req.Host = "evil.example:80"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("Host evil.example: %d, want 403", resp.StatusCode)
	}

	// The comparison is crypto/subtle's, of digests of equal length.
	src, err := os.ReadFile("server.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), "subtle.ConstantTimeCompare(got[:], s.token)") {
		t.Error("server.go does not compare the token with subtle.ConstantTimeCompare")
	}
}

// TestMethodsAndClientBound: only GET and HEAD are served (405 with
// Allow otherwise); event streams beyond MaxClients get 503 until one
// closes.
func TestMethodsAndClientBound(t *testing.T) {
	s := start(t, Options{MaxClients: 2})
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS"} {
		for _, p := range []string{"/", "/events"} {
			if code, _ := get(t, s, m, p); code != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: %d, want 405", m, p, code)
			}
		}
	}
	if code, _ := get(t, s, "HEAD", "/"); code != 200 {
		t.Errorf("HEAD /: %d", code)
	}
	if code, _ := get(t, s, "GET", "/nothing"); code != 404 {
		t.Errorf("GET /nothing: %d", code)
	}
	open := func() *http.Response {
		resp, err := http.Get("http://" + local(s) + "/events")
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	a, b := open(), open()
	defer b.Body.Close()
	if a.StatusCode != 200 || b.StatusCode != 200 || !strings.HasPrefix(a.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("streams: %d %d %q", a.StatusCode, b.StatusCode, a.Header.Get("Content-Type"))
	}
	c := open()
	c.Body.Close()
	if c.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("third stream with MaxClients 2: %d, want 503", c.StatusCode)
	}
	a.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for s.Clients() > 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	d := open()
	d.Body.Close()
	if d.StatusCode != 200 {
		t.Errorf("a stream after one closed: %d, want 200", d.StatusCode)
	}
}

// readEvents reads the event stream of s and sends each event's id and
// type until the stream ends.
func readEvents(t *testing.T, s *Server, out chan<- [2]string) {
	resp, err := http.Get("http://" + local(s) + "/events")
	if err != nil {
		close(out)
		return
	}
	defer resp.Body.Close()
	defer close(out)
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var id string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			id = strings.TrimPrefix(line, "id: ")
		case strings.HasPrefix(line, "event: "):
			out <- [2]string{id, strings.TrimPrefix(line, "event: ")}
		}
	}
}

// TestStalledClient: a page that sends its request and never reads does
// not slow the feeding calls (1,000 Ticks and SampleFinished calls well
// within 2 s), is dropped after the write deadline, does not hold back a
// page that reads, and benchrig's heap stays bounded while 10 MB of
// points go through.
func TestStalledClient(t *testing.T) {
	s := start(t, Options{WriteTimeout: 500 * time.Millisecond})
	d := net.Dialer{Timeout: 5 * time.Second, Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { _ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	stalled, err := d.Dial("tcp", local(s))
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	if _, err := io.WriteString(stalled, "GET /events HTTP/1.1\r\nHost: "+local(s)+"\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	events := make(chan [2]string, 1024)
	go readEvents(t, s, events)

	samples := fixtureSamples(t, "closed.json")
	s.SetPlan([]PlanItem{{ID: "big", Label: "a long sample"}}, time.Hour)
	s.SampleStarted("big", PhasesOf(result.Phases{Baseline: time.Second, Load: time.Hour}))
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	t0 := time.Now()
	for i := range 1000 {
		s.Tick(point(i))
		if i%100 == 0 {
			s.SampleFinished(&samples[i/100%len(samples)])
		}
	}
	if took := time.Since(t0); took > 2*time.Second {
		t.Errorf("1,000 feeding calls took %v with a stalled page, want well under 2 s", took)
	}
	// 10 MB of points (each Point is about 100 bytes), fed in bursts so
	// that the renderer draws full charts meanwhile.
	const perPoint = 96
	fed := 1000
	for fed*perPoint < 10<<20 {
		for range 10000 {
			s.Tick(point(fed))
			fed++
		}
		time.Sleep(50 * time.Millisecond)
	}
	deadline := time.Now().Add(15 * time.Second)
	for s.Clients() > 1 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := s.Clients(); n != 1 {
		t.Errorf("%d pages open, want 1: the stalled one is not dropped", n)
	}
	// the reading page still gets updates, with increasing ids
	last := 0
	got := 0
	wait := time.After(10 * time.Second)
	for got < 3 {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatal("the reading page's stream ended")
			}
			id, _ := strconv.Atoi(ev[0])
			if id <= last {
				t.Errorf("event id %d after %d", id, last)
			}
			last = id
			got++
			if got == 1 {
				s.Tick(point(fed)) // a change for the next update
				fed++
			}
			s.Tick(point(fed))
			fed++
		case <-wait:
			t.Fatalf("the reading page got %d updates in 10 s", got)
		}
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	const bound = 8 << 20
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > bound {
		t.Errorf("heap grew by %d MiB while %d MiB of points were fed, want under %d MiB", grew>>20, fed*perPoint>>20, bound>>20)
	}
	t.Logf("fed %d points (%d MiB); heap %d → %d MiB", fed, fed*perPoint>>20, before.HeapAlloc>>20, after.HeapAlloc>>20)
}

// point is a plausible second number i of a sample.
func point(i int) Point {
	return Point{Offset: time.Duration(i+1) * time.Second, Phase: "load", Requests: int64(1000 + i%50), P50US: 800, P99US: 2500 + int64(i%7)*100,
		ServerCPU: float64(i) * 0.8, ServerRSS: 50 << 20, ClientCPU: float64(i) * 0.3}
}

// TestEventIDsIncrease: every update of the stream has a larger id than
// the one before, and updates come at most about once a second however
// often the state changes.
func TestEventIDsIncrease(t *testing.T) {
	s := start(t, Options{})
	events := make(chan [2]string, 64)
	go readEvents(t, s, events)
	s.SetPlan([]PlanItem{{ID: "a"}, {ID: "b"}}, time.Minute)
	s.SampleStarted("a", PhasesOf(result.Phases{Load: 10 * time.Second}))
	stop := make(chan struct{})
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			s.Tick(point(i % 10))
			time.Sleep(time.Millisecond)
		}
	}()
	defer close(stop)
	t0 := time.Now()
	last, n := 0, 0
	for n < 4 {
		select {
		case ev := <-events:
			id, err := strconv.Atoi(ev[0])
			if err != nil || id <= last || ev[1] != "state" {
				t.Fatalf("event %q after id %d", ev, last)
			}
			last = id
			n++
		case <-time.After(10 * time.Second):
			t.Fatalf("%d events in 10 s", n)
		}
	}
	if el := time.Since(t0); el < 2*time.Second {
		t.Errorf("4 updates in %v while ticks came every millisecond: not coalesced to one a second", el)
	}
}

// TestFlood: a flood of connections (more than the server keeps open,
// each sending half a request) changes nothing for the run: the feeding
// calls stay prompt, and once the flood is gone the page is served.
func TestFlood(t *testing.T) {
	s := start(t, Options{MaxClients: 2})
	var conns []net.Conn
	for range 100 {
		c, err := net.DialTimeout("tcp", local(s), 5*time.Second)
		if err != nil {
			break // the kernel's backlog may refuse some: that is the flood's problem
		}
		_, _ = io.WriteString(c, "GET / HTTP/1.1\r\nHost: x")
		conns = append(conns, c)
	}
	t0 := time.Now()
	s.SetPlan([]PlanItem{{ID: "a"}}, time.Minute)
	s.SampleStarted("a", nil)
	for i := range 1000 {
		s.Tick(point(i))
	}
	if took := time.Since(t0); took > 2*time.Second {
		t.Errorf("1,000 feeding calls took %v during a flood, want well under 2 s", took)
	}
	for _, c := range conns {
		c.Close()
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := http.Get("http://" + local(s) + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page is not served after the flood: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
