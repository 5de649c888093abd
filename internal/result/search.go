package result

import (
	"context"
	"errors"
	"fmt"

	"github.com/benchrig/benchrig/internal/capacity"
)

// SearchPlan is what a capacity search run searches: each cell of Cells
// with Config (its StepTime an estimate, not a bound).
type SearchPlan struct {
	Config capacity.Config `json:"config"`
	Cells  []string        `json:"cells"`
}

// SearchKey is the key of a search step's sample.
func SearchKey(cell string, s capacity.Step) string {
	return fmt.Sprintf("%s@s%d/%d", cell, s.Search, s.Index)
}

// errNotRecorded ends the replay of a search at its first step the file
// does not hold.
var errNotRecorded = errors.New("not recorded")

// ReplaySearch is cell's search as its recorded steps make it (a search is
// deterministic given its steps' verdicts): the result, whether the steps
// reach the search's end (false for an interrupted or cut search), and an
// error when the steps are not the ones the search asks for, in order.
// The config's MaxTime is not applied: a cut shows as steps missing.
func ReplaySearch(sp *SearchPlan, cell string, samples []Sample) (res capacity.Result, ended bool, err error) {
	cfg := sp.Config
	cfg.MaxTime = 0
	res, err = capacity.Search(context.Background(), cfg, capacity.ProberFunc(func(context.Context, capacity.Step) (capacity.Outcome, error) {
		return capacity.Outcome{}, errNotRecorded
	}), SearchSteps(cell, samples))
	if errors.Is(err, errNotRecorded) {
		return res, false, nil
	}
	return res, err == nil, err
}

// replaySearches checks each searched cell's recorded steps against the
// search: replayed from their verdicts, the search must ask for exactly
// these steps, in this order.
func replaySearches(sp *SearchPlan, samples []Sample) []string {
	var problems []string
	for _, cell := range sp.Cells {
		if _, _, err := ReplaySearch(sp, cell, samples); err != nil {
			problems = append(problems, fmt.Sprintf("cell %s: the recorded search steps are not the search's: %v", cell, err))
		}
	}
	return problems
}

// SearchSteps are the recorded steps of cell's search, in file order,
// with the outcome each sample's verdict gives.
func SearchSteps(cell string, samples []Sample) []capacity.StepResult {
	var out []capacity.StepResult
	for i := range samples {
		s := &samples[i]
		if s.Search == nil || s.Cell != cell {
			continue
		}
		out = append(out, capacity.StepResult{Step: *s.Search, Outcome: OutcomeOf(s)})
	}
	return out
}

// OutcomeOf is a search step's outcome: the sample's verdict and reasons
// (a failed sample is UNHEALTHY with its error), its achieved rate and
// latency, and the server's CPU per request when sampled.
func OutcomeOf(s *Sample) capacity.Outcome {
	o := capacity.Outcome{Healthy: s.Error == "" && s.Verdict.Healthy}
	switch {
	case s.Error != "":
		o.Reasons = []string{s.Error}
	case s.Verdict.ClientBound:
		// the step measured benchrig, not the server: said first, as the
		// limit the search met
		o.Reasons = append([]string{"client-bound: benchrig could not keep up (the server may hold more; more client CPUs or agents)"}, s.Verdict.Reasons...)
	default:
		o.Reasons = append(o.Reasons, s.Verdict.Reasons...)
	}
	if l := s.Load; l != nil {
		if l.Seconds > 0 {
			o.Achieved = float64(l.Requests) / l.Seconds
		}
		o.P50, o.P99 = float64(max(l.Latency.P(50), 0))/1e6, float64(max(l.Latency.P(99), 0))/1e6
	}
	return o
}
