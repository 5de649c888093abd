package quick

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/metrics"
)

// Metrics are the options of a quick run that scrapes the target's own
// metrics endpoint (Prometheus text format) through every phase.
type Metrics struct {
	// MetricsURL is the endpoint; "" scrapes nothing.
	MetricsURL string
	// MetricsSeries are the family names to record (comma-separated on
	// the command line).
	MetricsSeries []string
	// MetricsEvery is the scrape period (0: metrics.DefaultEvery).
	MetricsEvery time.Duration
}

// Doc is the suite's metrics key of the options, nil when no URL
// is given; the flags are checked under their own names.
func (m Metrics) Doc() (Doc, error) {
	if m.MetricsURL == "" {
		if len(m.MetricsSeries) > 0 || m.MetricsEvery != 0 {
			return nil, fmt.Errorf("--metrics-series and --metrics-every need --metrics-url: the endpoint to scrape")
		}
		return nil, nil
	}
	u, err := url.Parse(m.MetricsURL)
	switch {
	case err == nil && u.User != nil:
		return nil, fmt.Errorf("--metrics-url: credentials in the URL are not accepted (it is recorded with the results)")
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return nil, fmt.Errorf("--metrics-url %q: accepted: http://host:port/path", m.MetricsURL)
	}
	every := m.MetricsEvery
	if every == 0 {
		every = metrics.DefaultEvery
	}
	if every < metrics.MinEvery || every > metrics.MaxEvery {
		return nil, fmt.Errorf("--metrics-every must be between %s and %s, got %s", metrics.MinEvery, metrics.MaxEvery, every)
	}
	var series []string
	for _, s := range m.MetricsSeries {
		if s = strings.TrimSpace(s); s != "" {
			series = append(series, s)
		}
	}
	switch n := len(series); {
	case n == 0:
		return nil, fmt.Errorf("--metrics-url needs --metrics-series: the metric names to record, e.g. nodejs_heap_size_used_bytes,process_resident_memory_bytes")
	case n > metrics.MaxSeries:
		return nil, fmt.Errorf("--metrics-series: at most %d series, got %d", metrics.MaxSeries, n)
	}
	return Doc{"url": m.MetricsURL, "every": every.String(), "series": series}, nil
}

// Limits are the --limit-* flags of a quick mode that starts its target:
// the suite target's limits (bounded as the suite bounds them).
type Limits struct {
	CPUs, Memory, Swap, Pids string
}

// Doc is the target's limits: block, nil when no flag was given.
func (l Limits) Doc() Doc {
	d := Doc{}
	for _, f := range []struct{ k, v string }{{"cpus", l.CPUs}, {"memory", l.Memory}, {"swap", l.Swap}, {"pids", l.Pids}} {
		if f.v != "" {
			d[f.k] = f.v
		}
	}
	if len(d) == 0 {
		return nil
	}
	return d
}
