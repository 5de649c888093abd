package suite_test

import (
	"bytes"
	"strings"
	"testing"

	_ "github.com/benchrig/benchrig/internal/protocol/all"
)

const searchHead = `name: cap
repeats: 1
phases: {load: 2s}
targets:
  web: {command: ["./srv"], ready: {tcp: "127.0.0.1:{port}"}}
paths:
  home: {http: {url: "http://127.0.0.1:{port}/"}}
`

// TestSearchBlock: a search block plans the matrix's cells without
// samples (the search decides its steps), prints its worst case, and
// refuses each field out of its bound, and set rates beside it.
func TestSearchBlock(t *testing.T) {
	s := mustParse(t, "s.yaml", searchHead+"matrix: {targets: [web], paths: [home], connections: [8, 32]}\nsearch: {rate: {from: 100, max: 10000}, confirm: 2, searches: 3}\n")
	p, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Cells) != 2 || len(p.Samples) != 0 || p.Search == nil {
		t.Fatalf("plan: %d cells, %d samples, search %v", len(p.Cells), len(p.Samples), p.Search)
	}
	c := p.Search.Config(0)
	if c.From != 100 || c.Max != 10000 || c.Confirm != 2 || c.Searches != 3 || c.Resolution != 0.05 || c.Factor != 2 {
		t.Errorf("config %+v", c)
	}
	steps, d := p.SearchWorstCase(p.Startup)
	if steps <= 0 || d <= 0 || p.Estimate(p.Startup) != d {
		t.Errorf("worst case %d steps, %s; estimate %s", steps, d, p.Estimate(p.Startup))
	}
	var b bytes.Buffer
	if err := p.Format(&b); err != nil || !strings.Contains(b.String(), "worst case:") || !strings.Contains(b.String(), "web/home/c=32") {
		t.Errorf("plan output %q (%v)", b.String(), err)
	}
	if sm := p.Smoke(); sm.Search != nil || len(sm.Samples) != 2 {
		t.Errorf("smoke plan of a search: search %v, %d samples", sm.Search, len(sm.Samples))
	}
	for _, tc := range []struct{ search, want string }{
		{`{rate: {from: 0, max: 100}}`, "search.rate.from: must be a rate between 0.001 and"},
		{`{rate: {from: 100, max: 50}}`, "search.rate.max: must be ≥ search.rate.from (100), got 50"},
		{`{rate: {from: 1, max: 2e7}}`, "search.rate.max: must be a rate between"},
		{`{rate: {from: 1, max: 10, resolution: 0.9}}`, "search.rate.resolution: must be a fraction between 0.001 and 0.5"},
		{`{rate: {from: 1, max: 10, factor: 1.01}}`, "search.rate.factor: must be between 1.1 and 10"},
		{`{rate: {from: 1, max: 10}, confirm: 101}`, "search.confirm: must be 0 to 100 samples, got 101"},
		{`{rate: {from: 1, max: 10}, searches: 1000}`, "search.searches: must be 1 to 100"},
	} {
		msg := firstErr(t, []byte(searchHead+"matrix: {targets: [web], paths: [home], connections: [8]}\nsearch: "+tc.search+"\n"))
		if !strings.Contains(msg, tc.want) {
			t.Errorf("search %s: got %q, want %q", tc.search, msg, tc.want)
		}
	}
	msg := firstErr(t, []byte(searchHead+"matrix: {targets: [web], paths: [home], connections: [8], rates: [100]}\nsearch: {rate: {from: 1, max: 10}}\n"))
	if !strings.Contains(msg, "matrix.rates: a search decides the rates") {
		t.Errorf("rates beside a search: %q", msg)
	}
}
