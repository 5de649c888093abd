package main

import (
	"net/url"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/resp/resptest"
)

// TestDSNToANonPostgresPort: a DSN naming a port where a RESP server, an
// HTTP server or a silent listener runs used to wait out the 20 s connect
// timeout and then say "tls error: timeout"; now the run fails at once
// (the silent one within 2 s) naming what answered, and sends no load.
func TestDSNToANonPostgresPort(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	rs, err := resptest.Start(resptest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rs.Close() })
	hu, _ := url.Parse(helloServer(t))
	silent := silentListener(t)
	for _, tc := range []struct{ name, addr, want string }{
		{"redis", rs.Addr(), "did not answer PostgreSQL's SSLRequest within 2s: it does not speak PostgreSQL's protocol (a Redis or HTTP server"},
		{"http", hu.Host, "does not speak PostgreSQL's protocol"},
		{"silent", silent, "did not answer PostgreSQL's SSLRequest within 2s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := invoke(t, "pg", "--dsn", "postgres://bench:s3cret@"+tc.addr+"/bench", "--path", "prepared-one", "-d", "1s")
			if code != 1 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, tc.addr) || strings.Contains(stderr, "s3cret") || strings.Contains(stderr, "tls error") {
				t.Errorf("exit %d, stderr %q; want exit 1 and %q naming %s", code, stderr, tc.want, tc.addr)
			}
		})
	}
}
