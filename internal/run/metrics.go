package run

import (
	"context"

	"github.com/benchrig/benchrig/internal/metrics"
)

// startMetrics starts scraping the target's metrics endpoint, if it names
// one, from the baseline to the end of the sample (nil: none; the
// scraper's methods accept nil).
func startMetrics(ctx context.Context, cfg *metrics.Config) *metrics.Scraper {
	if cfg == nil || cfg.URL == "" {
		return nil
	}
	return metrics.Start(ctx, *cfg)
}
