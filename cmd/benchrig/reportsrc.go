package main

import (
	"encoding/json"
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
	var probe struct {
		Schema string `json:"schema"`
	}
	if json.Unmarshal(b, &probe) == nil {
		switch probe.Schema {
		case result.QuickSchema:
			return quickSource(path, b)
		case result.QuickMatrixSchema:
			return quickMatrixSource(path, b)
		case "":
		default:
			return nil, fmt.Errorf("%s: schema %q: want a results file of benchrig run, or the -o document of benchrig http, pg or resp (%s, %s)",
				path, probe.Schema, result.QuickSchema, result.QuickMatrixSchema)
		}
	}
	return suiteSource(path, allowSmoke)
}

// suiteSource reads a suite's results file.
func suiteSource(path string, allowSmoke bool) (*report.Source, error) {
	hdr, samples, footer, err := result.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if hdr == nil {
		return nil, fmt.Errorf("%s: no header: not a benchrig results file", path)
	}
	if hdr.Smoke && !allowSmoke {
		return nil, fmt.Errorf("%s holds smoke results: they prove the suite runs, they are not figures (--allow-smoke to report them anyway)", path)
	}
	src := &report.Source{Path: path, Kind: "suite", Title: hdr.Suite.Name, Tool: hdr.Tool, Host: hdr.Host, Targets: hdr.Targets}
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

// quickSource reads the document of a one-sample quick run.
func quickSource(path string, b []byte) (*report.Source, error) {
	var q result.Quick
	if err := json.Unmarshal(b, &q); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s := &q.Sample
	src := &report.Source{Path: path, Kind: "quick", Title: "benchrig " + strings.Join(q.Args, " "), Tool: q.Tool, Host: q.Host}
	c, v := s.Case, s.Variant
	if c == "" {
		c = "run"
		if s.Load != nil {
			c = fmt.Sprintf("%d conns", s.Load.Connections)
		}
	}
	if v == "" {
		v = s.Protocol
		if s.Target != nil && s.Target.Name != "" {
			v = s.Target.Name
		}
	}
	src.Rows = []report.Row{{Case: c, Variant: v, Sample: s}}
	if s.Target != nil {
		src.Targets = map[string]result.Provenance{v: provenanceOf(s.Target, nil)}
	}
	return src, nil
}

// quickMatrixSource reads the document of a quick run of several samples
// (benchrig pg, benchrig resp).
func quickMatrixSource(path string, b []byte) (*report.Source, error) {
	var q result.QuickMatrix
	if err := json.Unmarshal(b, &q); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(q.Samples) == 0 {
		return nil, errors.New(path + ": no samples")
	}
	src := &report.Source{Path: path, Kind: "quick-matrix", Title: "benchrig " + strings.Join(q.Args, " "), Tool: q.Tool, Host: q.Host}
	for i := range q.Samples {
		s := &q.Samples[i]
		c, v := s.Case, s.Variant
		if c == "" {
			c = s.Cell
		}
		if v == "" {
			v = s.Protocol
		}
		src.Rows = append(src.Rows, report.Row{Case: c, Variant: v, Sample: s})
	}
	if q.Server != nil {
		name := q.Server.Name
		if name == "" {
			name = q.Server.Kind
		}
		src.Targets = map[string]result.Provenance{name: provenanceOf(q.Server, q.Plans)}
	}
	return src, nil
}

// provenanceOf is a target's provenance as a quick run records it.
func provenanceOf(t *result.TargetInfo, plans map[string]string) result.Provenance {
	return result.Provenance{Kind: t.Kind, Binary: t.Binary, SHA256: t.SHA256, Version: t.Version, Settings: t.Settings, Plans: plans}
}
