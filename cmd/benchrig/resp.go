package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	respdrv "github.com/benchrig/benchrig/internal/driver/resp"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/target/postgres"
)

// respFlags are the flags of benchrig resp.
type respFlags struct {
	quickFlags
	batches intList

	ephemeral  bool
	addr       string
	user       string
	tokenEnv   string
	tokenFile  string
	tls        bool
	tlsCA      string
	tlsName    string
	maxClients int

	command  string
	args     string
	key      string
	db       string
	value    string
	keySpace int64
	timeout  time.Duration

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

// quickFillDSNEnv carries --fill-from-pg-dsn to the in-memory suite
// (fill_from_pg.dsn_env), so the recorded suite never holds it.
const quickFillDSNEnv = "BENCHRIG_QUICK_FILL_DSN"

func respCmd(a *app) *cobra.Command {
	var rf respFlags
	c := &cobra.Command{
		Use:   "resp (--ephemeral | --addr HOST:PORT)",
		Short: "Quick RESP (redis protocol) load test: a matrix of batch × connections × pipeline, MGET by default (a suite of one target)",
		Example: `  benchrig resp --ephemeral --batch 1,64 -c 4,64 -d 3s
  benchrig resp --addr 127.0.0.1:6379 --token-env REDIS_PASSWORD --command GET -c 64 -p 1,16
  benchrig resp --ephemeral --fill-from-pg --ephemeral-pg --verify-against-pg --batch 64 -c 64 -r 3`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runRESP(a, c, &rf)
		},
	}
	rf.quickFlags.register(c, 64)
	f := c.Flags()
	rf.batches = intList{v: []int{1}}
	f.Var(&rf.batches, "batch", "keys per MGET (1–1024); a list such as 1,64 runs one case per value")
	f.BoolVar(&rf.ephemeral, "ephemeral", false, "start a fresh redis-server on a free loopback port for the run, and stop it after")
	f.StringVar(&rf.addr, "addr", "", "an existing server's host:port (sampled when it listens on this machine's loopback)")
	f.StringVar(&rf.user, "user", "", "ACL user for AUTH user token")
	f.StringVar(&rf.tokenEnv, "token-env", "", "environment variable holding the AUTH token (with --ephemeral: the server's password)")
	f.StringVar(&rf.tokenFile, "token-file", "", "file holding the AUTH token")
	f.BoolVar(&rf.tls, "tls", false, "connect with TLS (--addr only)")
	f.StringVar(&rf.tlsCA, "tls-ca", "", "PEM file of the CA certificates to trust")
	f.StringVar(&rf.tlsName, "tls-server-name", "", "server name to verify (default the host of --addr)")
	f.IntVar(&rf.maxClients, "max-clients", 0, "maxclients of the --ephemeral server (default: the most connections + 32)")
	f.StringVar(&rf.command, "command", respdrv.CommandMGET, "MGET, GET, SET or custom (with --args)")
	f.StringVar(&rf.args, "args", "", "the custom command, e.g. 'HGET {key} name' ({id}: key number, {key}: --key rendered)")
	f.StringVar(&rf.key, "key", respdrv.DefaultKeyTemplate, "key template: {id} is the key number 1…keyspace, {db} is --db")
	f.StringVar(&rf.db, "db", "", "fills {db} in --key (e.g. CRUD:{db}.public.items:{\"id\":{id}})")
	f.StringVar(&rf.value, "value", "", "SET value template (default value:{id})")
	f.Int64Var(&rf.keySpace, "keyspace", respdrv.DefaultKeySpace, "distinct keys the requests cycle through (1…keyspace)")
	durationVarP(f, &rf.timeout, "timeout", "", respdrv.DefaultTimeout, "per-round-trip timeout (0: none)")
	f.BoolVar(&rf.fill, "fill", false, "fill the keyspace before the load (default with --ephemeral; with --addr this writes into that server)")
	f.BoolVar(&rf.fillFromPG, "fill-from-pg", false, "fill from PostgreSQL's table (row_to_json) instead of generated rows; needs --ephemeral-pg or --fill-from-pg-dsn")
	f.BoolVar(&rf.ephemeralPG, "ephemeral-pg", false, "start an ephemeral PostgreSQL with the demo table (--rows rows) as the fill's source")
	f.StringVar(&rf.pgDSN, "fill-from-pg-dsn", "", "PostgreSQL DSN of the fill's source (redacted everywhere)")
	f.StringVar(&rf.pgTable, "pg-table", postgres.DefaultTable, "the source table")
	f.StringVar(&rf.pgPK, "pg-pk", "id", "the source table's integer primary key")
	f.Int64Var(&rf.rows, "rows", postgres.DefaultRows, "rows of the --ephemeral-pg demo table")
	f.BoolVar(&rf.verifyPG, "verify-against-pg", false, "pre-flight: MGET of every key must return exactly the rows PostgreSQL returns for them")
	f.Float64Var(&rf.sampled, "validate-sampled", 0, "fraction (0–1) of GET/MGET replies compared during the load with the rows filled")
	return c
}

