package pg

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/secret/secrettest"
	"github.com/benchrig/benchrig/internal/workload"
)

// TestConfigJSONUnchanged: the config's JSON (a results file's
// config.driver) is byte for byte what it was when DSN was a string
// redacted by the config's own MarshalJSON.
func TestConfigJSONUnchanged(t *testing.T) {
	const rest = `"path":"sql","table":"items","pk":"id","sql":"SELECT x FROM t WHERE a \u003c $1 AND b \u003e 2 \u0026\u0026 c",`
	const wl = `"workload":{"kind":"uniform","rows":100,"hot":0,"batch":4},"timeout":3000000000}`
	for _, tc := range []struct{ dsn, want string }{
		{"postgres://bench:s3cret-pw@db.example:5432/bench?sslmode=disable&application_name=a<b>&c",
			`{"dsn":"postgres://bench:[redacted]@db.example:5432/bench?sslmode=disable\u0026application_name=a\u003cb\u003e\u0026c",`},
		{"host=127.0.0.1 port=5432 user=bench password='se cret' dbname=bench",
			`{"dsn":"host=127.0.0.1 port=5432 user=bench password=[redacted] dbname=bench",`},
		{"postgres://bench@127.0.0.1:5432/bench", `{"dsn":"postgres://bench@127.0.0.1:5432/bench",`},
		{"", `{"dsn":"",`},
	} {
		c := Config{DSN: secret.NewDSN(tc.dsn), Path: SQL, SQL: "SELECT x FROM t WHERE a < $1 AND b > 2 && c", Table: "items", PK: "id",
			Workload: workload.Config{Kind: workload.Uniform, Batch: 4, Rows: 100}, Timeout: 3 * time.Second}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if want := tc.want + rest + wl; string(b) != want {
			t.Errorf("JSON of %q:\n got %s\nwant %s", tc.dsn, b, want)
		}
		b, _ = json.Marshal(c.WithDefaults())
		if want := tc.want + rest + `"max_message":67108864,` + wl; string(b) != want {
			t.Errorf("JSON of %q with defaults:\n got %s\nwant %s", tc.dsn, b, want)
		}
	}
}

// TestConfigNeverPrintsPassword: the config, alone, by pointer and in a
// struct, printed and encoded, never shows the DSN's password.
func TestConfigNeverPrintsPassword(t *testing.T) {
	const pw = "Secr3t-pg-pw"
	for _, dsn := range []string{"postgres://bench:" + pw + "@db/app", "host=db user=bench password=" + pw, "postgres://db/app?password=" + pw} {
		c := Config{DSN: secret.NewDSN(dsn)}.WithDefaults()
		secrettest.NoLeak(t, c, pw)
		secrettest.NoLeak(t, &c, pw)
		secrettest.NoLeak(t, struct{ Driver Config }{c}, pw)
		secrettest.NoLeak(t, []Config{c}, pw)
	}
}
