package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	pgdrv "github.com/benchrig/benchrig/internal/driver/pg"
	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/report"
	"github.com/benchrig/benchrig/internal/result"
	runner "github.com/benchrig/benchrig/internal/run"
	"github.com/benchrig/benchrig/internal/target/postgres"
)

// pgCase is one level of the matrix: keys per request × connections.
type pgCase struct{ batch, conns int }

func (k pgCase) label() string {
	keys := "keys"
	if k.batch == 1 {
		keys = "key"
	}
	return fmt.Sprintf("%d %s · %d conns", k.batch, keys, k.conns)
}

// pgPlanned is one sample of the plan.
type pgPlanned struct {
	c      pgCase
	path   int
	repeat int
}

// pgPlan orders cases × paths × repeats fairly, as the suite planner does:
// in repeat r the cases run forward when r is odd and backward when it is
// even, and the paths, run next to each other at each case, are rotated
// left by r−1 so that each path runs first in turn.
func pgPlan(cases []pgCase, paths, repeats int) []pgPlanned {
	var out []pgPlanned
	for r := 1; r <= repeats; r++ {
		for i := range cases {
			ci := i
			if r%2 == 0 {
				ci = len(cases) - 1 - i
			}
			for k := 0; k < paths; k++ {
				out = append(out, pgPlanned{c: cases[ci], path: (k + r - 1) % paths, repeat: r})
			}
		}
	}
	return out
}

// pgConnectTimeout bounds reaching a --dsn server.
const pgConnectTimeout = 20 * time.Second

// pgRun is a validated invocation.
type pgRun struct {
	pf      *pgFlags
	dsn     string
	secret  string // the DSN's password, scrubbed from every output
	paths   []pgdrv.Config
	cases   []pgCase
	engines map[int]load.Config // by connections
	window  load.Window
	phases  runner.Phases
}

func runPG(ctx context.Context, c *cobra.Command, pf *pgFlags, stdout, stderr io.Writer) error {
	r, err := pf.validate(c)
	if err != nil {
		return err
	}
	if err := r.run(ctx, stdout, stderr); err != nil {
		return pgCleanErr(err, r.secret)
	}
	return nil
}

// pgCleanErr makes an error fit for the one line benchrig prints: the
// DSN's password replaced (the drivers already hide it; this is the last
// line of defence) and a multi-line message (pgx lists every connection
// attempt on its own line) joined into one, duplicates dropped. A usage
// error stays one.
func pgCleanErr(err error, secret string) error {
	msg := err.Error()
	clean := msg
	if secret != "" {
		clean = strings.ReplaceAll(clean, secret, postgres.Redacted)
	}
	if strings.Contains(clean, "\n") {
		var b strings.Builder
		seen := map[string]bool{}
		for _, line := range strings.Split(clean, "\n") {
			line = strings.TrimSpace(line)
			if line == "" || seen[line] {
				continue
			}
			seen[line] = true
			switch {
			case b.Len() == 0:
			case strings.HasSuffix(b.String(), ":"):
				b.WriteString(" ")
			default:
				b.WriteString("; ")
			}
			b.WriteString(line)
		}
		clean = b.String()
	}
	if clean == msg {
		return err
	}
	var u usageError
	if errors.As(err, &u) {
		return usageError{errors.New(clean)}
	}
	return errors.New(clean)
}

