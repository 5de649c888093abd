// Package export writes a results file's figures in other tools'
// formats: each sample's latency as an HdrHistogram percentile
// distribution (.hgrm).
package export

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/report"
	"github.com/benchrig/benchrig/internal/reportsrc"
	"github.com/benchrig/benchrig/internal/result"
)

// HgrmFile is `benchrig export hgrm PATH`: the .hgrm files of a case's
// samples (of one variant when given) in dir, after the file's notice
// when it does not verify.
func HgrmFile(path string, allowSmoke bool, caseName, variant, dir string, stdout io.Writer) error {
	src, err := reportsrc.Load(path, allowSmoke)
	if err != nil {
		return err
	}
	return reportsrc.WithNotice(Hgrm(src, caseName, variant, dir, stdout), src)
}

// Hgrm writes the .hgrm files of a case's samples into dir.
func Hgrm(src *report.Source, caseName, variant, dir string, stdout io.Writer) error {
	var cases, variants []string
	seenC, seenV := map[string]bool{}, map[string]bool{}
	var rows []report.Row
	for _, r := range src.Rows {
		if !seenC[r.Case] {
			seenC[r.Case] = true
			cases = append(cases, r.Case)
		}
		if r.Case == caseName && !seenV[r.Variant] {
			seenV[r.Variant] = true
			variants = append(variants, r.Variant)
		}
		if r.Case == caseName && (variant == "" || r.Variant == variant) {
			rows = append(rows, r)
		}
	}
	switch {
	case !seenC[caseName]:
		return exitcode.Usagef("--case %q: no such case in %s; it has %s", caseName, src.Path, strings.Join(reportsrc.QuoteAll(cases), ", "))
	case len(rows) == 0:
		return exitcode.Usagef("--variant %q: case %q has no such variant; it has %s", variant, caseName, strings.Join(reportsrc.QuoteAll(variants), ", "))
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("-o %s: %w", dir, err)
	}
	// a file that does not verify: its notice first, on stdout and at
	// the top of every file written ("#" lines, which the plotter skips).
	if len(src.Notice) > 0 {
		fmt.Fprintf(stdout, "%s\n\n", strings.Join(src.Notice, "\n"))
	}
	n := 0
	for i, r := range rows {
		s := r.Sample
		if s.Load == nil || s.Error != "" || s.Load.Latency.Count == 0 {
			fmt.Fprintf(stdout, "skipped %s repeat %d: no latencies recorded\n", r.Variant, s.Repeat)
			continue
		}
		rep := s.Repeat
		if rep == 0 {
			rep = i + 1
		}
		base := filepath.Join(dir, fmt.Sprintf("%s_%s_r%d", fileSafe(r.Case), fileSafe(r.Variant), rep))
		if err := writeHgrm(base+".hgrm", s.Load.Latency, src.Notice); err != nil {
			return err
		}
		n++
		if s.Load.Service != nil && s.Load.Service.Count > 0 {
			if err := writeHgrm(base+".service.hgrm", *s.Load.Service, src.Notice); err != nil {
				return err
			}
			n++
		}
	}
	fmt.Fprintf(stdout, "%d .hgrm file(s) written to %s\n", n, dir)
	return nil
}

// writeHgrm writes one latency distribution in HdrHistogram's percentile
// distribution format, values in milliseconds (the histograms hold µs),
// 5 ticks per half distance as wrk2 prints them; after the notice's lines,
// as "#" comments, when the results file does not verify.
func writeHgrm(path string, l result.Latency, notice []string) error {
	h, err := l.Decode()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	for _, line := range notice {
		if _, err := fmt.Fprintf(f, "# %s\n", line); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if _, err := h.PercentilesPrint(f, 5, 1000); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// fileSafe keeps letters, digits, dots and dashes of s, the rest as "-".
func fileSafe(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-'
		switch {
		case ok:
			b.WriteRune(r)
			dash = false
		case !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.Trim(b.String(), "-")
}
