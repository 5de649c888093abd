package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	respdrv "github.com/benchrig/benchrig/internal/driver/resp"
	"github.com/benchrig/benchrig/internal/load"
	runner "github.com/benchrig/benchrig/internal/run"
	"github.com/benchrig/benchrig/internal/sample"
	"github.com/benchrig/benchrig/internal/target/postgres"
)

// respMaxBatch is the most keys one MGET may carry (seed 001's bound).
const respMaxBatch = 1024

// respFlags are the flags of benchrig resp.
type respFlags struct {
	quickFlags
	targetFlags
	batches, conns, pipelines intList

	ephemeral  bool
	addr       string
	user       string
	tokenEnv   string
	tokenFile  string
	tls        bool
	tlsCA      string
	tlsName    string
	maxClients int
	serverCPUs string

	command  string
	args     string
	key      string
	db       string
	value    string
	keySpace int64
	timeout  time.Duration
	repeats  int

	fill        bool
	fillFromPG  bool
	ephemeralPG bool
	pgDSN       string
	pgTable     string
	pgPK        string
	rows        int64
	verifyPG    bool
	sampled     float64
}

func respCmd(ctx context.Context, stdout, stderr io.Writer) *cobra.Command {
	var rf respFlags
	c := &cobra.Command{
		Use:   "resp (--ephemeral | --addr HOST:PORT)",
		Short: "Quick RESP (redis protocol) load test: a matrix of batch × connections × pipeline, MGET by default",
		Example: `  benchrig resp --ephemeral --batch 1,64 -c 4,64 -d 3s
  benchrig resp --addr 127.0.0.1:6379 --token-env REDIS_PASSWORD --command GET -c 64 -p 1,16
  benchrig resp --ephemeral --fill-from-pg --ephemeral-pg --verify-against-pg --batch 64 -c 64 --repeats 3`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runRESP(ctx, c, &rf, stdout, stderr)
		},
	}
	rf.quickFlags.register(c, 64)
	f := c.Flags()
	// -c and -p take lists here: every combination is a case.
	rf.conns = intList{v: []int{64}}
	rf.pipelines = intList{v: []int{1}}
	rf.batches = intList{v: []int{1}}
	respListFlag(f, "connections", &rf.conns, "connections (workers); a list such as 4,64 runs one case per value")
	respListFlag(f, "pipeline", &rf.pipelines, "commands in flight per connection; a list such as 1,16 runs one case per value")
	f.Var(&rf.batches, "batch", "keys per MGET (1–1024); a list such as 1,64 runs one case per value")

	f.BoolVar(&rf.ephemeral, "ephemeral", false, "start a fresh redis-server on a free loopback port for the run, and stop it after")
	f.StringVar(&rf.addr, "addr", "", "an existing server's host:port (sampled when it listens on this machine's loopback)")
	f.StringVar(&rf.user, "user", "", "ACL user for AUTH user token")
	f.StringVar(&rf.tokenEnv, "token-env", "", "environment variable holding the AUTH token (with --ephemeral: the server's password)")
	f.StringVar(&rf.tokenFile, "token-file", "", "file holding the AUTH token")
	f.BoolVar(&rf.tls, "tls", false, "connect with TLS (--addr only)")
	f.StringVar(&rf.tlsCA, "tls-ca", "", "PEM file of the CA certificates to trust")
	f.StringVar(&rf.tlsName, "tls-server-name", "", "server name to verify (default the host of --addr)")
	f.IntVar(&rf.maxClients, "max-clients", 0, "maxclients of the --ephemeral server (default: redis's 10000)")
	f.StringVar(&rf.serverCPUs, "server-cpus", "", "pin the --ephemeral server to this CPU list (e.g. 0)")

	f.StringVar(&rf.command, "command", respdrv.CommandMGET, "MGET, GET, SET or custom (with --args)")
	f.StringVar(&rf.args, "args", "", "the custom command, e.g. 'HGET {key} name' ({id}: key number, {key}: --key rendered)")
	f.StringVar(&rf.key, "key", respdrv.DefaultKeyTemplate, "key template: {id} is the key number 1…keyspace, {db} is --db")
	f.StringVar(&rf.db, "db", "", "fills {db} in --key (e.g. CRUD:{db}.public.items:{\"id\":{id}})")
	f.StringVar(&rf.value, "value", "", "SET value template (default value:{id})")
	f.Int64Var(&rf.keySpace, "keyspace", respdrv.DefaultKeySpace, "distinct keys the requests cycle through (1…keyspace)")
	f.DurationVar(&rf.timeout, "timeout", respdrv.DefaultTimeout, "per-round-trip timeout (0: none)")
	f.IntVar(&rf.repeats, "repeats", 1, "samples per case, run in fair order (cases forward, then backward, …)")

	f.BoolVar(&rf.fill, "fill", false, "fill the keyspace before the load (default with --ephemeral; with --addr this writes into that server)")
	f.BoolVar(&rf.fillFromPG, "fill-from-pg", false, "fill from PostgreSQL's table (row_to_json) instead of generated rows; needs --ephemeral-pg or --fill-from-pg-dsn")
	f.BoolVar(&rf.ephemeralPG, "ephemeral-pg", false, "start an ephemeral PostgreSQL with the demo table (--rows rows) as the fill's source")
	f.StringVar(&rf.pgDSN, "fill-from-pg-dsn", "", "PostgreSQL DSN of the fill's source (redacted everywhere)")
	f.StringVar(&rf.pgTable, "pg-table", postgres.DefaultTable, "the source table")
	f.StringVar(&rf.pgPK, "pg-pk", "id", "the source table's integer primary key")
	f.Int64Var(&rf.rows, "rows", postgres.DefaultRows, "rows of the --ephemeral-pg demo table")
	f.BoolVar(&rf.verifyPG, "verify-against-pg", false, "pre-flight: MGET of every key must return exactly the rows PostgreSQL returns for them")
	f.Float64Var(&rf.sampled, "validate-sampled", 0, "fraction (0–1) of GET/MGET replies compared during the load with the rows filled")

	f.StringVar(&rf.clientCPUs, "client-cpus", "", "pin benchrig's load generation to this CPU list (GOMAXPROCS follows)")
	f.DurationVar(&rf.interval, "sample-interval", time.Second, "server resource sampling period (≥ 100ms)")
	f.BoolVar(&rf.noPSS, "no-pss", false, "do not read the server's PSS (RSS only)")
	f.DurationVar(&rf.baseline, "baseline", 0, "idle phase sampled before each load")
	f.DurationVar(&rf.settle, "settle", 0, "idle phase between warm-up and load")
	f.DurationVar(&rf.recovery, "recovery", 0, "idle phase sampled after each load")
	rf.startTimeout = 10 * time.Second
	return c
}

