// Package metrics scrapes a target's own metrics endpoint (the Prometheus
// text exposition format, as prom-client and every Prometheus client
// library serve it) through a sample: every Config.Every and once more at
// each phase edge, on an HTTP connection of its own with a short timeout,
// never on the load's connections. It parses the answer with the
// Prometheus project's parser (github.com/prometheus/common/expfmt) and
// keeps the series the suite names, with what the scrapes cost.
//
// Example:
//
//	sc := metrics.Start(ctx, metrics.Config{URL: "http://127.0.0.1:8080/metrics",
//		Every: time.Second, Series: []string{"nodejs_heap_size_used_bytes"}})
//	sc.Mark("load")
//	// …
//	rec := sc.Stop() // a *result.Metrics for the sample
package metrics