func (r *pgRun) run(ctx context.Context, stdout, stderr io.Writer) error {
	pf := r.pf
	maxConns := 0
	for _, k := range r.cases {
		maxConns = max(maxConns, k.conns)
	}
	opts := runner.PGOptions{Ephemeral: pf.ephemeral, DSN: r.dsn, Bin: pf.bin, SharedBuffers: pf.sharedBuffers,
		Dataset: postgres.Dataset{Table: pf.table, Rows: pf.rows, PayloadBytes: pf.payload}}
	if pf.ephemeral {
		opts.MaxConnections = pf.maxConns
		if opts.MaxConnections == 0 {
			opts.MaxConnections = postgres.MaxConnectionsFor(maxConns)
		}
	}
	sctx, cancel := ctx, context.CancelFunc(func() {})
	if !pf.ephemeral {
		// A server that does not answer (a dropped SYN) must not hang the run.
		sctx, cancel = context.WithTimeout(ctx, pgConnectTimeout)
	}
	srv, err := runner.StartPG(sctx, opts)
	cancel()
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := srv.Stop(sctx); err != nil {
			fmt.Fprintln(stderr, "benchrig: stop postgres:", err)
		}
	}()
	info := srv.Info()
	where := "ephemeral, data " + info.Dir
	if !pf.ephemeral {
		where = info.Name
	}
	proc := fmt.Sprintf("postmaster pid %d", info.PID)
	if info.PID == 0 {
		proc = "server process not visible here: no server figures"
	}
	fmt.Fprintf(stderr, "PostgreSQL %s · %s · %s\n", info.Version, where, proc)

	// Pre-flight at the largest batch: the plans recorded are its plans.
	probe := make([]pgdrv.Config, len(r.paths))
	for i, p := range r.paths {
		p.Workload.Batch = r.cases[0].batch
		for _, k := range r.cases {
			p.Workload.Batch = max(p.Workload.Batch, k.batch)
		}
		probe[i] = p
	}
	if err := srv.Prepare(ctx, probe, maxConns); err != nil {
		return err
	}

	plan := pgPlan(r.cases, len(r.paths), pf.repeats)
	if !pf.json {
		per := r.phases.Total() + time.Second
		fmt.Fprintf(stderr, "%s (%s × %s × %s), about %s\n", pgPlural(len(plan), "sample"), pgPlural(len(r.cases), "case"),
			pgPlural(len(r.paths), "path"), pgPlural(pf.repeats, "repeat"), (per * time.Duration(len(plan))).Round(time.Second))
	}
	var rows []report.Row
	for i, p := range plan {
		if ctx.Err() != nil {
			break
		}
		prefix := fmt.Sprintf("[%d/%d] ", i+1, len(plan))
		s, err := r.sample(ctx, srv, p, prefix, stderr)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			return err
		}
		rows = append(rows, report.Row{Case: p.c.label(), Variant: r.paths[p.path].Label(), Sample: s})
		if !pf.json {
			fmt.Fprintf(stderr, "%s%s · %s%s: %s\n", prefix, r.paths[p.path].Label(), p.c.label(), pgRepeatSuffix(p.repeat, pf.repeats), pgProgress(s))
		}
	}
	return r.finish(srv, rows, len(plan), stdout, ctx.Err() != nil)
}

// sample resets the dataset and measures one planned sample.
func (r *pgRun) sample(ctx context.Context, srv *runner.PGServer, p pgPlanned, prefix string, stderr io.Writer) (*result.Sample, error) {
	if err := srv.Reset(ctx); err != nil {
		return nil, err
	}
	path := r.paths[p.path]
	path.Workload.Batch = p.c.batch
	spec, err := srv.Spec(path)
	if err != nil {
		return nil, err
	}
	cfg := r.engines[p.c.conns]
	drvCfg := spec.Config
	spec.Config, err = json.Marshal(struct {
		Engine load.Config      `json:"engine"`
		Phases runner.Phases    `json:"phases"`
		PG     json.RawMessage  `json:"pg"`
		Server runner.PGOptions `json:"server"`
	}{cfg, r.phases, drvCfg, srv.Options()})
	if err != nil {
		return nil, err
	}
	spec.Engine, spec.Phases, spec.Thresholds = cfg, r.phases, r.pf.thresholds()
	spec.SamplerInterval, spec.SamplerNoPSS, spec.ClientCPUs = r.pf.interval, r.pf.noPSS, r.pf.clientCPUs
	spec.Cell = path.Label() + " · " + p.c.label()
	spec.Case, spec.Variant = p.c.label(), path.Label()
	spec.Repeat, spec.Key = p.repeat, fmt.Sprintf("%s#%d", spec.Cell, p.repeat)
	st := newStatus(stderr, prefix)
	spec.OnPhase, spec.OnEngine = st.setPhase, st.setEngine
	s := runner.Measure(ctx, spec)
	st.stop()
	r.scrub(s)
	return s, nil
}

// scrub removes the DSN's password from a sample's texts (the drivers
// already do; this is the last line of defence).
func (r *pgRun) scrub(s *result.Sample) {
	if r.secret == "" {
		return
	}
	clean := func(t string) string { return strings.ReplaceAll(t, r.secret, postgres.Redacted) }
	s.Error = clean(s.Error)
	for i, reason := range s.Verdict.Reasons {
		s.Verdict.Reasons[i] = clean(reason)
	}
	if s.Load != nil && len(s.Load.Messages) > 0 {
		m := make(map[string]int64, len(s.Load.Messages))
		for k, v := range s.Load.Messages {
			m[clean(k)] += v
		}
		s.Load.Messages = m
	}
}

