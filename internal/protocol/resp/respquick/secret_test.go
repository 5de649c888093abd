package respquick

import (
	"testing"

	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/secret/secrettest"
)

// TestPGDSNNeverPrints: --fill-from-pg-dsn is held as a secret.DSN.
func TestPGDSNNeverPrints(t *testing.T) {
	const pw = "s3cret-fill-pw"
	r := Quick{PGDSN: secret.NewDSN("host=db user=bench password=" + pw)}
	secrettest.NoLeak(t, r, pw)
	secrettest.NoLeak(t, &r, pw)
}