// validate checks the flags that need no server, before anything starts.
func (rf *respFlags) validate(c *cobra.Command) error {
	f := c.Flags()
	if err := rf.quickFlags.validate(c); err != nil {
		return err
	}
	if rf.ephemeral == (rf.addr != "") {
		return usagef("give exactly one of --ephemeral and --addr HOST:PORT")
	}
	cmd := strings.ToUpper(rf.command)
	switch cmd {
	case respdrv.CommandMGET, respdrv.CommandGET, respdrv.CommandSET:
	case strings.ToUpper(respdrv.CommandCustom):
		if strings.TrimSpace(rf.args) == "" {
			return usagef("--command custom needs --args, e.g. --args 'HGET {key} name'")
		}
		if _, err := splitCommand(rf.args); err != nil {
			return usagef("--args: %v", err)
		}
	default:
		return usagef("--command must be MGET, GET, SET or custom, got %q", rf.command)
	}
	if rf.args != "" && cmd != strings.ToUpper(respdrv.CommandCustom) {
		return usagef("--args is for --command custom, not %s", cmd)
	}
	for _, b := range rf.batches.v {
		if b < 1 || b > suite.MaxRESPBatch {
			return usagef("--batch must be 1–%d keys, got %d", suite.MaxRESPBatch, b)
		}
		if b > 1 && cmd != respdrv.CommandMGET {
			return usagef("--batch %d: only MGET reads several keys; %s takes one", b, cmd)
		}
	}
	for _, p := range rf.pipelines.v {
		if p > respdrv.MaxPipeline {
			return usagef("--pipeline must be 1–%d, got %d", respdrv.MaxPipeline, p)
		}
	}
	switch {
	case rf.keySpace < 1:
		return usagef("--keyspace must be ≥ 1, got %d", rf.keySpace)
	case rf.timeout < 0:
		return usagef("--timeout must be ≥ 0, got %s", rf.timeout)
	case rf.sampled < 0 || rf.sampled > 1:
		return usagef("--validate-sampled must be a fraction from 0 to 1, got %v", rf.sampled)
	case rf.sampled > 0 && cmd != respdrv.CommandMGET && cmd != respdrv.CommandGET:
		return usagef("--validate-sampled checks GET and MGET replies, not %s", cmd)
	case rf.ephemeralPG && rf.pgDSN != "":
		return usagef("give --ephemeral-pg or --fill-from-pg-dsn, not both")
	case rf.fillFromPG && !rf.ephemeralPG && rf.pgDSN == "":
		return usagef("--fill-from-pg needs a source: --ephemeral-pg or --fill-from-pg-dsn DSN")
	case rf.verifyPG && !rf.usePG():
		return usagef("--verify-against-pg needs PostgreSQL: --fill-from-pg with --ephemeral-pg or --fill-from-pg-dsn DSN")
	case rf.ephemeralPG && (rf.rows < 1 || rf.rows > 1<<31):
		return usagef("--rows must be 1–%d, got %d", int64(1)<<31, rf.rows)
	case rf.ephemeralPG && rf.pgPK != "id":
		return usagef("--pg-pk: the --ephemeral-pg demo table's key is id, not %q", rf.pgPK)
	case f.Changed("fill") && !rf.fill && rf.usePG():
		return usagef("--fill=false contradicts a PostgreSQL fill")
	case rf.ephemeral && (rf.tls || rf.tlsCA != "" || rf.tlsName != ""):
		return usagef("--tls is for --addr: the --ephemeral server speaks plain TCP on loopback")
	case !rf.ephemeral && (rf.targetCPUs != "" || rf.maxClients != 0):
		return usagef("--target-cpus and --max-clients configure the --ephemeral server")
	case (rf.tlsCA != "" || rf.tlsName != "") && !rf.tls:
		return usagef("--tls-ca and --tls-server-name need --tls")
	case rf.tokenEnv != "" && rf.tokenFile != "":
		return usagef("give --token-env or --token-file, not both")
	case strings.Contains(rf.key, "{db}") && rf.db == "":
		return usagef("--key %q uses {db}: give --db", rf.key)
	}
	if rf.sampled > 0 && !rf.fills(c) {
		return usagef("--validate-sampled compares with the rows benchrig filled: give --fill or a PostgreSQL fill")
	}
	// The driver's own rules (key template, value, custom argv), before
	// anything starts.
	for _, b := range rf.batches.v {
		dc := respdrv.DefaultConfig()
		dc.Addr, dc.Command, dc.KeyTemplate, dc.DB, dc.Value = "127.0.0.1:1", rf.command, rf.key, rf.db, rf.value
		if strings.EqualFold(rf.command, respdrv.CommandCustom) {
			dc.Command, dc.Args = respdrv.CommandCustom, mustSplit(rf.args)
		}
		dc.Batch, dc.KeySpace, dc.Timeout = b, rf.keySpace, rf.timeout
		if _, err := respdrv.New(dc); err != nil {
			return usageError{err}
		}
	}
	return nil
}

