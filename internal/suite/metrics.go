package suite

import (
	"regexp"

	"github.com/benchrig/benchrig/internal/metrics"
)

// Metrics is a target's own metrics endpoint, in the Prometheus text
// format: benchrig scrapes it through every phase of every sample, on a
// connection of its own, and records the series named.
//
//	metrics: {url: "http://127.0.0.1:{port}/metrics", every: 1s,
//	          series: [nodejs_heap_size_used_bytes, process_resident_memory_bytes]}
type Metrics struct {
	// URL is the endpoint; {port} and the target's params are substituted.
	URL string `json:"url"`
	// Every is the scrape period (default 1s, 100ms to 1m); one more
	// scrape is taken at each phase edge.
	Every Duration `json:"every"`
	// Series are the metric family names to record (1 to 32).
	Series []string `json:"series"`
}

// metricNameRE is a classic Prometheus metric name.
var metricNameRE = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// metricsDefaults fills the scrape period when none was written.
func (s *Suite) metricsDefaults(f string, m *Metrics) {
	if m != nil && !s.loc.present(f+".every") {
		m.Every = Duration(metrics.DefaultEvery)
	}
}

// checkMetrics checks a target's metrics endpoint: an http URL, a period
// within bounds, and 1 to metrics.MaxSeries distinct metric names.
func (s *Suite) checkMetrics(f, kind string, m *Metrics) {
	if m == nil {
		return
	}
	l := s.loc
	if kind == KindPostgres || kind == KindRedis {
		l.errf(f, "not accepted for a %s target: it serves no HTTP metrics endpoint; a command, attach or address target may", kind)
	}
	if m.URL == "" {
		l.errf(f+".url", "required: the endpoint to scrape, e.g. http://127.0.0.1:{port}/metrics")
	} else {
		l.checkURL(f+".url", m.URL)
	}
	if e := m.Every.D(); e < metrics.MinEvery || e > metrics.MaxEvery {
		l.errf(f+".every", "must be between %s and %s, got %s", metrics.MinEvery, metrics.MaxEvery, m.Every)
	}
	switch n := len(m.Series); {
	case n == 0:
		l.errf(f+".series", "must name at least one metric, e.g. [nodejs_heap_size_used_bytes]")
	case n > metrics.MaxSeries:
		l.errf(f+".series", "at most %d series, got %d", metrics.MaxSeries, n)
	}
	seen := map[string]int{}
	for i, name := range m.Series {
		if !metricNameRE.MatchString(name) {
			l.errf(index(f+".series", i), "invalid metric name %q; accepted: letters, digits, '_' and ':', not starting with a digit", name)
		}
		if j, dup := seen[name]; dup {
			l.errf(index(f+".series", i), "duplicate series %q (also at [%d])", name, j)
		}
		seen[name] = i
	}
}