// respCase is one combination of the matrix.
type respCase struct {
	batch, conns, pipeline int
}

func (c respCase) label() string {
	keys := "keys"
	if c.batch == 1 {
		keys = "key"
	}
	return fmt.Sprintf("%d %s · %d conns · p=%d", c.batch, keys, c.conns, c.pipeline)
}

// validate checks the flags that need no server, before anything starts.
func (rf *respFlags) validate(c *cobra.Command) error {
	f := c.Flags()
	if rf.ephemeral == (rf.addr != "") {
		return usagef("give exactly one of --ephemeral and --addr HOST:PORT")
	}
	if err := rf.targetFlags.validate(c); err != nil {
		return err
	}
	cmd := strings.ToUpper(rf.command)
	switch cmd {
	case respdrv.CommandMGET, respdrv.CommandGET, respdrv.CommandSET:
	case strings.ToUpper(respdrv.CommandCustom):
		if strings.TrimSpace(rf.args) == "" {
			return usagef("--command custom needs --args, e.g. --args 'HGET {key} name'")
		}
	default:
		return usagef("--command must be MGET, GET, SET or custom, got %q", rf.command)
	}
	if rf.args != "" && cmd != strings.ToUpper(respdrv.CommandCustom) {
		return usagef("--args is for --command custom, not %s", cmd)
	}
	for _, b := range rf.batches.v {
		if b < 1 || b > respMaxBatch {
			return usagef("--batch must be 1–%d keys, got %d", respMaxBatch, b)
		}
		if b > 1 && cmd != respdrv.CommandMGET {
			return usagef("--batch %d: only MGET reads several keys; %s takes one", b, cmd)
		}
	}
	for _, n := range rf.conns.v {
		if n < 1 {
			return usagef("--connections must be ≥ 1, got %d", n)
		}
	}
	for _, p := range rf.pipelines.v {
		if p < 1 || p > respdrv.MaxPipeline {
			return usagef("--pipeline must be 1–%d, got %d", respdrv.MaxPipeline, p)
		}
	}
	if rf.keySpace < 1 {
		return usagef("--keyspace must be ≥ 1, got %d", rf.keySpace)
	}
	if rf.repeats < 1 {
		return usagef("--repeats must be ≥ 1, got %d", rf.repeats)
	}
	if rf.timeout < 0 {
		return usagef("--timeout must be ≥ 0, got %s", rf.timeout)
	}
	if rf.sampled < 0 || rf.sampled > 1 {
		return usagef("--validate-sampled must be a fraction from 0 to 1, got %v", rf.sampled)
	}
	if rf.sampled > 0 && cmd != respdrv.CommandMGET && cmd != respdrv.CommandGET {
		return usagef("--validate-sampled checks GET and MGET replies, not %s", cmd)
	}
	if rf.ephemeralPG && rf.pgDSN != "" {
		return usagef("give --ephemeral-pg or --fill-from-pg-dsn, not both")
	}
	if rf.fillFromPG && !rf.ephemeralPG && rf.pgDSN == "" {
		return usagef("--fill-from-pg needs a source: --ephemeral-pg or --fill-from-pg-dsn DSN")
	}
	if rf.verifyPG && !rf.usePG() {
		return usagef("--verify-against-pg needs PostgreSQL: --fill-from-pg with --ephemeral-pg or --fill-from-pg-dsn DSN")
	}
	if rf.ephemeralPG && (rf.rows < 1 || rf.rows > 1<<31) {
		return usagef("--rows must be 1–%d, got %d", int64(1)<<31, rf.rows)
	}
	if f.Changed("fill") && !rf.fill && rf.usePG() {
		return usagef("--fill=false contradicts a PostgreSQL fill")
	}
	if rf.ephemeral && (rf.tls || rf.tlsCA != "" || rf.tlsName != "") {
		return usagef("--tls is for --addr: the --ephemeral server speaks plain TCP on loopback")
	}
	if !rf.ephemeral && (rf.serverCPUs != "" || rf.maxClients != 0) {
		return usagef("--server-cpus and --max-clients configure the --ephemeral server")
	}
	if (rf.tlsCA != "" || rf.tlsName != "") && !rf.tls {
		return usagef("--tls-ca and --tls-server-name need --tls")
	}
	return nil
}

