package pgquick

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/secret/secrettest"
)

// TestDSNNeverPrints: --dsn is held as a secret.DSN; the options, printed
// or encoded, show it redacted, and the flag's value reads the raw DSN.
func TestDSNNeverPrints(t *testing.T) {
	const pw = "s3cret-quick-pw"
	var p Quick
	f := pflag.NewFlagSet("pg", pflag.ContinueOnError)
	f.Var(&p.DSN, "dsn", "")
	if err := f.Parse([]string{"--dsn", "postgres://bench:" + pw + "@db:5432/bench"}); err != nil {
		t.Fatal(err)
	}
	p.Changed = f.Changed
	if dsn, err := p.resolveDSN(); err != nil || dsn != "postgres://bench:"+pw+"@db:5432/bench" {
		t.Fatalf("resolveDSN: %q, %v", dsn, err)
	}
	p.Changed = nil // a func does not print or encode
	secrettest.NoLeak(t, p, pw)
	secrettest.NoLeak(t, &p, pw)
	if got := f.Lookup("dsn").Value.String(); got != "postgres://bench:"+secret.Placeholder+"@db:5432/bench" {
		t.Errorf("flag value shown as %q", got)
	}
}
