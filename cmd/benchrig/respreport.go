package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	respdrv "github.com/benchrig/benchrig/internal/driver/resp"
	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/report"
	"github.com/benchrig/benchrig/internal/result"
	runner "github.com/benchrig/benchrig/internal/run"
	"github.com/benchrig/benchrig/internal/target/postgres"
)

// respProgress is the one-line summary of a finished sample.
func respProgress(s *result.Sample) string {
	if s.Error != "" {
		return "FAILED: " + s.Error
	}
	l := s.Load
	if l == nil {
		return "no load figures"
	}
	line := fmt.Sprintf("%.0f req/s · p99 %s · %d failed", l.RequestsPerSec, result.FormatUS(l.Latency.P(99)), l.Errors+l.Timeouts+l.Unexpected)
	if s.Server != nil && s.Server.Figures.WindowSeconds > 0 {
		line += fmt.Sprintf(" · server %.2f cores", s.Server.Figures.Cores)
	}
	if h, ok := s.Stats["keyspace_hits"]; ok {
		line += fmt.Sprintf(" · %s hits, %s misses", strconv.FormatFloat(h, 'f', -1, 64), strconv.FormatFloat(s.Stats["keyspace_misses"], 'f', -1, 64))
	}
	if !s.Verdict.Healthy {
		line += " · UNHEALTHY"
	}
	return line
}

// respRow is one finished sample of the plan.
type respRow struct {
	c      respCase
	repeat int
	s      *result.Sample
	engine load.Config
	window load.Window
}

// finish prints the report (the full terminal report for a single sample,
// the comparison matrix otherwise) or the JSON document, writes -o, and
// maps the samples to the exit code.
func (rf *respFlags) finish(srv *runner.RedisServer, rows []respRow, planned int, stdout io.Writer, interrupted bool) error {
	doc := result.QuickMatrix{Schema: result.QuickMatrixSchema, Tool: toolInfo(), Host: result.ReadHost(), Args: respRedactArgs(os.Args[1:])}
	for _, r := range rows {
		doc.Samples = append(doc.Samples, *r.s)
	}
	if rf.out != "" {
		if err := writeJSONFile(rf.out, doc); err != nil {
			return err
		}
	}
	variant := rf.variant()
	switch {
	case rf.json:
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return err
		}
	case planned == 1 && len(rows) == 1:
		r := rows[0]
		title := fmt.Sprintf("benchrig resp %s · %s %s · %s", srv.Addr(), variant, r.c.label(), describeWindow(r.engine, r.window, rf.warmup))
		if err := report.Terminal(stdout, r.s, report.TerminalOptions{Title: title, ShowVerdict: rf.failUnhealthy || r.s.Server != nil}); err != nil {
			return err
		}
	default:
		info := srv.Info()
		fmt.Fprintf(stdout, "benchrig resp %s (%s %s) · %s · %d samples\n\n", srv.Addr(), info.Name, info.Version, variant, len(rows))
		mrows := make([]report.Row, len(rows))
		for i, r := range rows {
			mrows[i] = report.Row{Case: r.c.label(), Variant: variant, Sample: r.s}
		}
		if err := report.Matrix(stdout, mrows); err != nil {
			return err
		}
	}
	if rf.out != "" && !rf.json {
		fmt.Fprintf(stdout, "\nResult written to %s\n", rf.out)
	}
	failed, unhealthy, first := 0, 0, ""
	for _, r := range rows {
		if r.s.Error != "" {
			if failed++; first == "" {
				first = r.s.Error
			}
		}
		if !r.s.Verdict.Healthy {
			unhealthy++
		}
		if r.s.Load != nil && r.s.Load.Interrupted {
			interrupted = true
		}
	}
	switch {
	case failed == 1 && len(rows) == 1:
		return fmt.Errorf("%s", first)
	case failed > 0:
		return fmt.Errorf("%d of %d samples failed; the first: %s", failed, len(rows), first)
	case interrupted:
		return fmt.Errorf("interrupted: %d of %d samples ran; the figures above cover what finished", len(rows), planned)
	case rf.failUnhealthy && unhealthy > 0:
		return errUnhealthy
	}
	return nil
}

// respRedactArgs returns the command line with the password of a
// --fill-from-pg-dsn replaced; AUTH tokens never are on it (only where they
// are: --token-env, --token-file).
// variant names the command measured, the column of the report.
func (rf *respFlags) variant() string {
	if v := strings.ToUpper(rf.command); v != "CUSTOM" {
		return v
	}
	return respdrv.CommandCustom
}

func respRedactArgs(args []string) []string {
	out := append([]string(nil), args...)
	for i := 0; i < len(out); i++ {
		switch a := out[i]; {
		case a == "--fill-from-pg-dsn" && i+1 < len(out):
			out[i+1] = postgres.Redact(out[i+1])
			i++
		case strings.HasPrefix(a, "--fill-from-pg-dsn="):
			out[i] = "--fill-from-pg-dsn=" + postgres.Redact(strings.TrimPrefix(a, "--fill-from-pg-dsn="))
		}
	}
	return out
}

func jsonRaw(v any) (json.RawMessage, error) { return json.Marshal(v) }
