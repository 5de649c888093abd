package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/benchrig/benchrig/internal/report"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
)

// loadSource reads a results file for the report builders: a suite's
// results (JSON Lines, from benchrig run) or the document of a quick run
// (benchrig http|pg|resp -o). Smoke results are refused unless allowed.
func loadSource(path string, allowSmoke bool) (*report.Source, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if src, ok, err := report.QuickDoc(path, b); ok {
		return src, err
	}
	return suiteSource(path, allowSmoke)
}

// suiteSource reads a suite's results file.
func suiteSource(path string, allowSmoke bool) (*report.Source, error) {
	hdr, samples, footer, err := result.ReadFile(path)
	var torn *result.TornLineError
	if err != nil && !errors.As(err, &torn) {
		return nil, err
	}
	if hdr == nil {
		return nil, fmt.Errorf("%s: no header: not a benchrig results file", path)
	}
	if hdr.Smoke && !allowSmoke {
		return nil, fmt.Errorf("%s holds smoke results: they prove the suite runs, they are not figures (--allow-smoke to report them anyway)", path)
	}
	src := &report.Source{Path: path, Kind: "suite", Title: hdr.Suite.Name, Tool: hdr.Tool, Host: hdr.Host, Targets: hdr.Targets, Floor: hdr.Floor}
	src.Meta = append(src.Meta,
		report.KV{Key: "Suite", Value: fmt.Sprintf("%s (SHA-256 %s)", hdr.Suite.File, hdr.Suite.SHA256)},
		report.KV{Key: "Started", Value: hdr.Started.UTC().Format("2006-01-02 15:04:05 UTC")})
	if len(hdr.Suite.Overrides) > 0 {
		src.Meta = append(src.Meta, report.KV{Key: "Overrides", Value: strings.Join(hdr.Suite.Overrides, " ")})
	}
	// A report says whether its file verifies: checksum, plan, counts.
	rep, err := verifyResults(path)
	if err != nil {
		return nil, err
	}
	var problems []string
	for _, p := range rep.Problems {
		if !strings.HasPrefix(p, "incomplete:") {
			problems = append(problems, p)
		}
	}
	if len(problems) == 0 {
		src.Meta = append(src.Meta, report.KV{Key: "Verified", Value: fmt.Sprintf("checksum, plan and sample consistency OK (%d of %d planned samples)", rep.Samples, rep.Planned)})
	} else {
		for _, p := range problems {
			src.Notes = append(src.Notes, "benchrig verify: "+p)
		}
	}
	for _, w := range rep.Warnings {
		src.Notes = append(src.Notes, "benchrig verify: "+w)
	}
	if torn != nil {
		src.Notes = append(src.Notes, torn.Error()+".")
	}
	switch {
	case footer == nil:
		src.Notes = append(src.Notes, fmt.Sprintf("The file has no footer: the run did not finish (%d of %d planned samples); resume it with benchrig run --resume.", len(samples), len(hdr.Plan)))
	case footer.Interrupted:
		src.Notes = append(src.Notes, fmt.Sprintf("The run was interrupted after %d of %d planned samples; resume it with benchrig run --resume.", len(samples), len(hdr.Plan)))
	default:
		src.Meta = append(src.Meta, report.KV{Key: "Finished", Value: footer.Finished.UTC().Format("2006-01-02 15:04:05 UTC") + " · file SHA-256 " + footer.SHA256})
	}
	if hdr.Smoke {
		src.Notes = append(src.Notes, "Smoke results: they prove the suite runs, they are not figures.")
	}
	// Labels come from the samples; files written before samples carried
	// them get them from the recorded suite.
	var cells map[string]suite.Cell
	for i := range samples {
		s := &samples[i]
		c, v := s.Case, s.Variant
		if c == "" || v == "" {
			if cells == nil {
				p, err := replan(hdr.Suite.Resolved, hdr.Smoke)
				if err != nil {
					return nil, err
				}
				cells = map[string]suite.Cell{}
				for _, c := range p.Cells {
					cells[c.ID] = c
				}
			}
			cell, ok := cells[s.Cell]
			if !ok {
				return nil, fmt.Errorf("%s: sample %s: cell %q is not in the recorded suite's plan", path, s.Key, s.Cell)
			}
			c, v = cell.CaseLabel(), cell.VariantLabel()
		}
		src.Rows = append(src.Rows, report.Row{Case: c, Variant: v, Sample: s})
	}
	return src, nil
}
