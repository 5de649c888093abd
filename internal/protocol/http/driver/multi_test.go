package http

import (
	"fmt"
	"io"
	stdhttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/result"
)

// recordingServer remembers every request it answers as "METHOD /path
// body", in arrival order.
type recordingServer struct {
	mu   sync.Mutex
	seen []string
}

func (s *recordingServer) ServeHTTP(w stdhttp.ResponseWriter, r *stdhttp.Request) {
	b, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.seen = append(s.seen, r.Method+" "+r.URL.Path+" "+string(b))
	s.mu.Unlock()
	// for HEAD net/http sends Content-Length: 2 and no body: a parser
	// that forgot the request was HEAD would wait for the body.
	fmt.Fprint(w, "ok")
}

func (s *recordingServer) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.seen
	s.seen = nil
	return out
}

// threeRequests writes a request file of three requests with different
// methods, bodies and weights (3, 2, 1) for the server at url.
func threeRequests(t *testing.T, url string) []RequestSpec {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "order.json"), []byte(`{"item":42}`), 0o600); err != nil {
		t.Fatal(err)
	}
	host := strings.TrimPrefix(url, "http://")
	file := fmt.Sprintf("GET %[1]s/items weight=3\nAccept: application/json\n\nPOST http://%[1]s/orders weight=2\nContent-Type: application/json\n@order.json\n\nPUT %[1]s/items/7\n@<<END\nreplaced\nEND\n", host)
	p := filepath.Join(dir, "requests.txt")
	if err := os.WriteFile(p, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	reqs, err := LoadTargets(p)
	if err != nil {
		t.Fatal(err)
	}
	return reqs
}

var (
	seenGET  = "GET /items "
	seenPOST = `POST /orders {"item":42}`
	seenPUT  = "PUT /items/7 replaced\n"
)

func count(seen []string) map[string]int {
	m := map[string]int{}
	for _, s := range seen {
		m[s]++
	}
	return m
}

// Each request of the file is sent in its stated proportion (3:2:1),
// counted at the server, in both modes and with pipelining.
func TestRequestFileProportions(t *testing.T) {
	srv := &recordingServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	reqs := threeRequests(t, ts.URL)
	for _, lc := range []load.Config{
		{EngineConfig: result.EngineConfig{Connections: 3, Pipeline: 1}},
		{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 4}},
		{EngineConfig: result.EngineConfig{Connections: 3, Pipeline: 1, Rate: 3000}},
	} {
		for _, order := range []string{"cycle", "random"} {
			res, err := runEngine(t, Config{Requests: reqs, Order: order, Seed: 7, Timeout: 5 * time.Second}, lc, load.Window{Requests: 6000, Duration: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			got := count(srv.take())
			var dropped int64
			if res.Rate != nil {
				// a starved client may drop sends at a constant rate: every
				// request is then either answered or counted as dropped
				dropped = res.Rate.Dropped
			}
			if res.Requests+dropped != 6000 || res.Errors != 0 {
				t.Fatalf("%+v %s: %d ok, %d dropped, %d errors: %v", lc, order, res.Requests, dropped, res.Errors, res.Messages)
			}
			if dropped > 0 {
				t.Logf("%+v %s: %d sends dropped on this machine: proportions checked against what was sent", lc, order, dropped)
			}
			want := map[string]int{seenGET: 3000, seenPOST: 2000, seenPUT: 1000}
			if order == "cycle" && dropped == 0 && !reflect.DeepEqual(got, want) {
				t.Errorf("%+v cycle: server saw %v, want exactly %v", lc, got, want)
			}
			// the results break the figures down by request (Driver.Ops)
			byOp := map[string]int{}
			for _, o := range res.Ops {
				byOp[o.Name] = int(o.Requests)
			}
			if wantOps := map[string]int{"GET /items": got[seenGET], "POST /orders": got[seenPOST], "PUT /items/7": got[seenPUT]}; !reflect.DeepEqual(byOp, wantOps) {
				t.Errorf("%+v %s: per-request figures %v, the server saw %v", lc, order, byOp, wantOps)
			}
			if order == "random" && dropped == 0 {
				// binomial: 6000 draws, σ ≤ 37; 6σ is a reproducible bound
				// (the draws depend on the seed only).
				for k, n := range want {
					if d := got[k] - n; d < -220 || d > 220 {
						t.Errorf("%+v random: %q sent %d times, want about %d: %v", lc, k, got[k], n, got)
					}
				}
			}
		}
	}
}

// One connection, closed loop: the cycle's order is exact, and a random
// order is the same for the same seed and differs for another.
func TestRequestFileOrder(t *testing.T) {
	srv := &recordingServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	reqs := threeRequests(t, ts.URL)
	one := load.Config{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1}}
	run := func(order string, seed uint64, lc load.Config) []string {
		if _, err := runEngine(t, Config{Requests: reqs, Order: order, Seed: seed}, lc, load.Window{Requests: 60}); err != nil {
			t.Fatal(err)
		}
		return srv.take()
	}
	var want []string
	for i := 0; i < 10; i++ {
		want = append(want, seenGET, seenGET, seenGET, seenPOST, seenPOST, seenPUT)
	}
	for _, lc := range []load.Config{one, {EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1, Rate: 2000}}} {
		if got := run("cycle", 0, lc); !reflect.DeepEqual(got, want) {
			t.Errorf("%+v cycle order:\n%q\nwant\n%q", lc, got, want)
		}
	}
	a, b, c := run("random", 42, one), run("random", 42, one), run("random", 43, one)
	if !reflect.DeepEqual(a, b) {
		t.Errorf("random, seed 42 twice: different orders\n%q\n%q", a, b)
	}
	if reflect.DeepEqual(a, c) {
		t.Errorf("random, seeds 42 and 43: the same order %q", a)
	}
	if reflect.DeepEqual(a, want) {
		t.Errorf("random order is the cycle's")
	}
	// the goroutine path draws the same requests for the same seed
	if r := run("random", 42, load.Config{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1, Rate: 2000}}); !reflect.DeepEqual(r, a) {
		t.Errorf("random, seed 42, rate mode: %q, closed loop %q", r, a)
	}
}

