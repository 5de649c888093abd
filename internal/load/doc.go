// Package load is the load engine: it drives the connections of one
// driver (internal/driver) through one window at a time and records what
// happened, knowing no protocol.
//
// A window runs in one of two modes. Closed loop: every connection keeps
// Config.Pipeline requests in flight and sends the next as soon as one
// completes (as wrk and redis-benchmark do), on the driver's epoll event
// loop when it is a driver.Multiplexer, else a goroutine per connection.
// Constant rate (Config.Rate): an absolute schedule (constant or Poisson)
// across all connections, and latency is measured both from each
// request's due time (corrected: a slow server's queueing is measured, not
// hidden, as wrk2 does) and from its actual send (service time); due
// requests that find no free connection wait in a bounded backlog, beyond
// which they are dropped and counted. On a driver whose event loops pace
// (driver.PacedLoop) each loop follows its share of the schedule (every
// L-th request) with a timer armed for the next due time, so one wake-up
// sends every request due by then; otherwise one dispatcher sleeps until
// each due time (clock_nanosleep) and hands the request to a goroutine per
// connection.
//
// A window ends on time (Window.Duration) or by count (Window.Requests):
// the requests still outstanding at its end are counted as such, with the
// age of the oldest, and never waited for past the window. A window's
// result (result.Load) holds the latency histograms (HdrHistogram, merged
// losslessly across connections and agents), the outcome counts and the
// client's own CPU.
//
// Example:
//
//	e, err := load.New(load.Config{EngineConfig: result.EngineConfig{Connections: 10, Pipeline: 1}}, drv)
//	if err != nil {
//		return err
//	}
//	if err := e.Open(ctx); err != nil {
//		return err
//	}
//	defer e.Close()
//	l, err := e.Run(ctx, load.Window{Duration: 10 * time.Second})
package load
