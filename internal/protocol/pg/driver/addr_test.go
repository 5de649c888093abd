package pg

import (
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/workload"
)

// TestAddrNamesTheServer: the driver says the server's host:port as its
// DSN gives it (a run places its client beside a server on this machine
// by it), a Unix socket's directory as the host.
func TestAddrNamesTheServer(t *testing.T) {
	for dsn, want := range map[string]string{
		"postgres://bench:pw@127.0.0.1:5433/bench":      "127.0.0.1:5433",
		"host=db.example user=bench dbname=bench":       "db.example:5432",
		"host=/var/run/postgresql port=5499 user=bench": "/var/run/postgresql:5499",
		"postgres://bench@[::1]:6000/bench":             "[::1]:6000",
	} {
		d, err := New(Config{DSN: secret.NewDSN(dsn), Path: PreparedOne, Table: "items", PK: "id",
			Workload: workload.Config{Kind: workload.Uniform, Batch: 1, Rows: 10}, Timeout: time.Second})
		if err != nil {
			t.Fatalf("%q: %v", dsn, err)
		}
		if got := d.Addr(); got != want {
			t.Errorf("Addr of %q = %q, want %q", dsn, got, want)
		}
	}
}

// TestUnusedCachesSmall: the load's connections run only statements they
// prepared by name, so pgx's statement and description caches get a few
// entries, not the 512 each connection would allocate and clear maps for;
// a DSN asking for fewer keeps its own.
func TestUnusedCachesSmall(t *testing.T) {
	for dsn, want := range map[string]int{
		"postgres://bench@127.0.0.1:5433/bench":                                                         unusedCache,
		"postgres://bench@127.0.0.1:5433/bench?statement_cache_capacity=2&description_cache_capacity=2": 2,
	} {
		d, err := New(Config{DSN: secret.NewDSN(dsn), Path: PreparedOne, Table: "items", PK: "id",
			Workload: workload.Config{Kind: workload.Uniform, Batch: 1, Rows: 10}, Timeout: time.Second})
		if err != nil {
			t.Fatalf("%q: %v", dsn, err)
		}
		if s, ds := d.conn.StatementCacheCapacity, d.conn.DescriptionCacheCapacity; s != want || ds != want {
			t.Errorf("%q: statement cache %d, description cache %d, want %d", dsn, s, ds, want)
		}
	}
}