// usePG reports whether the fill comes from PostgreSQL.
func (rf *respFlags) usePG() bool { return rf.ephemeralPG || rf.pgDSN != "" }

// fills reports whether benchrig fills the keyspace before the load.
func (rf *respFlags) fills(c *cobra.Command) bool {
	if rf.usePG() {
		return true
	}
	if c.Flags().Changed("fill") {
		return rf.fill
	}
	return rf.ephemeral
}

// driverConfig is the RESP driver's configuration of one case.
func (rf *respFlags) driverConfig(batch int) (respdrv.Config, error) {
	dc := respdrv.DefaultConfig()
	dc.Command = rf.command
	if strings.EqualFold(rf.command, respdrv.CommandCustom) {
		argv, err := splitCommand(rf.args)
		if err != nil {
			return dc, usagef("--args: %v", err)
		}
		dc.Args = argv
	}
	dc.KeyTemplate, dc.DB, dc.Value = rf.key, rf.db, rf.value
	dc.Batch, dc.KeySpace, dc.Timeout = batch, rf.keySpace, rf.timeout
	return dc, nil
}

func (rf *respFlags) redisOptions() runner.RedisOptions {
	return runner.RedisOptions{
		Ephemeral: rf.ephemeral, Addr: rf.addr, User: rf.user, TokenEnv: rf.tokenEnv, TokenFile: rf.tokenFile,
		TLS:        respdrv.TLSConfig{Enabled: rf.tls, CAFile: rf.tlsCA, ServerName: rf.tlsName},
		MaxClients: rf.maxClients, CPUs: rf.serverCPUs,
	}
}

