package suite_test

import (
	"strings"
	"testing"
	"time"

	_ "github.com/benchrig/benchrig/internal/protocol/all"
	. "github.com/benchrig/benchrig/internal/suite"
)

// metricsSuite is okHead with the web target's metrics line replaced.
func metricsSuite(metrics string) string {
	return strings.Replace(okHead, `port: 8080}`, `port: 8080, params: {v: [a, b]}, env: {V: "{v}"}`+metrics+`}`, 1) + okMatrix
}

// TestMetricsKey: a target's metrics endpoint parses with its default
// period, its URL's params are filled per variant ({port} left for the
// runner), and each bad value is refused at its field with the bound.
func TestMetricsKey(t *testing.T) {
	s := mustParse(t, "s.yaml", metricsSuite(`, metrics: {url: "http://127.0.0.1:{port}/metrics?v={v}", series: [nodejs_heap_size_used_bytes, process_resident_memory_bytes]}`))
	m := s.Targets["web"].Metrics
	if m == nil || m.Every.D() != time.Second || len(m.Series) != 2 {
		t.Fatalf("metrics %+v: want every 1s and two series", m)
	}
	tf, err := s.TargetFor(Cell{Target: "web", Params: map[string]string{"v": "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := tf.Metrics.URL; got != "http://127.0.0.1:{port}/metrics?v=b" {
		t.Errorf("URL %q", got)
	}
	many := make([]string, 33)
	for i := range many {
		many[i] = "m" + strings.Repeat("x", i)
	}
	for _, tc := range []struct{ metrics, want string }{
		{`, metrics: {series: [a]}`, `targets.web.metrics.url: required`},
		{`, metrics: {url: "ftp://x/", series: [a]}`, `targets.web.metrics.url: not an http URL`},
		{`, metrics: {url: "http://127.0.0.1:{prt}/", series: [a]}`, `unknown placeholder {prt}`},
		{`, metrics: {url: "http://127.0.0.1:{port}/", every: 10ms, series: [a]}`, `targets.web.metrics.every: must be between 100ms and 1m0s, got 10ms`},
		{`, metrics: {url: "http://127.0.0.1:{port}/", every: 2m, series: [a]}`, `must be between 100ms and 1m0s, got 2m0s`},
		{`, metrics: {url: "http://127.0.0.1:{port}/"}`, `targets.web.metrics.series: must name at least one metric`},
		{`, metrics: {url: "http://127.0.0.1:{port}/", series: [` + strings.Join(many, ", ") + `]}`, `at most 32 series, got 33`},
		{`, metrics: {url: "http://127.0.0.1:{port}/", series: [a, 9b]}`, `targets.web.metrics.series[1]: invalid metric name "9b"`},
		{`, metrics: {url: "http://127.0.0.1:{port}/", series: [a, a]}`, `duplicate series "a" (also at [0])`},
		{`, metrics: {url: "http://127.0.0.1:{port}/", serie: [a]}`, `unknown key "serie"; accepted: every, series, url`},
	} {
		got := firstErr(t, []byte(metricsSuite(tc.metrics)))
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.metrics, got, tc.want)
		}
	}
}
