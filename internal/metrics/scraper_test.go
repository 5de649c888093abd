package metrics

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// gaugeServer serves the Prometheus text format with a gauge that grows by
// 1000 at every scrape, a labelled counter and a summary; bad makes every
// answer malformed.
func gaugeServer(t *testing.T, bad *atomic.Bool) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		if bad != nil && bad.Load() {
			fmt.Fprintf(w, "# TYPE heap gauge\nheap{ 12\n")
			return
		}
		fmt.Fprintf(w, "# HELP heap bytes used\n# TYPE heap gauge\nheap %d\n", 1000*i)
		fmt.Fprintf(w, "# TYPE reqs counter\nreqs{code=\"200\"} %d\nreqs{code=\"500\"} 1\n", i)
		fmt.Fprintf(w, "# TYPE lat summary\nlat{quantile=\"0.5\"} 0.1\nlat_sum 2.5\nlat_count 10\n")
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestScraperRecordsChangingGauge: scrapes at the start, at each Mark and
// at Stop carry the phase current then, and the gauge's values grow as the
// server's did; the cost counts every scrape.
func TestScraperRecordsChangingGauge(t *testing.T) {
	srv, served := gaugeServer(t, nil)
	sc := Start(context.Background(), Config{URL: srv.URL + "/metrics", Every: time.Minute, Series: []string{"heap", "reqs", "lat"}})
	for _, ph := range []string{"baseline", "load", "recovery"} {
		waitScrapes(t, sc, ph)
	}
	rec := sc.Stop()
	if len(rec.Points) < 4 {
		t.Fatalf("%d points, want the first, one per phase and the last: %+v", len(rec.Points), rec.Points)
	}
	seen := map[string]bool{}
	var last float64
	for i, p := range rec.Points {
		if p.Error != "" {
			t.Fatalf("point %d: %s", i, p.Error)
		}
		seen[p.Phase] = true
		if p.Values["heap"] <= last {
			t.Errorf("point %d: heap %v after %v: want growing values", i, p.Values["heap"], last)
		}
		last = p.Values["heap"]
		if p.Values[`reqs{code="500"}`] != 1 || p.Values["lat_sum"] != 2.5 || p.Values["lat_count"] != 10 {
			t.Errorf("point %d: values %v", i, p.Values)
		}
	}
	for _, ph := range []string{"baseline", "load", "recovery"} {
		if !seen[ph] {
			t.Errorf("no scrape in phase %s", ph)
		}
	}
	if c := rec.Cost; c.Scrapes != len(rec.Points) || int64(c.Scrapes) != served.Load() || c.Failed != 0 || c.InLoad == 0 || c.Bytes == 0 || c.WallSeconds <= 0 {
		t.Errorf("cost %+v for %d points and %d requests served", c, len(rec.Points), served.Load())
	}
	if len(rec.Notes) != 0 {
		t.Errorf("notes %q", rec.Notes)
	}
}

// waitScrapes marks phase and waits until a scrape carries it.
func waitScrapes(t *testing.T, sc *Scraper, phase string) {
	t.Helper()
	sc.Mark(phase)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		sc.mu.Lock()
		n := len(sc.rec.Points)
		ok := n > 0 && sc.rec.Points[n-1].Phase == phase
		sc.mu.Unlock()
		if ok {
			return
		}
	}
	t.Fatalf("no scrape in phase %s", phase)
}

// TestScraperMalformedAndFailing: malformed text, a status other than 200
// and a closed port give failed points and one clear note each, never a
// crash; series absent from the text are named.
func TestScraperMalformedAndFailing(t *testing.T) {
	var bad atomic.Bool
	bad.Store(true)
	srv, _ := gaugeServer(t, &bad)
	notFound := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notFound.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	tests := []struct {
		name, url string
		series    []string
		want      string
	}{
		{"malformed", srv.URL, []string{"heap"}, "malformed Prometheus text: text format parsing error in line 2"},
		{"status", notFound.URL, []string{"heap"}, "status 404, want 200"},
		{"closed port", closedURL, []string{"heap"}, "connection refused"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sc := Start(context.Background(), Config{URL: tc.url, Every: time.Minute, Series: tc.series})
			waitScrapes(t, sc, "load")
			rec := sc.Stop()
			if rec.Cost.Failed != rec.Cost.Scrapes || rec.Cost.Scrapes < 2 {
				t.Fatalf("cost %+v: want every scrape failed", rec.Cost)
			}
			if len(rec.Notes) != 1 || !strings.Contains(rec.Notes[0], tc.want) || !strings.Contains(rec.Notes[0], "metrics scrapes failed") {
				t.Errorf("notes %q, want one containing %q", rec.Notes, tc.want)
			}
			for _, p := range rec.Points {
				if p.Values != nil || p.Error == "" {
					t.Errorf("point %+v: want an error and no values", p)
				}
			}
		})
	}
	t.Run("missing series", func(t *testing.T) {
		bad.Store(false)
		sc := Start(context.Background(), Config{URL: srv.URL, Every: time.Minute, Series: []string{"heap", "nope"}})
		rec := sc.Stop()
		if len(rec.Notes) != 1 || !strings.Contains(rec.Notes[0], "not in the scrape") || !strings.Contains(rec.Notes[0], "nope") {
			t.Errorf("notes %q", rec.Notes)
		}
	})
}

// TestNilScraper: a sample without an endpoint has a nil scraper.
func TestNilScraper(t *testing.T) {
	var sc *Scraper
	sc.Mark("load")
	if sc.Stop() != nil {
		t.Fatal("nil scraper returned a record")
	}
}

// FuzzMetricsText: no text makes the parser wrapper panic.
func FuzzMetricsText(f *testing.F) {
	f.Add("# TYPE heap gauge\nheap 12\n")
	f.Add("heap{a=\"b\"} 1\nheap{a=\"c\"} 2\n")
	f.Add("# TYPE h histogram\nh_bucket{le=\"+Inf\"} 3\nh_sum 1\nh_count 3\n")
	f.Fuzz(func(t *testing.T, s string) {
		_, _, _ = Parse(strings.NewReader(s), []string{"heap", "h"})
	})
}
