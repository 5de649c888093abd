package pgquick

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/cli"
	"github.com/benchrig/benchrig/internal/cliflag"
	"github.com/benchrig/benchrig/internal/execute"
	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/pgephemeral"
	pgproto "github.com/benchrig/benchrig/internal/protocol/pg"
	pgdrv "github.com/benchrig/benchrig/internal/protocol/pg/driver"
	"github.com/benchrig/benchrig/internal/quick"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/workload"
)

// pgFlags are the flags of benchrig pg.
type pgFlags struct {
	cli.QuickFlags
	p Quick
}

func init() { cli.RegisterQuick(string(pgproto.Key), pgCmd) }

func pgCmd(a *cli.App) *cobra.Command {
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
	pf.QuickFlags.Register(c, 10)
	f := c.Flags()
	pf.p.Batches = []int{1}
	f.Var(cliflag.Ints(&pf.p.Batches), "batch", "keys per request; a list such as 1,64 runs one case per value")
	f.StringSliceVar(&pf.p.Paths, "path", []string{string(pgdrv.PreparedOne)},
		"access paths to compare: prepared-one, prepared-one/pipeline, any, sql, update (a list)")
	f.BoolVar(&pf.p.Ephemeral, "ephemeral", false, "start a throwaway PostgreSQL server with the demo table for the run, and remove it after")
	f.Var(&pf.p.DSN, "dsn", "an existing server's connection string (redacted in every output; default $PGDSN, then $DATABASE_URL)")
	f.StringVar(&pf.p.DSNEnv, "dsn-env", "", "environment variable holding the connection string")
	f.IntVar(&pf.p.MaxConns, "max-connections", 0, "max_connections of the --ephemeral server (default: the most connections + 10)")
	f.StringVar(&pf.p.SharedBuffers, "shared-buffers", pgephemeral.DefaultSharedBuffers, "shared_buffers of the --ephemeral server")
	f.StringVar(&pf.p.Bin, "pg-bin", "", "directory of initdb and postgres for --ephemeral (default: the newest installation found)")
	f.StringVar(&pf.p.SQL, "sql", "", "the sql path's statement; $1 is the batch of keys (bigint[])")
	f.StringVar(&pf.p.PGBatch, "pg-batch", string(pgdrv.Roundtrips), "how prepared-one sends a batch: roundtrips or pipeline")
	f.BoolVar(&pf.p.SkipDecode, "skip-decode", false, "prepared-one and any: read and count the rows without parsing their JSON (as pgbench discards them), to see what decoding costs the client")
	f.StringVar(&pf.p.Table, "table", pgclient.DefaultTable, "the benchmark table")
	f.StringVar(&pf.p.Kind, "workload", string(workload.Hot), "key sequence: hot, cold, uniform or zipf (mixed: hot with --writes 5)")
	f.Int64Var(&pf.p.Rows, "rows", pgclient.DefaultRows, "rows of the table (keys 1…rows)")
	f.IntVar(&pf.p.Payload, "payload-bytes", pgclient.DefaultPayloadBytes, "bytes of each row's payload column (--ephemeral)")
	f.Int64Var(&pf.p.Hot, "hot", 0, "hot set of a hot workload (default 128)")
	f.Float64Var(&pf.p.Writes, "writes", 0, "percent of operations that update a row (suites' writes:), e.g. 5")
	f.IntVar(&pf.p.WriteEvery, "write-every", 0, "update every Nth operation (the same as --writes 100/N)")
	cliflag.DurationVarP(f, &pf.p.Timeout, "timeout", "", pgdrv.DefaultTimeout, "per-request timeout")
	f.Float64Var(&pf.MaxMiss, "max-miss", 0, cli.MaxMissUsage)
	// pg's own phase defaults: a short sampled idle around each window.
	f.Lookup("baseline").DefValue, f.Lookup("settle").DefValue, f.Lookup("recovery").DefValue = "1s", "500ms", "1s"
	return c
}

func runPG(a *cli.App, c *cobra.Command, pf *pgFlags) error {
	if err := pf.Options(); err != nil {
		return err
	}
	pf.p.Common = pf.Common
	d, env, pw, err := pf.p.Build()
	a.Secrets.AddValue(pw)
	if err != nil {
		return exitcode.OneLine(exitcode.Usage(err), a.Secrets)
	}
	if err := cli.RunQuick(a, &pf.QuickFlags, pgJob(a.WithSecretNames(d), env, pf.p.Kind)); err != nil {
		return exitcode.OneLine(err, a.Secrets)
	}
	return nil
}

// pgJob is benchrig pg's job of a kind of workload: its report names the
// server's PostgreSQL version.
func pgJob(doc quick.Doc, env map[string]string, kind string) execute.Quick {
	version := ""
	return execute.Quick{
		Name: "benchrig pg", Doc: doc, Env: env,
		OnPrepared: func(prov map[string]result.Provenance) {
			for _, pv := range prov {
				version = pv.Version
			}
		},
		Title: func(s *result.Sample) string {
			return fmt.Sprintf("benchrig pg · PostgreSQL %s · %s · %s · %s", version, s.Variant, s.Case, execute.DescribeWindow(s))
		},
		Heading: func(n int) string {
			return fmt.Sprintf("benchrig pg · PostgreSQL %s · %s workload · %d samples", version, kind, n)
		},
	}
}