// cases expands the matrix: batches outermost, then connections, then
// pipeline depths, each list in the order given.
func (rf *respFlags) cases() []respCase {
	var out []respCase
	for _, b := range rf.batches.v {
		for _, n := range rf.conns.v {
			for _, p := range rf.pipelines.v {
				out = append(out, respCase{b, n, p})
			}
		}
	}
	return out
}

func runRESP(ctx context.Context, c *cobra.Command, rf *respFlags, stdout, stderr io.Writer) error {
	if err := rf.validate(c); err != nil {
		return err
	}
	if f := c.Flags(); f.Changed("rate") && !f.Changed("connections") {
		rf.conns.v = []int{32} // the quick modes' default at a rate
	}
	cases := rf.cases()
	// Check the shared flags with every case's numbers, and each case's
	// driver configuration, before any server starts.
	for _, k := range cases {
		rf.connections, rf.pipeline = k.conns, k.pipeline
		if _, _, err := rf.resolve(c); err != nil {
			return err
		}
		dc, err := rf.driverConfig(k.batch)
		if err != nil {
			return err
		}
		dc.Addr = "127.0.0.1:1" // checked for form only
		dc.Auth = respdrv.AuthConfig{Token: "x"}
		if _, err := respdrv.New(dc); err != nil {
			return usageError{err}
		}
	}

	srv, err := runner.StartRedis(ctx, rf.redisOptions())
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := srv.Stop(sctx); err != nil {
			fmt.Fprintln(stderr, "benchrig: stop redis-server:", err)
		}
	}()
	reference, err := rf.prepare(ctx, c, srv, stderr)
	if err != nil {
		return err
	}

	plan := respPlan(cases, rf.repeats)
	var rows []respRow
	for i, p := range plan {
		if ctx.Err() != nil {
			break
		}
		row, err := rf.sample(ctx, c, srv, p, reference, fmt.Sprintf("[%d/%d] ", i+1, len(plan)), stderr)
		if err != nil {
			return err
		}
		rows = append(rows, row)
		s := row.s
		if !rf.json {
			fmt.Fprintf(stderr, "[%d/%d] %s%s: %s\n", i+1, len(plan), p.c.label(), repeatSuffix(p.repeat, rf.repeats), respProgress(s))
		}
	}
	return rf.finish(srv, rows, len(plan), stdout, ctx.Err() != nil)
}

// respPlanned is one sample of the plan.
type respPlanned struct {
	c      respCase
	repeat int
}

// respPlan orders cases × repeats fairly: repeat 1 walks the cases
// forward, repeat 2 backward, and so on, so that no case always runs first
// or last (as the suite planner does).
func respPlan(cases []respCase, repeats int) []respPlanned {
	var out []respPlanned
	for r := 1; r <= repeats; r++ {
		for i := range cases {
			j := i
			if r%2 == 0 {
				j = len(cases) - 1 - i
			}
			out = append(out, respPlanned{cases[j], r})
		}
	}
	return out
}

func repeatSuffix(r, n int) string {
	if n == 1 {
		return ""
	}
	return fmt.Sprintf(" · repeat %d/%d", r, n)
}

