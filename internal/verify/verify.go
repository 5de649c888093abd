// Package verify is the one verification every reading command goes
// through (verify, report, compare, export, checksum): a results file
// read once and checked against the plan its recorded suite expands to.
// It writes the verdict as verify prints it (lines or JSON), the notice
// of a file that does not verify, and the checksum a file is published
// with.
package verify

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/benchrig/benchrig/internal/plan"
	"github.com/benchrig/benchrig/internal/report"
	"github.com/benchrig/benchrig/internal/result"
)

// Check reads a results file once and verifies it against the plan its
// recorded suite expands to.
func Check(path string) (*result.Checked, error) {
	return result.Check(path, plan.RecordedEntries)
}

// CheckOf is Check of the file's bytes, read by the caller.
func CheckOf(path string, r io.Reader) *result.Checked {
	return result.CheckReader(path, r, plan.RecordedEntries)
}

// File is `benchrig verify PATH`: the verdict on stdout, as lines or
// (asJSON) as a benchrig.verify/v1 document, and an error when the file
// does not verify. Smoke results do not, unless allowSmoke.
func File(path string, allowSmoke, asJSON bool, stdout io.Writer) error {
	checked, err := Check(path)
	if err != nil {
		return err
	}
	rep := checked.Report
	if hdr := checked.Header; hdr != nil && hdr.Smoke && !allowSmoke {
		rep.Problems = append(rep.Problems, "smoke results: a smoke run proves the suite works, its figures are not results (--allow-smoke to verify it anyway)")
	}
	if asJSON {
		if err := WriteJSON(stdout, path, rep); err != nil {
			return err
		}
		if rep.OK() {
			return nil
		}
		return errors.New("verification failed")
	}
	if rep.OK() {
		if hdr := checked.Header; hdr != nil && hdr.Search != nil {
			fmt.Fprintf(stdout, "OK: %s: %d search steps of %d cells, checksum verified and every search replayed from its verdicts\n", path, rep.Samples, len(hdr.Search.Cells))
		} else {
			fmt.Fprintf(stdout, "OK: %s: %d of %d planned samples, checksum and plan verified\n", path, rep.Samples, rep.Planned)
		}
		for _, w := range rep.Warnings {
			fmt.Fprintf(stdout, "  ! %s\n", w)
		}
		return nil
	}
	fmt.Fprintln(stdout, strings.Join(rep.Notice(path, false), "\n"))
	return errors.New("verification failed")
}

// Notice is the verification notice of the file at path (what `benchrig
// verify` prints of a file that does not verify), or "" for a file that
// verifies.
func Notice(path string) string {
	c, err := Check(path)
	if err != nil {
		return fmt.Sprintf("FAILED verification: %s: %v\n", path, err)
	}
	if n := c.Report.Notice(path, false); len(n) > 0 {
		return strings.Join(n, "\n") + "\n"
	}
	return ""
}

// Schema names the format of `benchrig verify --json`.
const Schema = "benchrig.verify/v1"

// Doc is what `benchrig verify --json` writes: the file, the verdict (ok,
// incomplete or failed) and the report's counts and problems.
type Doc struct {
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

// WriteJSON writes a verification as JSON. File calls it when --json is
// given, in place of its lines, and returns the same error.
func WriteJSON(w io.Writer, path string, rep *result.Report) error {
	d := Doc{Schema: Schema, File: path, Samples: rep.Samples, Planned: rep.Planned, Complete: rep.Complete, Problems: append([]string{}, rep.Problems...), Warnings: rep.Warnings}
	d.Verdict = rep.Verdict()
	return report.JSON(w, d)
}
