package main

import (
	"context"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	pgdrv "github.com/benchrig/benchrig/internal/driver/pg"
	"github.com/benchrig/benchrig/internal/load"
	runner "github.com/benchrig/benchrig/internal/run"
	"github.com/benchrig/benchrig/internal/target"
	"github.com/benchrig/benchrig/internal/target/postgres"
	"github.com/benchrig/benchrig/internal/workload"
)

// pgFlags are the flags of benchrig pg.
type pgFlags struct {
	quickFlags
	batches, conns intList
	paths          []string

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
	writeEvery int
	timeout    time.Duration
	repeats    int

	clientCPUs string
	interval   time.Duration
	noPSS      bool // --no-pss
	baseline   time.Duration
	settle     time.Duration
	recovery   time.Duration
}

func pgCmd(ctx context.Context, stdout, stderr io.Writer) *cobra.Command {
	var pf pgFlags
	c := &cobra.Command{
		Use:   "pg (--ephemeral | --dsn DSN)",
		Short: "Quick PostgreSQL load test: access paths compared over a matrix of batch × connections",
		Example: `  benchrig pg --ephemeral --path prepared-one,any --batch 1,64 -c 4,64 -d 3s
  benchrig pg --dsn-env DATABASE_URL --path any,sql --sql 'SELECT array_to_json(array_agg(row_to_json(t))) FROM items t JOIN unnest($1::bigint[]) WITH ORDINALITY k(id, n) USING (id)' --batch 64
  benchrig pg --ephemeral --path prepared-one,prepared-one/pipeline --batch 16 --workload mixed --repeats 3 -o pg.json`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runPG(ctx, c, &pf, stdout, stderr)
		},
	}
	pf.quickFlags.register(c, 10)
	f := c.Flags()
	// -c takes a list here: every value is a case.
	pf.conns = intList{v: []int{10}}
	pf.batches = intList{v: []int{1}}
	fl := f.Lookup("connections")
	fl.Value, fl.DefValue = &pf.conns, pf.conns.String()
	fl.Usage = "connections (workers); a list such as 4,64 runs one case per value (default 32 with --rate)"
	f.Var(&pf.batches, "batch", "keys per request; a list such as 1,64 runs one case per value")
	f.StringSliceVar(&pf.paths, "path", []string{string(pgdrv.PreparedOne)},
		"access paths to compare: prepared-one, prepared-one/pipeline, any, sql, update (a list)")

	f.BoolVar(&pf.ephemeral, "ephemeral", false, "start a throwaway PostgreSQL server with the demo table for the run, and remove it after")
	f.StringVar(&pf.dsn, "dsn", "", "an existing server's connection string (redacted everywhere; default $PGDSN, then $DATABASE_URL)")
	f.StringVar(&pf.dsnEnv, "dsn-env", "", "environment variable holding the connection string")
	f.IntVar(&pf.maxConns, "max-connections", 0, "max_connections of the --ephemeral server (default: the most connections + 10)")
	f.StringVar(&pf.sharedBuffers, "shared-buffers", postgres.DefaultSharedBuffers, "shared_buffers of the --ephemeral server")
	f.StringVar(&pf.bin, "pg-bin", "", "directory of the PostgreSQL server binaries (default: the newest found)")

	f.StringVar(&pf.sql, "sql", "", "the sql path's statement, taking the key array as $1 (bigint[])")
	f.StringVar(&pf.pgBatch, "pg-batch", string(pgdrv.Roundtrips), "how prepared-one sends a batch's statements: roundtrips or pipeline")
	f.StringVar(&pf.table, "table", postgres.DefaultTable, "the table read (and created with --ephemeral)")
	f.StringVar(&pf.kind, "workload", string(workload.Hot), "keys and operations: hot, cold, mixed, writes, uniform or zipf")
	f.Int64Var(&pf.rows, "rows", postgres.DefaultRows, "rows of the table: ids 1…rows")
	f.IntVar(&pf.payload, "payload-bytes", postgres.DefaultPayloadBytes, "payload length of the --ephemeral table's rows")
	f.Int64Var(&pf.hot, "hot", 0, "hot set size of the hot, mixed and writes workloads (default 128)")
	f.IntVar(&pf.writeEvery, "write-every", 0, "mixed: one write every n operations (default 20: 5 %)")
	f.DurationVar(&pf.timeout, "timeout", pgdrv.DefaultTimeout, "per-request timeout")
	f.IntVar(&pf.repeats, "repeats", 1, "samples per case and path, run in fair order")

	f.StringVar(&pf.clientCPUs, "client-cpus", "", "pin benchrig's load generation to this CPU list (GOMAXPROCS follows)")
	f.DurationVar(&pf.interval, "sample-interval", time.Second, "server resource sampling period (≥ 100ms)")
	f.BoolVar(&pf.noPSS, "no-pss", false, "do not read the server's PSS (RSS only): each reading of 70 backends costs the client ~0.1 s of CPU")
	f.DurationVar(&pf.baseline, "baseline", time.Second, "idle phase sampled before each load")
	f.DurationVar(&pf.settle, "settle", 500*time.Millisecond, "idle phase between warm-up and load")
	f.DurationVar(&pf.recovery, "recovery", time.Second, "idle phase sampled after each load")
	return c
}

