package respquick

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/cli"
	"github.com/benchrig/benchrig/internal/cliflag"
	"github.com/benchrig/benchrig/internal/execute"
	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/pgclient"
	respproto "github.com/benchrig/benchrig/internal/protocol/resp"
	respdrv "github.com/benchrig/benchrig/internal/protocol/resp/driver"
	"github.com/benchrig/benchrig/internal/quick"
	"github.com/benchrig/benchrig/internal/result"
)

// respFlags are the flags of benchrig resp.
type respFlags struct {
	cli.QuickFlags
	r Quick
}

func init() { cli.RegisterQuick(string(respproto.Key), respCmd) }

func respCmd(a *cli.App) *cobra.Command {
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
	rf.QuickFlags.Register(c, 64)
	f := c.Flags()
	rf.r.Batches = []int{1}
	f.Var(cliflag.Ints(&rf.r.Batches), "batch", "keys per MGET (1–1024); a list such as 1,64 runs one case per value")
	f.BoolVar(&rf.r.Ephemeral, "ephemeral", false, "start a fresh redis-server on a free loopback port for the run, and stop it after")
	f.StringVar(&rf.r.Addr, "addr", "", "an existing server's host:port (sampled when it listens on this machine's loopback)")
	f.StringVar(&rf.r.User, "user", "", "ACL user for AUTH user token")
	f.StringVar(&rf.r.TokenEnv, "token-env", "", "environment variable holding the AUTH token (with --ephemeral: the server's password)")
	f.StringVar(&rf.r.TokenFile, "token-file", "", "file holding the AUTH token")
	f.BoolVar(&rf.r.TLS, "tls", false, "connect with TLS (--addr only)")
	f.StringVar(&rf.r.TLSCA, "tls-ca", "", "PEM file of the CA certificates to trust")
	f.StringVar(&rf.r.TLSName, "tls-server-name", "", "server name to verify (default the host of --addr)")
	f.IntVar(&rf.r.MaxClients, "max-clients", 0, "maxclients of the --ephemeral server (default: the most connections + 32)")
	f.StringVar(&rf.r.Command, "command", respdrv.CommandMGET, "MGET, GET, SET or custom (with --args)")
	f.StringVar(&rf.r.Args, "args", "", "the custom command, e.g. 'HGET {key} name' ({id}: key number, {key}: --key rendered)")
	f.StringVar(&rf.r.Key, "key", respdrv.DefaultKeyTemplate, "key template: {id} is the key number 1…keyspace, {db} is --db")
	f.StringVar(&rf.r.DB, "db", "", "fills {db} in --key (e.g. CRUD:{db}.public.items:{\"id\":{id}})")
	f.StringVar(&rf.r.Value, "value", "", "SET value template (default value:{id})")
	f.Int64Var(&rf.r.KeySpace, "keyspace", respdrv.DefaultKeySpace, "distinct keys the requests cycle through (1…keyspace)")
	cliflag.DurationVarP(f, &rf.r.Timeout, "timeout", "", respdrv.DefaultTimeout, "per-round-trip timeout (0: none)")
	f.BoolVar(&rf.r.Fill, "fill", false, "fill the keyspace before the load (default with --ephemeral; with --addr this writes into that server)")
	f.BoolVar(&rf.r.FillFromPG, "fill-from-pg", false, "fill from PostgreSQL's table (row_to_json) instead of generated rows; needs --ephemeral-pg or --fill-from-pg-dsn")
	f.BoolVar(&rf.r.EphemeralPG, "ephemeral-pg", false, "start an ephemeral PostgreSQL with the demo table (--rows rows) as the fill's source")
	f.Var(&rf.r.PGDSN, "fill-from-pg-dsn", "PostgreSQL DSN of the fill's source (redacted everywhere)")
	f.StringVar(&rf.r.PGTable, "pg-table", pgclient.DefaultTable, "the source table")
	f.StringVar(&rf.r.PGPK, "pg-pk", "id", "the source table's integer primary key")
	f.Int64Var(&rf.r.Rows, "rows", pgclient.DefaultRows, "rows of the --ephemeral-pg demo table")
	f.BoolVar(&rf.r.VerifyPG, "verify-against-pg", false, "pre-flight: MGET of a probe batch must return exactly the rows PostgreSQL returns for them (with --fill=false and --fill-from-pg-dsn: a server that fills itself, checked without writing)")
	f.Float64Var(&rf.r.Sampled, "validate-sampled", 0, "fraction (0–1) of GET/MGET replies compared during the load with the rows filled")
	f.Float64Var(&rf.MaxMiss, "max-miss", 0, cli.MaxMissUsage)
	f.IntVar(&rf.r.VerifyBatch, "verify-batch", 0, "keys per pre-flight MGET of --verify-against-pg (default: the largest --batch, at most 128)")
	return c
}

func runRESP(a *cli.App, c *cobra.Command, rf *respFlags) error {
	if err := rf.Options(); err != nil {
		return err
	}
	rf.r.Common = rf.Common
	d, env, err := rf.r.Build()
	if err != nil {
		return exitcode.Usage(err)
	}
	where := rf.r.Addr
	if rf.r.Ephemeral {
		where = "ephemeral redis-server"
	}
	return cli.RunQuick(a, &rf.QuickFlags, respJob(a.WithSecretNames(d), env, where, rf.r.Variant()))
}

// respJob is benchrig resp's job against where (the address, or the
// ephemeral server) with its command (variant): its report names the
// address each sample's driver used and the server's version.
func respJob(doc quick.Doc, env map[string]string, where, variant string) execute.Quick {
	var server string
	return execute.Quick{
		Name: "benchrig resp", Doc: doc, Env: env,
		OnPrepared: func(prov map[string]result.Provenance) {
			for _, pv := range prov {
				server = strings.TrimSpace(pv.Version)
			}
		},
		Title: func(s *result.Sample) string {
			return fmt.Sprintf("benchrig resp %s · %s %s · %s", s.DriverAddr(where), variant, s.Case, execute.DescribeWindow(s))
		},
		Heading: func(n int) string {
			return fmt.Sprintf("benchrig resp %s (redis %s) · %s · %d samples", where, server, variant, n)
		},
	}
}
