package pgquick

import (
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/pgclient"
	pgdrv "github.com/benchrig/benchrig/internal/protocol/pg/driver"
	"github.com/benchrig/benchrig/internal/quick"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/workload"
)

// Quick are the options of benchrig pg.
type Quick struct {
	quick.Common
	Batches []int
	Paths   []string

	Ephemeral     bool
	DSN           secret.DSN
	DSNEnv        string
	MaxConns      int
	SharedBuffers string
	Bin           string

	SQL     string
	PGBatch string
	// SkipDecode leaves the rows undecoded (--skip-decode).
	SkipDecode bool
	Table      string
	Kind       string
	Rows       int64
	Payload    int
	Hot        int64
	Writes     float64
	WriteEvery int
	Timeout    time.Duration
}

// DSNEnv is the environment variable that carries a --dsn to the in-memory
// suite's postgres target (dsn_env), so the suite recorded in the results
// file never holds it; a --resume of the file reads it from the same flag.
const DSNEnv = "BENCHRIG_QUICK_DSN"

// Build returns the suite of one PostgreSQL target, the variables the
// run reads in place of the environment's (the DSN, under DSNEnv; see
// system.Env.RunEnv) and the DSN's password (to scrub from every output;
// it never prints).
func (p *Quick) Build() (d quick.Doc, env map[string]string, pw secret.Value, err error) {
	if err := p.Validate(); err != nil {
		return nil, nil, pw, err
	}
	dsn, err := p.resolveDSN()
	if err != nil {
		return nil, nil, pw, err
	}
	if dsn != "" {
		cc, err := pgclient.ParseDSN(dsn)
		if err != nil {
			return nil, nil, pw, fmt.Errorf("--dsn: %v", err)
		}
		pw = secret.New(cc.Password)
	}
	if err := p.check(); err != nil {
		return nil, nil, pw, err
	}
	paths, order, err := p.pathDocs()
	if err != nil {
		return nil, nil, pw, err
	}
	w, err := p.workloadDoc()
	if err != nil {
		return nil, nil, pw, err
	}
	d = p.Suite("pg", result.Phases{Baseline: time.Second, Warmup: time.Second, Settle: 500 * time.Millisecond, Recovery: time.Second})
	pt := quick.Doc{"table": p.Table}
	if p.Ephemeral {
		pt["ephemeral"] = true
		pt["shared_buffers"] = p.SharedBuffers
		pt["payload_bytes"] = p.Payload
		if p.MaxConns != 0 {
			pt["max_connections"] = p.MaxConns
		}
		if p.Bin != "" {
			pt["bin_dir"] = p.Bin
		}
	} else {
		env = map[string]string{DSNEnv: dsn}
		pt["dsn_env"] = DSNEnv
	}
	d["targets"] = quick.Doc{"postgres": quick.Doc{"postgres": pt}}
	d["paths"] = paths
	d["workloads"] = quick.Doc{p.Kind: w}
	m := d["matrix"].(quick.Doc)
	m["targets"], m["paths"], m["workloads"], m["batches"] = []string{"postgres"}, order, []string{p.Kind}, p.Batches
	return d, env, pw, nil
}

// pathDocs turns --path into the suite's pg paths, by name.
func (p *Quick) pathDocs() (quick.Doc, []string, error) {
	mode := strings.ToLower(p.PGBatch)
	if mode != string(pgdrv.Roundtrips) && mode != string(pgdrv.Pipeline) {
		return nil, nil, fmt.Errorf("--pg-batch %q: accepted modes are roundtrips, pipeline", p.PGBatch)
	}
	names := p.Paths
	if !p.Changed("path") && p.Writes >= 100 {
		names = []string{string(pgdrv.Update)}
	}
	paths, order := quick.Doc{}, []string(nil)
	hasSQL, prepared := false, false
	for _, label := range names {
		label = strings.ToLower(strings.TrimSpace(label))
		// The any path's default form is named like the others: its
		// rows say which form they measured (any[param]).
		if l, ok := strings.CutPrefix(label, string(pgdrv.Any)); ok && (l == "" || strings.HasPrefix(l, "/")) {
			label = string(pgdrv.Any) + "[" + string(pgdrv.FormParam) + "]" + l
		}
		name, plan := label, ""
		for _, sfx := range []struct{ s, mode string }{{"/generic", "force_generic_plan"}, {"/custom", "force_custom_plan"}} {
			if n, ok := strings.CutSuffix(name, sfx.s); ok {
				name, plan = n, sfx.mode
			}
		}
		pd := quick.Doc{"table": p.Table, "timeout": p.Timeout.String()}
		if plan != "" {
			pd["plan_cache_mode"] = plan
		}
		if p.SkipDecode {
			pd["skip_decode"] = true
		}
		switch name {
		case string(pgdrv.PreparedOne):
			pd["path"], pd["batching"], prepared = name, mode, true
		case "prepared-one/roundtrips", "prepared-one/pipeline":
			pd["path"], pd["batching"], prepared = string(pgdrv.PreparedOne), strings.TrimPrefix(name, "prepared-one/"), true
		case string(pgdrv.Any), string(pgdrv.Update):
			pd["path"] = name
		case "any[param]", "any[array]", "any[in]":
			pd["path"], pd["form"] = string(pgdrv.Any), strings.TrimSuffix(strings.TrimPrefix(name, "any["), "]")
		case string(pgdrv.SQL):
			if strings.TrimSpace(p.SQL) == "" {
				return nil, nil, fmt.Errorf("--path sql needs --sql 'SELECT …' taking the key array as $1 (bigint[])")
			}
			pd["sql"], hasSQL = p.SQL, true
		default:
			return nil, nil, fmt.Errorf("--path %q: accepted paths are prepared-one, prepared-one/pipeline, any, any[array], any[in], sql, update, each optionally /generic or /custom (plan_cache_mode)", label)
		}
		key := quick.SuiteName(strings.NewReplacer("/", "-", "[", "-", "]", "").Replace(label))
		if _, dup := paths[key]; dup {
			return nil, nil, fmt.Errorf("--path %s is given twice", label)
		}
		paths[key] = quick.Doc{"pg": pd}
		order = append(order, key)
	}
	if len(order) == 0 {
		return nil, nil, fmt.Errorf("--path: give at least one access path")
	}
	if p.SQL != "" && !hasSQL {
		return nil, nil, fmt.Errorf("--sql is the sql path's statement: add sql to --path")
	}
	if p.Changed("pg-batch") && !prepared {
		return nil, nil, fmt.Errorf("--pg-batch applies to the prepared-one path only")
	}
	return paths, order, nil
}