// validate checks every flag before anything starts: bad input is a usage
// error (exit 2) naming the flag and what it accepts.
func (pf *pgFlags) validate(c *cobra.Command) (*pgRun, error) {
	f := c.Flags()
	r := &pgRun{pf: pf, engines: map[int]load.Config{}}
	dsn, err := pf.resolveDSN(c)
	if err != nil {
		return nil, err
	}
	r.dsn = dsn
	if dsn != "" {
		cc, err := postgres.ParseDSN(dsn)
		if err != nil {
			return nil, usagef("--dsn: %v", err)
		}
		r.secret = cc.Password
	}
	if pf.repeats < 1 {
		return nil, usagef("--repeats must be ≥ 1, got %d", pf.repeats)
	}
	if f.Changed("pipeline") && pf.pipeline != 1 {
		return nil, usagef("--pipeline %d: benchrig pg sends one request at a time per connection; use --batch for keys per request, --pg-batch pipeline to pipeline a batch's statements", pf.pipeline)
	}
	if pf.interval < 100*time.Millisecond {
		return nil, usagef("--sample-interval must be ≥ 100ms, got %s", pf.interval)
	}
	if pf.clientCPUs != "" {
		if _, err := target.ParseCPUList(pf.clientCPUs); err != nil {
			return nil, usagef("--client-cpus %q: %v", pf.clientCPUs, err)
		}
	}
	if pf.maxConns != 0 && !pf.ephemeral {
		return nil, usagef("--max-connections sizes an --ephemeral server; an existing server keeps its own")
	}
	if pf.timeout <= 0 {
		return nil, usagef("--timeout must be > 0, got %s", pf.timeout)
	}
	ds := postgres.Dataset{Table: pf.table, Rows: pf.rows, PayloadBytes: pf.payload}
	if err := ds.Validate(); err != nil {
		return nil, usagef("--table, --rows, --payload-bytes: %v", err)
	}
	if r.paths, err = pf.pathConfigs(c); err != nil {
		return nil, err
	}
	for _, b := range pf.batches.v {
		if b < 1 || b > workload.MaxBatch {
			return nil, usagef("--batch %d: keys per request must be 1–%d", b, workload.MaxBatch)
		}
	}
	for _, n := range pf.conns.v {
		if n < 1 {
			return nil, usagef("--connections must be ≥ 1, got %d", n)
		}
	}
	for _, b := range pf.batches.v {
		for _, n := range pf.conns.v {
			r.cases = append(r.cases, pgCase{batch: b, conns: n})
		}
	}
	// The shared quick flags, checked with every case's connections.
	for _, k := range r.cases {
		pf.connections = k.conns
		cfg, w, err := pf.resolve(c)
		if err != nil {
			return nil, err
		}
		r.engines[k.conns], r.window = cfg, w
	}
	// Every path at every batch, checked for form only.
	for _, p := range r.paths {
		for _, b := range pf.batches.v {
			p.Workload.Batch = b
			p.DSN = "postgres://check@127.0.0.1:1/check"
			if _, err := pgdrv.New(p); err != nil {
				return nil, usagef("--path %s: %v", p.Label(), err)
			}
		}
	}
	r.phases = runner.Phases{Baseline: pf.baseline, Warmup: time.Second, Settle: pf.settle, Load: r.window.Duration,
		Recovery: pf.recovery, Requests: r.window.Requests}
	if f.Changed("warmup") {
		r.phases.Warmup = pf.warmup
	}
	for _, ph := range []struct {
		name string
		d    time.Duration
	}{{"baseline", pf.baseline}, {"settle", pf.settle}, {"recovery", pf.recovery}} {
		if ph.d < 0 {
			return nil, usagef("--%s must be ≥ 0, got %s", ph.name, ph.d)
		}
	}
	return r, nil
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

// pathConfigs turns --path into one driver config per path.
func (pf *pgFlags) pathConfigs(c *cobra.Command) ([]pgdrv.Config, error) {
	wl := workload.Config{Kind: workload.Kind(strings.ToLower(pf.kind)), Rows: pf.rows, Hot: pf.hot, WriteEvery: pf.writeEvery}
	if err := wl.WithDefaults().Validate(); err != nil {
		return nil, usagef("--workload: %v", err)
	}
	mode := pgdrv.BatchMode(strings.ToLower(pf.pgBatch))
	if mode != pgdrv.Roundtrips && mode != pgdrv.Pipeline {
		return nil, usagef("--pg-batch %q: accepted modes are roundtrips, pipeline", pf.pgBatch)
	}
	names := pf.paths
	if !c.Flags().Changed("path") && wl.Kind == workload.Writes {
		names = []string{string(pgdrv.Update)}
	}
	var out []pgdrv.Config
	seen := map[string]bool{}
	hasSQL := false
	for _, name := range names {
		name = strings.ToLower(strings.TrimSpace(name))
		p := pgdrv.Config{Table: pf.table, Workload: wl, Timeout: pf.timeout}
		switch name {
		case string(pgdrv.PreparedOne):
			p.Path, p.BatchMode = pgdrv.PreparedOne, mode
		case "prepared-one/roundtrips", "prepared-one/pipeline":
			p.Path, p.BatchMode = pgdrv.PreparedOne, pgdrv.BatchMode(strings.TrimPrefix(name, "prepared-one/"))
		case string(pgdrv.Any), string(pgdrv.Update):
			p.Path = pgdrv.Path(name)
		case string(pgdrv.SQL):
			if strings.TrimSpace(pf.sql) == "" {
				return nil, usagef("--path sql needs --sql 'SELECT …' taking the key array as $1 (bigint[])")
			}
			p.Path, p.SQL, hasSQL = pgdrv.SQL, pf.sql, true
		default:
			return nil, usagef("--path %q: accepted paths are prepared-one, prepared-one/pipeline, any, sql, update", name)
		}
		if seen[p.Label()] {
			return nil, usagef("--path %s is given twice", p.Label())
		}
		seen[p.Label()] = true
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, usagef("--path: give at least one access path")
	}
	if pf.sql != "" && !hasSQL {
		return nil, usagef("--sql is the sql path's statement: add sql to --path")
	}
	if c.Flags().Changed("pg-batch") && !seen[string(pgdrv.PreparedOne)] && !seen["prepared-one/pipeline"] {
		return nil, usagef("--pg-batch applies to the prepared-one path only")
	}
	return out, nil
}