// mustSplit splits a command line already checked by splitCommand.
func mustSplit(s string) []string {
	argv, _ := splitCommand(s)
	return argv
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

// variant names the command measured, the column of the report.
func (rf *respFlags) variant() string {
	if v := strings.ToUpper(rf.command); v != "CUSTOM" {
		return v
	}
	return respdrv.CommandCustom
}

func runRESP(a *app, c *cobra.Command, rf *respFlags) error {
	if err := rf.validate(c); err != nil {
		return err
	}
	d := rf.suite(c, "resp", quickPhases{})
	rt := doc{}
	if rf.ephemeral {
		rt["ephemeral"] = true
		if rf.maxClients != 0 {
			rt["max_clients"] = rf.maxClients
		}
	} else {
		rt["addr"] = rf.addr
	}
	for k, v := range map[string]string{"user": rf.user, "token_env": rf.tokenEnv, "token_file": rf.tokenFile} {
		if v != "" {
			rt[k] = v
		}
	}
	if rf.tls {
		t := doc{}
		if rf.tlsCA != "" {
			t["ca"] = rf.tlsCA
		}
		if rf.tlsName != "" {
			t["server_name"] = rf.tlsName
		}
		rt["tls"] = t
	}
	rows := rf.keySpace
	if !rf.fills(c) {
		rt["fill"] = false
	}
	if rf.usePG() {
		fp := doc{"table": rf.pgTable, "pk": rf.pgPK}
		if rf.ephemeralPG {
			fp["ephemeral"] = true
			rows = max(rows, rf.rows)
		} else {
			if err := os.Setenv(quickFillDSNEnv, rf.pgDSN); err != nil {
				return err
			}
			defer os.Unsetenv(quickFillDSNEnv)
			fp["dsn_env"] = quickFillDSNEnv
		}
		rt["fill_from_pg"] = fp
		rt["verify_against_pg"] = rf.verifyPG
	}
	path := doc{"command": strings.ToUpper(rf.command), "key": rf.key, "timeout": rf.timeout.String()}
	if strings.EqualFold(rf.command, respdrv.CommandCustom) {
		argv, _ := splitCommand(rf.args)
		path["command"], path["args"] = "CUSTOM", argv
	}
	for k, v := range map[string]string{"db": rf.db, "value": rf.value} {
		if v != "" {
			path[k] = v
		}
	}
	if rf.sampled > 0 {
		path["validate_sampled"] = rf.sampled
	}
	variant := suiteName(strings.ToLower(rf.variant()))
	d["targets"] = doc{"redis": doc{"redis": rt}}
	d["paths"] = doc{variant: doc{"resp": path}}
	d["workloads"] = doc{"keys": doc{"kind": "hot", "rows": rows, "hot": rf.keySpace}}
	m := d["matrix"].(doc)
	m["targets"], m["paths"], m["workloads"], m["batches"] = []string{"redis"}, []string{variant}, []string{"keys"}, rf.batches.v
	where := rf.addr
	if rf.ephemeral {
		where = "ephemeral redis-server"
	}
	var server string
	job := quickJob{
		name: "benchrig resp", doc: d, args: pgRedactArgs(respRedactArgs(a.args), ""),
		onPrepared: func(prov map[string]result.Provenance) {
			for _, pv := range prov {
				server = strings.TrimSpace(pv.Version)
			}
		},
		title: func(s *result.Sample) string {
			return fmt.Sprintf("benchrig resp %s · %s %s · %s", driverAddr(s, where), rf.variant(), s.Case, describeWindow(s))
		},
		heading: func(n int) string {
			return fmt.Sprintf("benchrig resp %s (redis %s) · %s · %d samples", where, server, rf.variant(), n)
		},
	}
	return runQuick(a.ctx, &rf.quickFlags, job, a.stdout, a.stderr)
}

// respRedactArgs returns the command line with the password of a
// --fill-from-pg-dsn replaced; AUTH tokens never are on it (only where they
// are: --token-env, --token-file).
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

// driverAddr is the address a sample's RESP driver used, or def.
func driverAddr(s *result.Sample, def string) string {
	var d struct {
		Addr string `json:"addr"`
	}
	if s.Config == nil || json.Unmarshal(s.Config.Driver, &d) != nil || d.Addr == "" {
		return def
	}
	return d.Addr
}
