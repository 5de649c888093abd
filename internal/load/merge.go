package load

import (
	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/result"
)

// merge combines the workers' recorders into one result.
func (e *Engine) merge(recs []*recorder, tl *timeline, start, end int64) (*result.Load, error) {
	res := &result.Load{
		Mode:        "closed",
		Connections: e.cfg.Connections,
		Pipeline:    e.cfg.Pipeline,
		Seconds:     float64(end-start) / 1e9,
		Messages:    map[string]int64{},
	}
	if e.cfg.Rate > 0 {
		res.Mode = "rate"
	}
	lat := result.NewHistogram()
	var service, lag = result.NewHistogram(), result.NewHistogram()
	ops := make([]opRecorder, len(e.ops))
	for i := range ops {
		ops[i].hist = result.NewHistogram()
	}
	last := 0
	for _, r := range recs {
		r.flushSecond()
		if r.sec > last {
			last = r.sec
		}
		lat.Merge(r.latency)
		if r.rate {
			service.Merge(r.service)
			lag.Merge(r.lag)
		}
		res.Sent += r.sent
		res.Bytes += r.bytes
		res.Reconnects += r.reconnects
		res.Resent += r.resent
		for m, n := range r.causes {
			if res.ReconnectCauses == nil {
				res.ReconnectCauses = map[string]int64{}
			}
			res.ReconnectCauses[m] += n
		}
		for m, n := range r.messages {
			res.Messages[m] += n
		}
		res.OutstandingAtEnd += r.outstanding
		res.OutstandingAnswered += r.answered
		res.Misses += r.misses
		res.OutstandingOldestUS = max(res.OutstandingOldestUS, r.oldest/1000)
		res.Errors += r.failed[failError]
		res.Timeouts += r.failed[failTimeout]
		res.Unexpected += r.failed[failUnexpected]
		for i := range r.ops {
			ops[i].hist.Merge(r.ops[i].hist)
			ops[i].requests += r.ops[i].requests
			ops[i].answered += r.ops[i].answered
			ops[i].misses += r.ops[i].misses
			for c := range ops[i].failed {
				ops[i].failed[c] += r.ops[i].failed[c]
			}
		}
	}
	res.Requests = lat.TotalCount()
	if len(res.Messages) == 0 {
		res.Messages = nil
	}
	var err error
	if res.Latency, err = result.Summarise(lat); err != nil {
		return nil, err
	}
	if e.cfg.Rate > 0 {
		s, err := result.Summarise(service)
		if err != nil {
			return nil, err
		}
		res.Service = &s
		l, err := result.Summarise(lag)
		if err != nil {
			return nil, err
		}
		res.Rate = &result.RateStats{Lag: l}
	}
	if len(e.ops) > 1 {
		for i, name := range e.ops {
			l, err := result.Summarise(ops[i].hist)
			if err != nil {
				return nil, err
			}
			res.Ops = append(res.Ops, result.OpStats{Name: name, Requests: ops[i].requests,
				Errors: ops[i].failed[failError], Timeouts: ops[i].failed[failTimeout], Unexpected: ops[i].failed[failUnexpected],
				Misses: ops[i].misses, OutstandingAnswered: ops[i].answered, Latency: l})
		}
	}
	res.Timeline = tl.seconds(last)
	if res.Seconds > 0 {
		res.RequestsPerSec = float64(res.Requests) / res.Seconds
		res.BytesPerSec = float64(res.Bytes) / res.Seconds
	}
	return res, nil
}

// backoff is a worker's driver.Backoff, slept through.
type backoff struct{ driver.Backoff }
