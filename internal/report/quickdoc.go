package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/benchrig/benchrig/internal/result"
)

// QuickDoc reads b, the bytes of the file at path, as the document of a
// quick run (benchrig http|pg|resp -o: result.QuickSchema or
// result.QuickMatrixSchema). ok is false when b is not a JSON document with
// a schema: the caller reads it as a suite's results file (JSON Lines)
// instead. A document of another schema is refused, naming the ones
// accepted. QuickDoc is pure: it reads nothing but b.
func QuickDoc(path string, b []byte) (src *Source, ok bool, err error) {
	var probe struct {
		Schema string `json:"schema"`
	}
	if json.Unmarshal(b, &probe) != nil {
		return nil, false, nil
	}
	switch probe.Schema {
	case result.QuickSchema:
		src, err = quickSource(path, b)
	case result.QuickMatrixSchema:
		src, err = quickMatrixSource(path, b)
	case "":
		return nil, false, nil
	default:
		err = fmt.Errorf("%s: schema %q: want a results file of benchrig run, or the -o document of benchrig http, pg or resp (%s, %s)",
			path, probe.Schema, result.QuickSchema, result.QuickMatrixSchema)
	}
	return src, true, err
}

// quickSource reads the document of a one-sample quick run.
func quickSource(path string, b []byte) (*Source, error) {
	var q result.Quick
	if err := json.Unmarshal(b, &q); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s := &q.Sample
	src := &Source{Path: path, Kind: "quick", Title: "benchrig " + strings.Join(q.Args, " "), Tool: q.Tool, Host: q.Host}
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
	src.Rows = []Row{{Case: c, Variant: v, Sample: s}}
	if s.Target != nil {
		src.Targets = map[string]result.Provenance{v: provenanceOf(s.Target, nil)}
	}
	return src, nil
}

// quickMatrixSource reads the document of a quick run of several samples
// (benchrig pg, benchrig resp).
func quickMatrixSource(path string, b []byte) (*Source, error) {
	var q result.QuickMatrix
	if err := json.Unmarshal(b, &q); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(q.Samples) == 0 {
		return nil, errors.New(path + ": no samples")
	}
	src := &Source{Path: path, Kind: "quick-matrix", Title: "benchrig " + strings.Join(q.Args, " "), Tool: q.Tool, Host: q.Host}
	for i := range q.Samples {
		s := &q.Samples[i]
		c, v := s.Case, s.Variant
		if c == "" {
			c = s.Cell
		}
		if v == "" {
			v = s.Protocol
		}
		src.Rows = append(src.Rows, Row{Case: c, Variant: v, Sample: s})
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