// sample measures one case once.
func (rf *respFlags) sample(ctx context.Context, c *cobra.Command, srv *runner.RedisServer, p respPlanned,
	reference func(int64) ([]byte, bool), prefix string, stderr io.Writer) (respRow, error) {
	row := respRow{c: p.c, repeat: p.repeat}
	rf.connections, rf.pipeline = p.c.conns, p.c.pipeline
	cfg, w, err := rf.resolve(c)
	if err != nil {
		return row, err
	}
	row.engine, row.window = cfg, w
	phases, err := rf.targetFlags.phases(c, &rf.quickFlags, cfg.Rate > 0, w)
	if err != nil {
		return row, err
	}
	dc, err := rf.driverConfig(p.c.batch)
	if err != nil {
		return row, err
	}
	if rf.sampled > 0 && reference != nil {
		dc.ValidateSampled, dc.Reference = rf.sampled, reference
	}
	spec, err := srv.Spec(dc)
	if err != nil {
		return row, err
	}
	drv := spec.Driver.(*respdrv.Driver)
	spec.Config, err = jsonRaw(struct {
		Engine load.Config         `json:"engine"`
		Phases runner.Phases       `json:"phases"`
		RESP   respdrv.Config      `json:"resp"`
		Redis  runner.RedisOptions `json:"redis"`
		Fill   map[string]any      `json:"fill,omitempty"`
	}{cfg, phases, drv.Config(), srv.Options(), rf.fillInfo(c)})
	if err != nil {
		return row, err
	}
	spec.Engine, spec.Phases, spec.Thresholds = cfg, phases, rf.thresholds()
	spec.SamplerInterval, spec.SamplerNoPSS, spec.ClientCPUs = rf.interval, rf.noPSS, rf.clientCPUs
	spec.Cell, spec.Repeat = p.c.label(), p.repeat
	spec.Case, spec.Variant = p.c.label(), rf.variant()
	spec.Key = fmt.Sprintf("%s#%d", spec.Cell, p.repeat)
	st := newStatus(stderr, prefix)
	// The driver's counters cover its whole life; keep the load window's.
	var before, after respdrv.Stats
	windowEnded := false
	spec.OnPhase = func(phase string, planned time.Duration) {
		switch phase {
		case sample.PhaseLoad:
			before = drv.Stats()
		case sample.PhaseRecovery:
			after, windowEnded = drv.Stats(), true
		}
		st.setPhase(phase, planned)
	}
	spec.OnEngine = st.setEngine
	s := runner.Measure(ctx, spec)
	st.stop()
	if !windowEnded {
		after = drv.Stats()
	}
	ds := respdrv.Stats{Hits: after.Hits - before.Hits, Nils: after.Nils - before.Nils,
		Validated: after.Validated - before.Validated, Mismatches: after.Mismatches - before.Mismatches}
	if s.Load != nil {
		if s.Stats == nil {
			s.Stats = map[string]float64{}
		}
		s.Stats["client_hits"], s.Stats["client_nils"] = float64(ds.Hits), float64(ds.Nils)
		if rf.sampled > 0 {
			s.Stats["client_validated"], s.Stats["client_mismatches"] = float64(ds.Validated), float64(ds.Mismatches)
			if ds.Mismatches > 0 {
				s.Verdict.Add("%d of %d sampled values differ from the rows filled", ds.Mismatches, ds.Validated)
			}
		}
	}
	row.s = s
	return row, nil
}

// fillInfo records the fill in the sample's configuration.
func (rf *respFlags) fillInfo(c *cobra.Command) map[string]any {
	switch {
	case !rf.fills(c):
		return nil
	case rf.ephemeralPG:
		return map[string]any{"source": "ephemeral-pg", "table": rf.pgTable, "pk": rf.pgPK, "rows": rf.rows, "verified": rf.verifyPG}
	case rf.pgDSN != "":
		return map[string]any{"source": "pg", "dsn": postgres.Redact(rf.pgDSN), "table": rf.pgTable, "pk": rf.pgPK, "verified": rf.verifyPG}
	}
	return map[string]any{"source": "generated", "keys": rf.keySpace, "payload_bytes": postgres.DefaultPayloadBytes}
}

// respListFlag turns an int flag the quick modes share (-c, -p) into a list
// of the same name, shorthand and place in the help.
func respListFlag(f *pflag.FlagSet, name string, l *intList, usage string) {
	fl := f.Lookup(name)
	fl.Value, fl.DefValue, fl.Usage = l, l.String(), usage
}
