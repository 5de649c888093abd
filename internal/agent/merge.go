package agent

import (
	"fmt"
	"math"
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/result"
)

// Placed is one agent's part with where its window began on the
// coordinator's clock.
type Placed struct {
	Part *Part
	// Start is the part's window start on the coordinator's clock (the
	// agent's start minus its clock offset).
	Start time.Time
}

// Merge combines the agents' parts of one window into the sample's one
// result.Load, losslessly: every histogram (latency, service, lag, each
// operation's, each second's) is the HDR merge of the parts', every counter
// the sum, and the per-second timelines are aligned on the coordinator's
// clock (a part that began k whole seconds after the earliest is shifted by
// k). cfg is the whole cell's engine configuration (its rate is the target),
// w the window.
func Merge(parts []Placed, cfg load.Config, w load.Window) (*result.Load, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("merge: no parts")
	}
	res := &result.Load{Mode: parts[0].Part.Load.Mode, Pipeline: parts[0].Part.Load.Pipeline}
	start, end := parts[0].Start, time.Time{}
	for _, p := range parts {
		if p.Start.Before(start) {
			start = p.Start
		}
	}
	lat, service, lag := result.NewHistogram(), result.NewHistogram(), result.NewHistogram()
	var ops []*hdr.Histogram
	secs := map[int]*secondMerge{}
	var user, sys float64
	for k, pp := range parts {
		p := pp.Part.Load
		if p == nil {
			return nil, fmt.Errorf("merge: part %d has no load", k)
		}
		if e := pp.Start.Add(time.Duration(p.Seconds * 1e9)); e.After(end) {
			end = e
		}
		res.Connections += p.Connections
		res.Interrupted = res.Interrupted || p.Interrupted
		res.Sent += p.Sent
		res.Requests += p.Requests
		res.Bytes += p.Bytes
		res.Errors += p.Errors
		res.Timeouts += p.Timeouts
		res.Unexpected += p.Unexpected
		res.OutstandingAtEnd += p.OutstandingAtEnd
		res.OutstandingAnswered += p.OutstandingAnswered
		res.Misses += p.Misses
		res.OutstandingOldestUS = max(res.OutstandingOldestUS, p.OutstandingOldestUS)
		res.Reconnects += p.Reconnects
		res.Resent += p.Resent
		res.ReconnectCauses = addCounts(res.ReconnectCauses, p.ReconnectCauses)
		res.Messages = addCounts(res.Messages, p.Messages)
		if err := mergeInto(lat, p.Latency); err != nil {
			return nil, fmt.Errorf("part %d latency: %w", k, err)
		}
		if p.Service != nil {
			if err := mergeInto(service, *p.Service); err != nil {
				return nil, fmt.Errorf("part %d service: %w", k, err)
			}
		}
		if p.Rate != nil {
			if res.Rate == nil {
				res.Rate = &result.RateStats{Target: cfg.Rate, Arrival: p.Rate.Arrival}
			}
			res.Rate.Scheduled += p.Rate.Scheduled
			res.Rate.Late += p.Rate.Late
			res.Rate.Dropped += p.Rate.Dropped
			res.Rate.MaxBacklog += p.Rate.MaxBacklog
			if err := mergeInto(lag, p.Rate.Lag); err != nil {
				return nil, fmt.Errorf("part %d lag: %w", k, err)
			}
		}
		for i, o := range p.Ops {
			for len(res.Ops) <= i {
				res.Ops = append(res.Ops, result.OpStats{Name: o.Name})
				ops = append(ops, result.NewHistogram())
			}
			res.Ops[i].Requests += o.Requests
			res.Ops[i].Errors += o.Errors
			res.Ops[i].Timeouts += o.Timeouts
			res.Ops[i].Unexpected += o.Unexpected
			res.Ops[i].OutstandingAnswered += o.OutstandingAnswered
			res.Ops[i].Misses += o.Misses
			if err := mergeInto(ops[i], o.Latency); err != nil {
				return nil, fmt.Errorf("part %d op %s: %w", k, o.Name, err)
			}
		}
		shift := int(math.Round(pp.Start.Sub(start).Seconds()))
		if shift > maxPartSecond {
			return nil, fmt.Errorf("part %d starts %d s after the first: at most %d s accepted", k, shift, maxPartSecond)
		}
		if err := checkTimeline(p); err != nil {
			return nil, fmt.Errorf("part %d timeline: %w", k, err)
		}
		if err := mergeSeconds(secs, p.Timeline, pp.Part.Seconds, shift); err != nil {
			return nil, fmt.Errorf("part %d timeline: %w", k, err)
		}
		user += p.Client.UserSeconds
		sys += p.Client.SystemSeconds
		res.Client.UsableCores += p.Client.UsableCores
		res.Client.Saturated = res.Client.Saturated || p.Client.Saturated
	}
	res.Start, res.End = start.UTC(), end.UTC()
	res.Seconds = end.Sub(start).Seconds()
	var err error
	if res.Latency, err = result.Summarise(lat); err != nil {
		return nil, err
	}
	if res.Mode == "rate" {
		s, err := result.Summarise(service)
		if err != nil {
			return nil, err
		}
		res.Service = &s
	}
	for i := range res.Ops {
		if res.Ops[i].Latency, err = result.Summarise(ops[i]); err != nil {
			return nil, err
		}
	}
	if res.Seconds > 0 {
		res.RequestsPerSec = float64(res.Requests) / res.Seconds
		res.BytesPerSec = float64(res.Bytes) / res.Seconds
	}
	if res.Rate != nil {
		if res.Rate.Lag, err = result.Summarise(lag); err != nil {
			return nil, err
		}
		finishRate(res, w)
	}
	res.Timeline = timelineOf(secs)
	res.Client.UserSeconds, res.Client.SystemSeconds = user, sys
	if res.Seconds > 0 {
		res.Client.Cores = (user + sys) / res.Seconds
	}
	if cpu := user + sys; cpu > 0 {
		res.Client.RequestsPerCPUSecond = float64(res.Requests) / cpu
		if res.Requests > 0 {
			res.Client.CPUPerRequestUS = cpu * 1e6 / float64(res.Requests)
		}
	}
	return res, nil
}

