package respquick

import (
	"fmt"
	"strings"
	"time"

	respproto "github.com/benchrig/benchrig/internal/protocol/resp"
	respdrv "github.com/benchrig/benchrig/internal/protocol/resp/driver"
	"github.com/benchrig/benchrig/internal/quick"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/textclip"
)

// Quick are the options of benchrig resp.
type Quick struct {
	quick.Common
	Batches []int

	Ephemeral  bool
	Addr       string
	User       string
	TokenEnv   string
	TokenFile  string
	TLS        bool
	TLSCA      string
	TLSName    string
	MaxClients int

	Command  string
	Args     string
	Key      string
	DB       string
	Value    string
	KeySpace int64
	Timeout  time.Duration

	Fill        bool
	FillFromPG  bool
	EphemeralPG bool
	PGDSN       secret.DSN
	PGTable     string
	PGPK        string
	Rows        int64
	VerifyPG    bool
	VerifyBatch int
	Sampled     float64
}

// FillDSNEnv carries --fill-from-pg-dsn to the in-memory suite
// (fill_from_pg.dsn_env), so the recorded suite never holds it.
const FillDSNEnv = "BENCHRIG_QUICK_FILL_DSN"

// Build returns the suite of one RESP target and the variables the run reads
// in place of the environment's (a fill's DSN, under FillDSNEnv).
func (r *Quick) Build() (d quick.Doc, env map[string]string, err error) {
	if err := r.Validate(); err != nil {
		return nil, nil, err
	}
	if err := r.check(); err != nil {
		return nil, nil, err
	}
	d = r.Suite("resp", result.Phases{})
	rt := quick.Doc{}
	if r.Ephemeral {
		rt["ephemeral"] = true
		if r.MaxClients != 0 {
			rt["max_clients"] = r.MaxClients
		}
	} else {
		rt["addr"] = r.Addr
	}
	for k, v := range map[string]string{"user": r.User, "token_env": r.TokenEnv, "token_file": r.TokenFile} {
		if v != "" {
			rt[k] = v
		}
	}
	if r.TLS {
		t := quick.Doc{}
		if r.TLSCA != "" {
			t["ca"] = r.TLSCA
		}
		if r.TLSName != "" {
			t["server_name"] = r.TLSName
		}
		rt["tls"] = t
	}
	rows := r.KeySpace
	if !r.Fills() {
		rt["fill"] = false
	}
	if r.Changed("fill") && !r.Fill && r.UsePG() {
		// the server fills itself: verify a probe batch against the table
		// it serves, write nothing.
		env = map[string]string{FillDSNEnv: r.PGDSN.Reveal()}
		rt["source_pg"] = quick.Doc{"table": r.PGTable, "pk": r.PGPK, "dsn_env": FillDSNEnv}
		rt["verify_against_pg"] = true
		if r.VerifyBatch != 0 {
			rt["verify_batch"] = r.VerifyBatch
		}
	} else if r.UsePG() {
		fp := quick.Doc{"table": r.PGTable, "pk": r.PGPK}
		if r.EphemeralPG {
			fp["ephemeral"] = true
			rows = max(rows, r.Rows)
		} else {
			env = map[string]string{FillDSNEnv: r.PGDSN.Reveal()}
			fp["dsn_env"] = FillDSNEnv
		}
		rt["fill_from_pg"] = fp
		rt["verify_against_pg"] = r.VerifyPG
		if r.VerifyBatch != 0 {
			rt["verify_batch"] = r.VerifyBatch
		}
	}
	path := quick.Doc{"command": strings.ToUpper(r.Command), "key": r.Key, "timeout": r.Timeout.String()}
	if strings.EqualFold(r.Command, respdrv.CommandCustom) {
		argv, _ := quick.SplitCommand(r.Args)
		path["command"], path["args"] = "CUSTOM", argv
	}
	for k, v := range map[string]string{"db": r.DB, "value": r.Value} {
		if v != "" {
			path[k] = v
		}
	}
	if r.Sampled > 0 {
		path["validate_sampled"] = r.Sampled
	}
	variant := quick.SuiteName(strings.ToLower(r.Variant()))
	d["targets"] = quick.Doc{"redis": quick.Doc{"redis": rt}}
	d["paths"] = quick.Doc{variant: quick.Doc{"resp": path}}
	d["workloads"] = quick.Doc{"keys": quick.Doc{"kind": "hot", "rows": rows, "hot": r.KeySpace}}
	m := d["matrix"].(quick.Doc)
	m["targets"], m["paths"], m["workloads"], m["batches"] = []string{"redis"}, []string{variant}, []string{"keys"}, r.Batches
	return d, env, nil
}

