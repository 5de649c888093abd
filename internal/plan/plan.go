// Package plan reads a suite file to the plan benchrig runs (the seeds'
// environment overrides, --set, the checks run refuses on), re-expands the
// plan a results file recorded from its resolved suite, and writes a plan
// as the results file records it.
package plan

import (
	"encoding/json"
	"os"

	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
)

// Load reads a suite, applies the environment overrides of the seeds
// (CONNECTIONS, BATCHES, …) and --set, and expands the plan.
func Load(path string, sets []string, smoke bool) (*suite.Suite, *suite.Plan, error) {
	s, err := suite.Load(path)
	if err != nil {
		return nil, nil, exitcode.Usage(err)
	}
	if err := suite.ApplyOverrides(s, os.Getenv, sets); err != nil {
		return nil, nil, exitcode.Usage(err)
	}
	p, err := s.Plan()
	if err != nil {
		return nil, nil, exitcode.Usage(err)
	}
	// plan refuses what run would: a program path that is not there.
	if cwd, err := os.Getwd(); err == nil {
		if err := s.CheckPrograms(cwd); err != nil {
			return nil, nil, exitcode.Usage(err)
		}
	}
	if err := s.CheckPlacement(); err != nil {
		return nil, nil, exitcode.Usage(err)
	}
	if smoke {
		p = p.Smoke()
	}
	return s, p, nil
}

// Entries is the plan as the results file records it.
func Entries(p *suite.Plan) []result.PlanEntry {
	out := make([]result.PlanEntry, len(p.Samples))
	for i, s := range p.Samples {
		out[i] = result.PlanEntry{Index: s.Index, Key: s.Key, Cell: s.CellID, Repeat: s.Repeat}
	}
	return out
}

// Recorded re-expands the plan from a recorded, resolved suite.
func Recorded(resolved json.RawMessage, smoke bool) (*suite.Plan, error) {
	s, err := suite.Parse("recorded suite", resolved)
	if err != nil {
		return nil, err
	}
	p, err := s.Plan()
	if err != nil {
		return nil, err
	}
	if smoke {
		p = p.Smoke()
	}
	return p, nil
}

// RecordedEntries re-expands the plan entries from a recorded suite.
func RecordedEntries(resolved json.RawMessage, smoke bool) ([]result.PlanEntry, error) {
	p, err := Recorded(resolved, smoke)
	if err != nil {
		return nil, err
	}
	return Entries(p), nil
}
