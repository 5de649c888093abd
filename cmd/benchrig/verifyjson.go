package main

import (
	"io"

	"github.com/benchrig/benchrig/internal/report"
	"github.com/benchrig/benchrig/internal/result"
)

// verifySchema names the format of `benchrig verify --json`.
const verifySchema = "benchrig.verify/v1"

// verifyDoc is what `benchrig verify --json` writes: the file, the
// verdict (ok, incomplete or failed) and the report's counts and problems.
type verifyDoc struct {
	Schema   string   `json:"schema"`
	File     string   `json:"file"`
	Verdict  string   `json:"verdict"`
	Samples  int      `json:"samples"`
	Planned  int      `json:"planned"`
	Complete bool     `json:"complete"`
	Problems []string `json:"problems"`
	// Warnings are caveats of a file that verifies (samples measured
	// after --resume-changed).
	Warnings []string `json:"warnings,omitempty"`
}

// writeVerifyJSON writes a verification as JSON. verifyCmd calls it when
// --json is given, in place of its lines, and returns the same error.
func writeVerifyJSON(w io.Writer, path string, rep *result.Report) error {
	d := verifyDoc{Schema: verifySchema, File: path, Samples: rep.Samples, Planned: rep.Planned, Complete: rep.Complete, Problems: append([]string{}, rep.Problems...), Warnings: rep.Warnings}
	d.Verdict = rep.Verdict()
	return report.JSON(w, d)
}