// validate checks the flags that need no server, before anything starts.
func (r *Quick) check() error {
	if r.Ephemeral == (r.Addr != "") {
		return fmt.Errorf("give exactly one of --ephemeral and --addr HOST:PORT")
	}
	cmd := strings.ToUpper(r.Command)
	switch cmd {
	case respdrv.CommandMGET, respdrv.CommandGET, respdrv.CommandSET:
	case strings.ToUpper(respdrv.CommandCustom):
		if strings.TrimSpace(r.Args) == "" {
			return fmt.Errorf("--command custom needs --args, e.g. --args 'HGET {key} name'")
		}
		if _, err := quick.SplitCommand(r.Args); err != nil {
			return fmt.Errorf("--args: %v", err)
		}
	default:
		return fmt.Errorf("--command must be MGET, GET, SET or custom, got %q", r.Command)
	}
	if r.Args != "" && cmd != strings.ToUpper(respdrv.CommandCustom) {
		return fmt.Errorf("--args is for --command custom, not %s", cmd)
	}
	for _, b := range r.Batches {
		if b < 1 || b > respproto.MaxBatch {
			return fmt.Errorf("--batch must be 1–%d keys, got %d", respproto.MaxBatch, b)
		}
		if b > 1 && cmd != respdrv.CommandMGET {
			return fmt.Errorf("--batch %d: only MGET reads several keys; %s takes one", b, cmd)
		}
	}
	for _, p := range r.Pipelines {
		if p > respdrv.MaxPipeline {
			return fmt.Errorf("--pipeline must be 1–%d, got %d", respdrv.MaxPipeline, p)
		}
	}
	switch {
	case r.KeySpace < 1:
		return fmt.Errorf("--keyspace must be ≥ 1, got %d", r.KeySpace)
	case r.Timeout < 0:
		return fmt.Errorf("--timeout must be ≥ 0, got %s", r.Timeout)
	case r.Sampled < 0 || r.Sampled > 1:
		return fmt.Errorf("--validate-sampled must be a fraction from 0 to 1, got %v", r.Sampled)
	case r.Sampled > 0 && cmd != respdrv.CommandMGET && cmd != respdrv.CommandGET:
		return fmt.Errorf("--validate-sampled checks GET and MGET replies, not %s", cmd)
	case r.EphemeralPG && !r.PGDSN.IsZero():
		return fmt.Errorf("give --ephemeral-pg or --fill-from-pg-dsn, not both")
	case r.FillFromPG && !r.EphemeralPG && r.PGDSN.IsZero():
		return fmt.Errorf("--fill-from-pg needs a source: --ephemeral-pg or --fill-from-pg-dsn DSN")
	case r.VerifyPG && !r.UsePG():
		return fmt.Errorf("--verify-against-pg needs PostgreSQL: --fill-from-pg with --ephemeral-pg or --fill-from-pg-dsn DSN")
	case r.EphemeralPG && (r.Rows < 1 || r.Rows > 1<<31):
		return fmt.Errorf("--rows must be 1–%d, got %d", int64(1)<<31, r.Rows)
	case r.EphemeralPG && r.PGPK != "id":
		return fmt.Errorf("--pg-pk: the --ephemeral-pg demo table's key is id, not %q", r.PGPK)
	case r.Changed("fill") && !r.Fill && r.UsePG() && !(r.VerifyPG && !r.PGDSN.IsZero() && !r.FillFromPG):
		return fmt.Errorf("--fill=false contradicts a PostgreSQL fill; a server that fills itself is checked with --fill=false --verify-against-pg --fill-from-pg-dsn DSN")
	case r.Ephemeral && (r.TLS || r.TLSCA != "" || r.TLSName != ""):
		return fmt.Errorf("--tls is for --addr: the --ephemeral server speaks plain TCP on loopback")
	case !r.Ephemeral && (r.TargetCPUs != "" || r.MaxClients != 0):
		return fmt.Errorf("--target-cpus and --max-clients configure the --ephemeral server")
	case (r.TLSCA != "" || r.TLSName != "") && !r.TLS:
		return fmt.Errorf("--tls-ca and --tls-server-name need --tls")
	case r.TokenEnv != "" && r.TokenFile != "":
		return fmt.Errorf("give --token-env or --token-file, not both")
	case strings.Contains(r.Key, "{db}") && r.DB == "":
		return fmt.Errorf("--key %q uses {db}: give --db", textclip.String(r.Key))
	}
	if r.Sampled > 0 && !r.Fills() {
		return fmt.Errorf("--validate-sampled compares with the rows benchrig filled: give --fill or a PostgreSQL fill")
	}
	// The driver's own rules (key template, value, custom argv), before
	// anything starts.
	for _, b := range r.Batches {
		dc := respdrv.DefaultConfig()
		dc.Addr, dc.Command, dc.KeyTemplate, dc.DB, dc.Value = "127.0.0.1:1", r.Command, r.Key, r.DB, r.Value
		if strings.EqualFold(r.Command, respdrv.CommandCustom) {
			dc.Command, dc.Args = respdrv.CommandCustom, mustSplit(r.Args)
		}
		dc.Batch, dc.KeySpace, dc.Timeout = b, r.KeySpace, r.Timeout
		if _, err := respdrv.New(dc); err != nil {
			return err
		}
	}
	return nil
}

// UsePG reports whether the fill comes from PostgreSQL.
func (r *Quick) UsePG() bool { return r.EphemeralPG || !r.PGDSN.IsZero() }

// Fills reports whether benchrig fills the keyspace before the load.
func (r *Quick) Fills() bool {
	if r.Changed("fill") && !r.Fill {
		return false
	}
	if r.UsePG() {
		return true
	}
	if r.Changed("fill") {
		return r.Fill
	}
	return r.Ephemeral
}

// Variant names the command measured, the column of the report.
func (r *Quick) Variant() string {
	if v := strings.ToUpper(r.Command); v != "CUSTOM" {
		return v
	}
	return respdrv.CommandCustom
}

// mustSplit splits a command line already checked by SplitCommand.
func mustSplit(s string) []string {
	argv, _ := quick.SplitCommand(s)
	return argv
}