// finishRate computes the merged open-loop figures as the engine does for
// one machine: coverage against the whole cell's rate.
func finishRate(res *result.Load, w load.Window) {
	r := res.Rate
	planned := w.Duration.Seconds()
	if planned == 0 && r.Target > 0 {
		planned = float64(w.Requests) / r.Target
	}
	if res.Interrupted && res.Seconds < planned {
		planned = res.Seconds
	}
	if res.Seconds > 0 {
		r.Achieved = float64(res.Requests) / res.Seconds
	}
	if planned > 0 && r.Target > 0 {
		r.Coverage = float64(res.Requests) / (r.Target * planned) * 100
	}
}

func mergeInto(h *hdr.Histogram, l result.Latency) error {
	if l.Histogram == "" {
		if l.Count > 0 {
			return fmt.Errorf("%d values but no histogram", l.Count)
		}
		return nil
	}
	d, err := l.Decode()
	if err != nil {
		return err
	}
	h.Merge(d)
	return nil
}

func addCounts(into, from map[string]int64) map[string]int64 {
	if len(from) == 0 {
		return into
	}
	if into == nil {
		into = map[string]int64{}
	}
	for k, v := range from {
		into[k] += v
	}
	return into
}

// secondMerge is one second of the merged timeline.
type secondMerge struct {
	count result.Second
	hist  *hdr.Histogram
}

// mergeSeconds adds a part's timeline, shifted by shift seconds, with its
// per-second histograms (hists[s], value and count pairs, for the part's
// second s).
// maxPartSecond bounds a part's timeline and its start after the first
// part's: the merged timeline has a row for every second between, so a
// part naming a far second (a broken or hostile agent) must not make it.
const maxPartSecond = 1 << 20

// checkTimeline refuses a part whose timeline names a second before its
// window or past it (its load seconds, plus a minute of drain and skew).
func checkTimeline(p *result.Load) error {
	last := min(int(math.Ceil(max(p.Seconds, 0)))+60, maxPartSecond)
	for _, s := range p.Timeline {
		if s.T < 0 || s.T > last {
			return fmt.Errorf("second %d outside the window of %.1f s (0 to %d accepted)", s.T, p.Seconds, last)
		}
	}
	return nil
}

func mergeSeconds(into map[int]*secondMerge, tl []result.Second, hists [][]int64, shift int) error {
	for _, s := range tl {
		t := s.T + shift
		m := into[t]
		if m == nil {
			m = &secondMerge{}
			into[t] = m
		}
		m.count.Requests += s.Requests
		m.count.Bytes += s.Bytes
		m.count.Errors += s.Errors
		if s.T >= 0 && s.T < len(hists) && len(hists[s.T]) > 0 {
			pairs := hists[s.T]
			if len(pairs)%2 != 0 {
				return fmt.Errorf("second %d: %d numbers, want value and count pairs", s.T, len(pairs))
			}
			if m.hist == nil {
				m.hist = load.NewSecondHistogram()
			}
			for i := 0; i < len(pairs); i += 2 {
				if pairs[i+1] < 0 {
					return fmt.Errorf("second %d: negative count %d", s.T, pairs[i+1])
				}
				if err := m.hist.RecordValues(pairs[i], pairs[i+1]); err != nil {
					return fmt.Errorf("second %d: %w", s.T, err)
				}
			}
		}
	}
	return nil
}

// timelineOf is the merged timeline from its first to its last second,
// empty seconds included.
func timelineOf(secs map[int]*secondMerge) []result.Second {
	if len(secs) == 0 {
		return []result.Second{}
	}
	first, last := math.MaxInt, math.MinInt
	for t := range secs {
		first, last = min(first, t), max(last, t)
	}
	first = min(first, 0)
	out := make([]result.Second, 0, last-first+1)
	for t := first; t <= last; t++ {
		row := result.Second{T: t - first}
		if m := secs[t]; m != nil {
			row.Requests, row.Bytes, row.Errors = m.count.Requests, m.count.Bytes, m.count.Errors
			if m.hist != nil && m.hist.TotalCount() > 0 {
				row.P50US = m.hist.ValueAtQuantile(50)
				row.P99US = m.hist.ValueAtQuantile(99)
			}
		}
		out = append(out, row)
	}
	return out
}
