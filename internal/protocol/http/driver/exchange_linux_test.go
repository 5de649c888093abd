//go:build linux

package http

import (
	"bytes"
	"context"
	"io"
	stdhttp "net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/h2c"

	"github.com/benchrig/benchrig/internal/driver"
)

// seqExchange sends "req:SEQ" and accepts a response whose x-status
// trailer is "0" and whose body is "ok:" and the request's body; "status
// N" (the trailer's value) otherwise.
type seqExchange struct{}

func (seqExchange) AppendBody(dst []byte, seq uint64) []byte {
	return strconv.AppendUint(append(dst, "req:"...), seq, 10)
}
func (seqExchange) Fields() []string { return []string{"x-status", "x-len"} }
func (seqExchange) KeepBody() bool   { return true }
func (seqExchange) Judge(r Reply) (driver.Class, string) {
	switch {
	case !r.Trailers:
		return driver.Error, "no trailers"
	case r.Values[0] != "0":
		return driver.Error, "status " + r.Values[0]
	case !bytes.HasPrefix(r.Body, []byte("ok:req:")) || r.Values[1] != strconv.Itoa(len(r.Body)-3):
		return driver.Unexpected, "body"
	}
	return driver.OK, ""
}

// trailerServer is an h2c server answering every POST with "ok:" and its
// body, and the trailers x-status (0, or 7 for a body ending in 7) and
// x-len (the request body's length); it records each body once.
func trailerServer(t *testing.T) (string, func() map[string]int) {
	var mu sync.Mutex
	bodies := map[string]int{}
	h := stdhttp.HandlerFunc(func(w stdhttp.ResponseWriter, r *stdhttp.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies[string(b)]++
		mu.Unlock()
		w.Header().Set("Trailer", "x-status, x-len")
		w.WriteHeader(200)
		_, _ = w.Write(append([]byte("ok:"), b...))
		st := "0"
		if bytes.HasSuffix(b, []byte("7")) {
			st = "7"
		}
		w.Header().Set("x-status", st)
		w.Header().Set("x-len", strconv.Itoa(len(b)))
	})
	srv := httptest.NewServer(h2c.NewHandler(h, &http2.Server{}))
	t.Cleanup(srv.Close)
	return strings.Replace(srv.URL, "http://", "h2c://", 1) + "/svc/Call", func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return bodies
	}
}

// An Exchange's bodies go out per sequence number, its trailer fields and
// bodies come back to Judge, and its verdicts are the outcomes: on the
// event loop (streams refilled one by one) and on goroutine connections.
func TestExchangeBodiesAndTrailers(t *testing.T) {
	check := func(t *testing.T, bodies map[string]int, n int, ok int, msgs map[string]int) {
		t.Helper()
		if len(bodies) != n {
			t.Errorf("server saw %d distinct bodies, want %d", len(bodies), n)
		}
		for i := range n {
			if c := bodies["req:"+strconv.Itoa(i)]; c != 1 {
				t.Errorf("body req:%d seen %d times, want once", i, c)
			}
		}
		if want := n - n/10; ok != want || msgs["error: status 7"] != n/10 || len(msgs) != 1 {
			t.Errorf("%d ok, failures %v; want %d ok and %d \"error: status 7\"", ok, msgs, want, n/10)
		}
	}
	t.Run("loop", func(t *testing.T) {
		url, bodies := trailerServer(t)
		d, err := NewExchange(Config{URL: url, Method: "POST", Timeout: 10 * time.Second}, seqExchange{})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		l, err := d.OpenLoop(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		w := newTally(500)
		if err := l.Run(ctx, 8, 0, w); err != nil {
			t.Fatal(err)
		}
		check(t, bodies(), 500, w.ok, w.msgs)
	})
	t.Run("goroutines", func(t *testing.T) {
		url, bodies := trailerServer(t)
		d, err := NewExchange(Config{URL: url, Method: "POST", Timeout: 10 * time.Second}, seqExchange{})
		if err != nil {
			t.Fatal(err)
		}
		c, err := d.Open(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		reqs, out := make([]driver.Request, 10), make([]driver.Outcome, 10)
		ok, msgs := 0, map[string]int{}
		for b := range 10 {
			for i := range reqs {
				reqs[i].Seq = uint64(b*10 + i)
			}
			if err := c.Do(context.Background(), reqs, out); err != nil {
				t.Fatal(err)
			}
			for _, o := range out {
				if o.Class == driver.OK {
					ok++
				} else {
					msgs[o.Class.String()+": "+o.Msg]++
				}
			}
		}
		check(t, bodies(), 100, ok, msgs)
	})
}

// A response without trailers reaches Judge as such, and the probe says
// the exchange's verdict.
func TestExchangeNoTrailersAndProbe(t *testing.T) {
	srv := httptest.NewServer(h2c.NewHandler(stdhttp.HandlerFunc(func(w stdhttp.ResponseWriter, r *stdhttp.Request) {
		_, _ = io.WriteString(w, "ok:x")
	}), &http2.Server{}))
	t.Cleanup(srv.Close)
	d, err := NewExchange(Config{URL: "h2c://" + strings.TrimPrefix(srv.URL, "http://") + "/a", Method: "POST", Timeout: 5 * time.Second}, seqExchange{})
	if err != nil {
		t.Fatal(err)
	}
	err = d.Probe(context.Background())
	if err == nil || !strings.HasSuffix(err.Error(), ": no trailers") {
		t.Errorf("probe: %v, want the exchange's verdict \"no trailers\"", err)
	}
}

// An exchange needs HTTP/2 and brings its own body.
func TestExchangeRefusals(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{URL: "http://127.0.0.1:1/a", Method: "POST"}, "must speak HTTP/2"},
		{Config{URL: "h2c://127.0.0.1:1/a", Method: "POST", Body: "x"}, "gives none"},
	} {
		if _, err := NewExchange(c.cfg, seqExchange{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg, err, c.want)
		}
	}
}

// An exchange on the loop allocates nothing per request either.
func TestExchangeZeroAllocsPerRequest(t *testing.T) {
	srv := &h2Canned{windowBack: true}
	d, err := NewExchange(Config{URL: srv.start(t), Method: "POST"}, okExchange{})
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.OpenLoop(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	perRequestAllocs(t, l, 8, "")
}

// okExchange sends a fixed 12-byte body and accepts any 200.
type okExchange struct{}

func (okExchange) AppendBody(dst []byte, seq uint64) []byte {
	return append(dst, "\x00\x00\x00\x00\x07request"...)
}
func (okExchange) Fields() []string { return []string{"grpc-status"} }
func (okExchange) KeepBody() bool   { return true }
func (okExchange) Judge(r Reply) (driver.Class, string) {
	if r.Status != 200 || string(r.Body) != "hello" {
		return driver.Unexpected, "not hello"
	}
	return driver.OK, ""
}