// HEAD and GET mixed in one pipeline: each response is framed by its own
// request's method.
func TestRequestFileHeadInPipeline(t *testing.T) {
	srv := &recordingServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	reqs := []RequestSpec{{Method: "HEAD", URL: ts.URL + "/h"}, {Method: "GET", URL: ts.URL + "/g", Weight: 2}}
	for _, lc := range []load.Config{{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 5}}, {EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 1, Rate: 2000}}} {
		res, err := runEngine(t, Config{Requests: reqs, Timeout: 5 * time.Second}, lc, load.Window{Requests: 300})
		if err != nil {
			t.Fatal(err)
		}
		got := count(srv.take())
		if res.Requests != 300 || res.Errors != 0 || got["HEAD /h "] != 100 || got["GET /g "] != 200 {
			t.Errorf("%+v: %d ok, %v; server saw %v", lc, res.Requests, res.Messages, got)
		}
	}
}

func TestRequestsConfigErrors(t *testing.T) {
	a := RequestSpec{Method: "GET", URL: "http://127.0.0.1:1/a"}
	for _, tc := range []struct {
		cfg Config
		err string
	}{
		{Config{Requests: []RequestSpec{a, {Method: "GET", URL: "http://127.0.0.1:2/b"}}}, "request 2 (GET http://127.0.0.1:2/b) goes to 127.0.0.1:2, the others to 127.0.0.1:1: all requests of one run go to one host:port"},
		{Config{URL: "http://127.0.0.1:3/", Requests: []RequestSpec{a}}, "goes to 127.0.0.1:1, the others to 127.0.0.1:3"},
		{Config{Requests: []RequestSpec{a, {Method: "GET", URL: "http://127.0.0.1:1/", Weight: -1}}}, "request 2 (GET http://127.0.0.1:1/): weight -1: want 1–1000000"},
		{Config{Requests: []RequestSpec{a}, Order: "shuffle"}, `order "shuffle": want cycle or random`},
		{Config{URL: "http://127.0.0.1:1/", Order: "random"}, "picks among several"},
		{Config{Requests: []RequestSpec{a}, Body: "x"}, "set them per request"},
		{Config{Requests: []RequestSpec{{Method: "G T", URL: "http://127.0.0.1:1/"}}}, `request 1 (G T http://127.0.0.1:1/): method "G T"`},
	} {
		if _, err := New(tc.cfg); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%+v: error %v, want %q", tc.cfg, err, tc.err)
		}
	}
	// common headers apply to every request; a request's own win
	d, err := New(Config{Headers: map[string]string{"X-Common": "1", "accept": "text/plain"},
		Requests: []RequestSpec{a, {Method: "HEAD", URL: "http://127.0.0.1:1/b", Headers: map[string]string{"Accept": "*/*"}}}})
	if err != nil {
		t.Fatal(err)
	}
	got0, got1 := string(d.t.reqs[0].bytes), string(d.t.reqs[1].bytes)
	if want := "GET /a HTTP/1.1\r\nHost: 127.0.0.1:1\r\nUser-Agent: benchrig\r\nX-Common: 1\r\naccept: text/plain\r\n\r\n"; got0 != want {
		t.Errorf("request 1:\n%q\nwant\n%q", got0, want)
	}
	if want := "HEAD /b HTTP/1.1\r\nHost: 127.0.0.1:1\r\nUser-Agent: benchrig\r\nAccept: */*\r\nX-Common: 1\r\n\r\n"; got1 != want {
		t.Errorf("request 2:\n%q\nwant\n%q", got1, want)
	}
	if !d.t.reqs[1].head || d.t.reqs[0].head || !d.t.reqs[0].retry {
		t.Errorf("flags: %+v", d.t.reqs)
	}
	d, err = New(Config{Requests: []RequestSpec{a, a, {Method: "POST", URL: a.URL}}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.Ops(), []string{"GET /a", "GET /a #2", "POST /a"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Ops() = %q, want %q", got, want)
	}
	many := make([]RequestSpec, MaxOps+1)
	for i := range many {
		many[i] = a
	}
	if d, err = New(Config{Requests: many}); err != nil || !reflect.DeepEqual(d.Ops(), []string{"request"}) {
		t.Errorf("%d requests: Ops() = %q, %v; want one line for all", len(many), d.Ops(), err)
	}
	red := Config{Requests: []RequestSpec{{Method: "GET", URL: "http://h/", Headers: map[string]string{"Authorization": "Bearer s3cret"}}}}.Redacted()
	if red.Requests[0].Headers["Authorization"] != RedactedValue {
		t.Errorf("a request's secret header is recorded: %+v", red.Requests[0])
	}
}
