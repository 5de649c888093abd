package result

import "time"

// Metrics is what a target's own metrics endpoint (Prometheus text format)
// said through one sample: the series asked for, read at every scrape from
// the baseline to the end of the recovery, and what the scraping cost.
type Metrics struct {
	// URL is the endpoint scraped (placeholders filled).
	URL string `json:"url"`
	// EverySeconds is the scrape period; one more scrape is taken at each
	// phase edge.
	EverySeconds float64 `json:"every_s"`
	// Series are the names asked for, in the suite's order.
	Series []string `json:"series"`
	// Points are the scrapes, in order.
	Points []MetricsPoint `json:"points,omitempty"`
	// Cost is what the scrapes cost benchrig (and the target: each scrape
	// is a request the target answers, its CPU counted in the server's).
	Cost MetricsCost `json:"cost"`
	// Notes say what went wrong (failed scrapes, malformed text, series
	// that were never found), at most a few lines.
	Notes []string `json:"notes,omitempty"`
}

// MetricsPoint is one scrape.
type MetricsPoint struct {
	// Time is the wall-clock time the scrape was sent, in UTC; reports
	// place it on the sample's time axis with it.
	Time time.Time `json:"time"`
	// Offset is the monotonic time of the scrape in seconds since the
	// scraper started.
	Offset float64 `json:"offset_s"`
	// Phase is the phase current when the scrape was sent.
	Phase string `json:"phase"`
	// Values holds each series found, by name: a family's name when it has
	// one metric without labels, else name{label="value",…}.
	Values map[string]float64 `json:"values,omitempty"`
	// Error says why the scrape gave no values (HTTP status, timeout,
	// malformed text).
	Error string `json:"error,omitempty"`
}

// MetricsCost is the client-side cost of the scrapes of one sample: they
// run on their own HTTP connection, never the load's.
type MetricsCost struct {
	// Scrapes counts every scrape; Failed those that gave no values;
	// InLoad those sent during the load phase.
	Scrapes int `json:"scrapes"`
	Failed  int `json:"failed"`
	InLoad  int `json:"in_load"`
	// WallSeconds is the total time between sending each scrape and
	// having parsed its answer.
	WallSeconds float64 `json:"wall_s"`
	// Bytes is the total size of the answers read.
	Bytes int64 `json:"bytes"`
}