// workloadDoc is the suite workload the flags describe; --workload mixed
// and --write-every are the older spellings of hot with writes.
func (p *Quick) workloadDoc() (quick.Doc, error) {
	kind := strings.ToLower(p.Kind)
	writes := p.Writes
	if p.WriteEvery != 0 {
		if p.Changed("writes") {
			return nil, fmt.Errorf("give --writes or --write-every, not both")
		}
		if p.WriteEvery < 1 {
			return nil, fmt.Errorf("--write-every must be ≥ 1, got %d", p.WriteEvery)
		}
		writes = 100 / float64(p.WriteEvery)
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
		return nil, fmt.Errorf("--writes must be a percentage 0–100, got %v", writes)
	}
	w := quick.Doc{"kind": kind, "rows": p.Rows}
	if p.Hot > 0 {
		w["hot"] = p.Hot
	}
	if writes > 0 {
		w["writes"] = writes
	}
	return w, nil
}

// resolveDSN picks the server: --ephemeral, or a DSN from --dsn, the
// variable named by --dsn-env, $PGDSN or $DATABASE_URL (in that order).
func (p *Quick) resolveDSN() (string, error) {
	if p.Changed("dsn") && p.DSNEnv != "" {
		return "", fmt.Errorf("give --dsn or --dsn-env, not both")
	}
	dsn := p.DSN.Reveal()
	if p.DSNEnv != "" {
		if dsn = os.Getenv(p.DSNEnv); dsn == "" {
			return "", fmt.Errorf("--dsn-env %s: the variable is not set or empty", p.DSNEnv)
		}
	}
	explicit := p.Changed("dsn") || p.DSNEnv != ""
	switch {
	case p.Ephemeral && explicit:
		return "", fmt.Errorf("give --ephemeral or --dsn, not both")
	case p.Ephemeral:
		return "", nil
	case explicit && strings.TrimSpace(dsn) == "":
		return "", fmt.Errorf("--dsn is empty: give a connection string such as postgres://user@127.0.0.1:5432/db")
	case explicit:
		return dsn, nil
	}
	for _, name := range []string{"PGDSN", "DATABASE_URL"} {
		if v := os.Getenv(name); v != "" {
			return v, nil
		}
	}
	return "", fmt.Errorf("give --ephemeral or --dsn (or --dsn-env, $PGDSN, $DATABASE_URL)")
}

// check validates the pg flags that need no server.
func (p *Quick) check() error {
	for _, depth := range p.Pipelines {
		if depth != 1 {
			return fmt.Errorf("--pipeline %d: benchrig pg sends one request at a time per connection; use --batch for keys per request, --pg-batch pipeline to pipeline a batch's statements", depth)
		}
	}
	if p.MaxConns != 0 && !p.Ephemeral {
		return fmt.Errorf("--max-connections sizes an --ephemeral server; an existing server keeps its own")
	}
	if p.TargetCPUs != "" {
		return fmt.Errorf("--target-cpus: benchrig pg does not pin the PostgreSQL server it starts; run the server with taskset and give --dsn")
	}
	if p.Timeout <= 0 {
		return fmt.Errorf("--timeout must be > 0, got %s", p.Timeout)
	}
	ds := pgclient.Dataset{Table: p.Table, Rows: p.Rows, PayloadBytes: p.Payload}
	if err := ds.Validate(); err != nil {
		return fmt.Errorf("--table, --rows, --payload-bytes: %v", err)
	}
	for _, b := range p.Batches {
		if b < 1 || b > workload.MaxBatch {
			return fmt.Errorf("--batch %d: keys per request must be 1–%d", b, workload.MaxBatch)
		}
	}
	wl := workload.Config{Kind: workload.Kind(strings.ToLower(p.Kind)), Rows: p.Rows, Hot: p.Hot}
	if wl.Kind == "mixed" || wl.Kind == "writes" {
		wl.Kind = workload.Hot
	}
	if err := wl.WithDefaults().Validate(); err != nil {
		return fmt.Errorf("--workload: %v", err)
	}
	if p.Changed("sql") && strings.TrimSpace(p.SQL) == "" {
		return fmt.Errorf("--sql is empty")
	}
	return nil
}