// pgProgress is the one-line summary of a finished sample:
// "15,577 req/s, p99 3.20 ms, server 2.80 cores".
func pgProgress(s *result.Sample) string {
	if s.Error != "" {
		return "FAILED: " + s.Error
	}
	l := s.Load
	if l == nil {
		return "no load figures"
	}
	line := fmt.Sprintf("%s req/s, p99 %s", pgThousands(l.RequestsPerSec), result.FormatUS(l.Latency.P(99)))
	if f := l.Errors + l.Timeouts + l.Unexpected; f > 0 {
		line += fmt.Sprintf(", %d failed", f)
	}
	if s.Server != nil && s.Server.Figures.WindowSeconds > 0 {
		line += fmt.Sprintf(", server %.2f cores", s.Server.Figures.Cores)
	}
	if !s.Verdict.Healthy {
		line += " · UNHEALTHY"
	}
	return line
}

// pgPlural writes "1 case", "2 cases".
func pgPlural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// pgRepeatSuffix names the repeat when there are several.
func pgRepeatSuffix(r, n int) string {
	if n == 1 {
		return ""
	}
	return fmt.Sprintf(" · repeat %d/%d", r, n)
}

// pgThousands renders a rate rounded to a whole number with thousands
// separators: 15,577.
func pgThousands(v float64) string {
	s := strconv.FormatInt(int64(v+0.5), 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// finish prints the report (the full terminal report for a single sample,
// the comparison matrix otherwise) or the JSON document, writes -o, and
// maps the samples to the exit code.
func (r *pgRun) finish(srv *runner.PGServer, rows []report.Row, planned int, stdout io.Writer, interrupted bool) error {
	pf := r.pf
	doc := result.QuickMatrix{Schema: result.QuickMatrixSchema, Tool: toolInfo(), Host: result.ReadHost(), Args: pgRedactArgs(os.Args[1:], r.secret),
		Server: srv.Info(), Plans: srv.Plans(), Samples: []result.Sample{}}
	for _, row := range rows {
		doc.Samples = append(doc.Samples, *row.Sample)
	}
	if pf.out != "" {
		if err := writeJSONFile(pf.out, doc); err != nil {
			return err
		}
	}
	info := srv.Info()
	switch {
	case pf.json:
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return err
		}
	case planned == 1 && len(rows) == 1:
		row := rows[0]
		title := fmt.Sprintf("benchrig pg · PostgreSQL %s · %s · %s · %s", info.Version, row.Variant, row.Case,
			describeWindow(r.engines[r.cases[0].conns], r.window, r.phases.Warmup))
		if err := report.Terminal(stdout, row.Sample, report.TerminalOptions{Title: title, ShowVerdict: true}); err != nil {
			return err
		}
	default:
		fmt.Fprintf(stdout, "benchrig pg · PostgreSQL %s · %s workload · %d samples\n\n", info.Version, pf.kind, len(rows))
		if err := report.Matrix(stdout, rows); err != nil {
			return err
		}
	}
	if pf.out != "" && !pf.json {
		fmt.Fprintf(stdout, "\nResult written to %s\n", pf.out)
	}
	failed, unhealthy, first := 0, 0, ""
	for _, row := range rows {
		s := row.Sample
		if s.Error != "" {
			if failed++; first == "" {
				first = s.Error
			}
		}
		if !s.Verdict.Healthy {
			unhealthy++
		}
		if s.Load != nil && s.Load.Interrupted {
			interrupted = true
		}
	}
	switch {
	case failed == 1 && len(rows) == 1:
		return errors.New(first)
	case failed > 0:
		return fmt.Errorf("%d of %d samples failed; the first: %s", failed, len(rows), first)
	case interrupted:
		return fmt.Errorf("interrupted: %d of %d samples ran; the figures above cover what finished", len(rows), planned)
	case pf.failUnhealthy && unhealthy > 0:
		return errUnhealthy
	}
	return nil
}

// pgRedactArgs returns the command line with every DSN's password
// replaced: the value of --dsn, and the secret wherever else it appears.
func pgRedactArgs(args []string, secret string) []string {
	out := append([]string(nil), args...)
	for i := 0; i < len(out); i++ {
		switch a := out[i]; {
		case a == "--dsn" && i+1 < len(out):
			out[i+1] = postgres.Redact(out[i+1])
			i++
		case strings.HasPrefix(a, "--dsn="):
			out[i] = "--dsn=" + postgres.Redact(strings.TrimPrefix(a, "--dsn="))
		}
	}
	if secret != "" {
		for i := range out {
			out[i] = strings.ReplaceAll(out[i], secret, postgres.Redacted)
		}
	}
	return out
}
