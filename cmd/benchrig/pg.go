package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	pgdrv "github.com/benchrig/benchrig/internal/driver/pg"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/target/postgres"
	"github.com/benchrig/benchrig/internal/workload"
)

// pgFlags are the flags of benchrig pg.
type pgFlags struct {
	quickFlags
	batches intList
	paths   []string

	ephemeral     bool
	dsn           string
	dsnEnv        string
	maxConns      int
	sharedBuffers string
	bin           string

	sql        string
	pgBatch    string
	table      string
	kind       string
	rows       int64
	payload    int
	hot        int64
	writes     float64
	writeEvery int
	timeout    time.Duration
}

// quickDSNEnv carries a --dsn to the in-memory suite's postgres target
// (dsn_env), so that the suite, recorded in the results file, never holds
// it; a --resume of the file reads it from the same flag again.
const quickDSNEnv = "BENCHRIG_QUICK_DSN"

func pgCmd(a *app) *cobra.Command {
	var pf pgFlags
	c := &cobra.Command{
		Use:   "pg (--ephemeral | --dsn DSN)",
		Short: "Quick PostgreSQL load test: access paths compared over a matrix of batch × connections (a suite of one target)",
		Example: `  benchrig pg --ephemeral --path prepared-one,any --batch 1,64 -c 4,64 -d 3s
  benchrig pg --dsn-env DATABASE_URL --path any,sql --sql 'SELECT array_to_json(array_agg(row_to_json(t))) FROM items t JOIN unnest($1::bigint[]) WITH ORDINALITY k(id, n) USING (id)' --batch 64
  benchrig pg --ephemeral --path prepared-one,prepared-one/pipeline --batch 16 --writes 5 -r 3 -o pg.json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runPG(a, c, &pf)
		},
	}
	pf.quickFlags.register(c, 10)
	f := c.Flags()
	pf.batches = intList{v: []int{1}}
	f.Var(&pf.batches, "batch", "keys per request; a list such as 1,64 runs one case per value")
	f.StringSliceVar(&pf.paths, "path", []string{string(pgdrv.PreparedOne)},
		"access paths to compare: prepared-one, prepared-one/pipeline, any, sql, update (a list)")
	f.BoolVar(&pf.ephemeral, "ephemeral", false, "start a throwaway PostgreSQL server with the demo table for the run, and remove it after")
	f.StringVar(&pf.dsn, "dsn", "", "an existing server's connection string (redacted in every output; default $PGDSN, then $DATABASE_URL)")
	f.StringVar(&pf.dsnEnv, "dsn-env", "", "environment variable holding the connection string")
	f.IntVar(&pf.maxConns, "max-connections", 0, "max_connections of the --ephemeral server (default: the most connections + 10)")
	f.StringVar(&pf.sharedBuffers, "shared-buffers", postgres.DefaultSharedBuffers, "shared_buffers of the --ephemeral server")
	f.StringVar(&pf.bin, "pg-bin", "", "directory of initdb and postgres for --ephemeral (default: the newest installation found)")
	f.StringVar(&pf.sql, "sql", "", "the sql path's statement; $1 is the batch of keys (bigint[])")
	f.StringVar(&pf.pgBatch, "pg-batch", string(pgdrv.Roundtrips), "how prepared-one sends a batch: roundtrips or pipeline")
	f.StringVar(&pf.table, "table", postgres.DefaultTable, "the benchmark table")
	f.StringVar(&pf.kind, "workload", string(workload.Hot), "key sequence: hot, cold, uniform or zipf (mixed: hot with --writes 5)")
	f.Int64Var(&pf.rows, "rows", postgres.DefaultRows, "rows of the table (keys 1…rows)")
	f.IntVar(&pf.payload, "payload-bytes", postgres.DefaultPayloadBytes, "bytes of each row's payload column (--ephemeral)")
	f.Int64Var(&pf.hot, "hot", 0, "hot set of a hot workload (default 128)")
	f.Float64Var(&pf.writes, "writes", 0, "percent of operations that update a row (suites' writes:), e.g. 5")
	f.IntVar(&pf.writeEvery, "write-every", 0, "update every Nth operation (the same as --writes 100/N)")
	durationVarP(f, &pf.timeout, "timeout", "", pgdrv.DefaultTimeout, "per-request timeout")
	// pg's own phase defaults: a short sampled idle around each window.
	f.Lookup("baseline").DefValue, f.Lookup("settle").DefValue, f.Lookup("recovery").DefValue = "1s", "500ms", "1s"
	return c
}

// pathDocs turns --path into the suite's pg paths, by name.
func (pf *pgFlags) pathDocs(c *cobra.Command) (doc, []string, error) {
	mode := strings.ToLower(pf.pgBatch)
	if mode != string(pgdrv.Roundtrips) && mode != string(pgdrv.Pipeline) {
		return nil, nil, usagef("--pg-batch %q: accepted modes are roundtrips, pipeline", pf.pgBatch)
	}
	names := pf.paths
	if !c.Flags().Changed("path") && pf.writes >= 100 {
		names = []string{string(pgdrv.Update)}
	}
	paths, order := doc{}, []string(nil)
	hasSQL, prepared := false, false
	for _, name := range names {
		name = strings.ToLower(strings.TrimSpace(name))
		p := doc{"table": pf.table, "timeout": pf.timeout.String()}
		switch name {
		case string(pgdrv.PreparedOne):
			p["path"], p["batching"], prepared = name, mode, true
		case "prepared-one/roundtrips", "prepared-one/pipeline":
			p["path"], p["batching"], prepared = string(pgdrv.PreparedOne), strings.TrimPrefix(name, "prepared-one/"), true
		case string(pgdrv.Any), string(pgdrv.Update):
			p["path"] = name
		case string(pgdrv.SQL):
			if strings.TrimSpace(pf.sql) == "" {
				return nil, nil, usagef("--path sql needs --sql 'SELECT …' taking the key array as $1 (bigint[])")
			}
			p["sql"], hasSQL = pf.sql, true
		default:
			return nil, nil, usagef("--path %q: accepted paths are prepared-one, prepared-one/pipeline, any, sql, update", name)
		}
		key := suiteName(strings.ReplaceAll(name, "/", "-"))
		if _, dup := paths[key]; dup {
			return nil, nil, usagef("--path %s is given twice", name)
		}
		paths[key] = doc{"pg": p}
		order = append(order, key)
	}
	if len(order) == 0 {
		return nil, nil, usagef("--path: give at least one access path")
	}
	if pf.sql != "" && !hasSQL {
		return nil, nil, usagef("--sql is the sql path's statement: add sql to --path")
	}
	if c.Flags().Changed("pg-batch") && !prepared {
		return nil, nil, usagef("--pg-batch applies to the prepared-one path only")
	}
	return paths, order, nil
}

// workloadDoc is the suite workload the flags describe; --workload mixed
// and --write-every are the older spellings of hot with writes.
func (pf *pgFlags) workloadDoc(c *cobra.Command) (doc, error) {
	kind := strings.ToLower(pf.kind)
	writes := pf.writes
	if pf.writeEvery != 0 {
		if c.Flags().Changed("writes") {
			return nil, usagef("give --writes or --write-every, not both")
		}
		if pf.writeEvery < 1 {
			return nil, usagef("--write-every must be ≥ 1, got %d", pf.writeEvery)
		}
		writes = 100 / float64(pf.writeEvery)
	}
	switch kind {
	case "mixed":
		kind = string(workload.Hot)
		if writes == 0 {
			writes = 5
		}
	case "writes":
		kind, writes = string(workload.Hot), 100
	}
	if writes < 0 || writes > 100 || math.IsNaN(writes) {
		return nil, usagef("--writes must be a percentage 0–100, got %v", writes)
	}
	w := doc{"kind": kind, "rows": pf.rows}
	if pf.hot > 0 {
		w["hot"] = pf.hot
	}
	if writes > 0 {
		w["writes"] = writes
	}
	return w, nil
}

// resolveDSN picks the server: --ephemeral, or a DSN from --dsn, the
// variable named by --dsn-env, $PGDSN or $DATABASE_URL (in that order).
func (pf *pgFlags) resolveDSN(c *cobra.Command) (string, error) {
	f := c.Flags()
	if f.Changed("dsn") && pf.dsnEnv != "" {
		return "", usagef("give --dsn or --dsn-env, not both")
	}
	dsn := pf.dsn
	if pf.dsnEnv != "" {
		if dsn = os.Getenv(pf.dsnEnv); dsn == "" {
			return "", usagef("--dsn-env %s: the variable is not set or empty", pf.dsnEnv)
		}
	}
	explicit := f.Changed("dsn") || pf.dsnEnv != ""
	switch {
	case pf.ephemeral && explicit:
		return "", usagef("give --ephemeral or --dsn, not both")
	case pf.ephemeral:
		return "", nil
	case explicit && strings.TrimSpace(dsn) == "":
		return "", usagef("--dsn is empty: give a connection string such as postgres://user@127.0.0.1:5432/db")
	case explicit:
		return dsn, nil
	}
	for _, name := range []string{"PGDSN", "DATABASE_URL"} {
		if v := os.Getenv(name); v != "" {
			return v, nil
		}
	}
	return "", usagef("give --ephemeral or --dsn (or --dsn-env, $PGDSN, $DATABASE_URL)")
}

func runPG(a *app, c *cobra.Command, pf *pgFlags) error {
	if err := pf.quickFlags.validate(c); err != nil {
		return err
	}
	dsn, err := pf.resolveDSN(c)
	if err != nil {
		return err
	}
	secret := ""
	if dsn != "" {
		cc, err := postgres.ParseDSN(dsn)
		if err != nil {
			return usagef("--dsn: %v", err)
		}
		secret = cc.Password
	}
	if err := pf.check(c); err != nil {
		return err
	}
	paths, order, err := pf.pathDocs(c)
	if err != nil {
		return err
	}
	w, err := pf.workloadDoc(c)
	if err != nil {
		return err
	}
	d := pf.suite(c, "pg", quickPhases{baseline: time.Second, warmup: time.Second, settle: 500 * time.Millisecond, recovery: time.Second})
	pt := doc{"table": pf.table}
	if pf.ephemeral {
		pt["ephemeral"] = true
		pt["shared_buffers"] = pf.sharedBuffers
		pt["payload_bytes"] = pf.payload
		if pf.maxConns != 0 {
			pt["max_connections"] = pf.maxConns
		}
		if pf.bin != "" {
			pt["bin_dir"] = pf.bin
		}
	} else {
		if err := os.Setenv(quickDSNEnv, dsn); err != nil {
			return err
		}
		defer os.Unsetenv(quickDSNEnv)
		pt["dsn_env"] = quickDSNEnv
	}
	d["targets"] = doc{"postgres": doc{"postgres": pt}}
	d["paths"] = paths
	d["workloads"] = doc{pf.kind: w}
	m := d["matrix"].(doc)
	m["targets"], m["paths"], m["workloads"], m["batches"] = []string{"postgres"}, order, []string{pf.kind}, pf.batches.v
	clean := func(t string) string {
		if secret == "" {
			return t
		}
		return strings.ReplaceAll(t, secret, postgres.Redacted)
	}
	version := ""
	job := quickJob{
		name: "benchrig pg", doc: d, args: pgRedactArgs(a.args, secret),
		onPrepared: func(prov map[string]result.Provenance) {
			for _, pv := range prov {
				version = pv.Version
			}
		},
		title: func(s *result.Sample) string {
			return fmt.Sprintf("benchrig pg · PostgreSQL %s · %s · %s · %s", version, s.Variant, s.Case, describeWindow(s))
		},
		heading: func(n int) string {
			return fmt.Sprintf("benchrig pg · PostgreSQL %s · %s workload · %d samples", version, pf.kind, n)
		},
		scrub: func(s *result.Sample) { scrubSample(s, clean) },
	}
	if err := runQuick(a.ctx, &pf.quickFlags, job, a.stdout, a.stderr); err != nil {
		return pgCleanErr(err, secret)
	}
	return nil
}

// check validates the pg flags that need no server.
func (pf *pgFlags) check(c *cobra.Command) error {
	f := c.Flags()
	for _, p := range pf.pipelines.v {
		if p != 1 {
			return usagef("--pipeline %d: benchrig pg sends one request at a time per connection; use --batch for keys per request, --pg-batch pipeline to pipeline a batch's statements", p)
		}
	}
	if pf.maxConns != 0 && !pf.ephemeral {
		return usagef("--max-connections sizes an --ephemeral server; an existing server keeps its own")
	}
	if pf.targetCPUs != "" {
		return usagef("--target-cpus: benchrig pg does not pin the PostgreSQL server it starts; run the server with taskset and give --dsn")
	}
	if pf.timeout <= 0 {
		return usagef("--timeout must be > 0, got %s", pf.timeout)
	}
	ds := postgres.Dataset{Table: pf.table, Rows: pf.rows, PayloadBytes: pf.payload}
	if err := ds.Validate(); err != nil {
		return usagef("--table, --rows, --payload-bytes: %v", err)
	}
	for _, b := range pf.batches.v {
		if b < 1 || b > workload.MaxBatch {
			return usagef("--batch %d: keys per request must be 1–%d", b, workload.MaxBatch)
		}
	}
	wl := workload.Config{Kind: workload.Kind(strings.ToLower(pf.kind)), Rows: pf.rows, Hot: pf.hot}
	if wl.Kind == "mixed" || wl.Kind == "writes" {
		wl.Kind = workload.Hot
	}
	if err := wl.WithDefaults().Validate(); err != nil {
		return usagef("--workload: %v", err)
	}
	if f.Changed("sql") && strings.TrimSpace(pf.sql) == "" {
		return usagef("--sql is empty")
	}
	return nil
}

// scrubSample removes a secret from a sample's texts.
func scrubSample(s *result.Sample, clean func(string) string) {
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
	if errors.Is(err, errUnhealthy) {
		return err
	}
	return errors.New(clean)
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
