package capacity

import (
	"fmt"
	"slices"
	"strings"
)

// SearchResult is one search: its capacity, every step it took and what
// the steps above the capacity said.
type SearchResult struct {
	// Search is the search's number, from 1.
	Search int `json:"search"`
	// Capacity is the search's figure; zero (Bound empty) when the
	// search did not end (Cut, or aborted by an error).
	Capacity Estimate `json:"capacity"`
	// Steps are every step taken with its outcome, in order.
	Steps []StepResult `json:"steps"`
	// AboveRate is the rate one resolution step above the capacity (capped
	// at Max) at which Above were taken; 0 when none were.
	AboveRate float64 `json:"above_rate,omitempty"`
	// Above are the confirm-above steps (also in Steps).
	Above []StepResult `json:"above,omitempty"`
	// AboveHealthy is how many of Above were HEALTHY.
	AboveHealthy int `json:"above_healthy,omitempty"`
	// StepDowns is how many confirmations failed and stepped down.
	StepDowns int `json:"step_downs,omitempty"`
	// LimitingReason are the reasons of the first UNHEALTHY step above the
	// capacity (for BelowFrom, the first UNHEALTHY step); empty for
	// AtLeastMax.
	LimitingReason []string `json:"limiting_reason,omitempty"`
	// Notes say what the steps show of noise: inconsistent verdicts,
	// step-downs, HEALTHY samples above the capacity.
	Notes []string `json:"notes,omitempty"`
	// Cut is set when MaxTime stopped the search before it ended.
	Cut bool `json:"cut,omitempty"`
	// Lo and Hi are the bracket known when the search did not end: the
	// highest rate whose every sample was HEALTHY below Hi, and the
	// lowest rate with an UNHEALTHY sample; 0 for not seen.
	Lo float64 `json:"lo,omitempty"`
	// Hi: see Lo.
	Hi float64 `json:"hi,omitempty"`
}

// Result is a rate search's outcome over its searches.
//
// Median, Min and Max are over the searches that ended. The figures are
// ordered by rate, a BelowFrom figure (rate From) below an Exact one at
// From and an AtLeastMax figure (rate Max) above every Exact one, and
// each keeps its kind: the median of "≥ Max", "≥ Max" and 5000/s is "≥
// Max"; of "< From", 800/s and 900/s it is 800/s. With an even number of
// searches the median is the lower of the two middle figures: a rate a
// search confirmed, where the mean of the two could be one no search
// confirmed, and the mean of a bound and a figure has no meaning.
type Result struct {
	// Config is the search's configuration with its defaults filled.
	Config Config `json:"config"`
	// Searches are the searches run, in order (the last one cut or
	// aborted when the search did not end).
	Searches []SearchResult `json:"searches"`
	// Ended is how many searches ended (with a capacity).
	Ended int `json:"ended"`
	// Median, Min and Max are over the ended searches; zero when none
	// ended.
	Median Estimate `json:"median"`
	// Min: see Median.
	Min Estimate `json:"min"`
	// Max: see Median.
	Max Estimate `json:"max"`
	// LimitingReason is the median search's: the reasons of its first
	// UNHEALTHY step above its capacity.
	LimitingReason []string `json:"limiting_reason,omitempty"`
	// Cut is set when MaxTime stopped the search; the last search's Lo
	// and Hi are the bracket it knew, and Lo, Hi here repeat them.
	Cut bool `json:"cut,omitempty"`
	// Lo and Hi are the cut search's bracket (see SearchResult.Lo).
	Lo float64 `json:"lo,omitempty"`
	// Hi: see Lo.
	Hi float64 `json:"hi,omitempty"`
}

// summarize computes Ended, Median, Min, Max, LimitingReason and, when
// cut, the bracket.
func (r *Result) summarize() {
	var ended []*SearchResult
	for i := range r.Searches {
		if r.Searches[i].Capacity.Bound != "" {
			ended = append(ended, &r.Searches[i])
		}
	}
	r.Ended = len(ended)
	if r.Cut && len(r.Searches) > 0 {
		last := r.Searches[len(r.Searches)-1]
		r.Lo, r.Hi = last.Lo, last.Hi
	}
	if len(ended) == 0 {
		return
	}
	slices.SortStableFunc(ended, func(a, b *SearchResult) int {
		switch {
		case a.Capacity.less(b.Capacity):
			return -1
		case b.Capacity.less(a.Capacity):
			return 1
		}
		return 0
	})
	med := ended[(len(ended)-1)/2]
	r.Median, r.Min, r.Max = med.Capacity, ended[0].Capacity, ended[len(ended)-1].Capacity
	r.LimitingReason = slices.Clone(med.LimitingReason)
}

// String gives the result in one line: "capacity 1414.2/s [1300/s–1500/s]
// over 3 searches", with the cut's bracket when MaxTime cut it.
func (r Result) String() string {
	var b strings.Builder
	switch {
	case r.Ended == 0:
		b.WriteString("capacity unknown")
	case len(r.Searches) == 1 || r.Ended == 1:
		fmt.Fprintf(&b, "capacity %s", r.Median)
	default:
		fmt.Fprintf(&b, "capacity %s [%s–%s] over %d searches", r.Median, r.Min, r.Max, r.Ended)
	}
	if r.Cut {
		fmt.Fprintf(&b, "; cut by MaxTime %v in search %d with the bracket %s", r.Config.MaxTime, len(r.Searches), bracketString(r.Lo, r.Hi))
	}
	if len(r.LimitingReason) > 0 {
		fmt.Fprintf(&b, "; limited by %s", strings.Join(r.LimitingReason, ", "))
	}
	return b.String()
}

// bracketString prints a bracket with its unknown ends.
func bracketString(lo, hi float64) string {
	l, h := "none HEALTHY", "none UNHEALTHY"
	if lo > 0 {
		l = "HEALTHY at " + FormatRate(lo) + "/s"
	}
	if hi > 0 {
		h = "UNHEALTHY at " + FormatRate(hi) + "/s"
	}
	return l + ", " + h
}
