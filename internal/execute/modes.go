package execute

import (
	"fmt"
	"strings"

	"github.com/benchrig/benchrig/internal/quick"
	"github.com/benchrig/benchrig/internal/result"
)

// HTTPJob is benchrig http's job against rawURL (as shown, credentials
// hidden): its report is titled by the URL and connections.
func HTTPJob(doc quick.Doc, rawURL string) Quick {
	return Quick{
		Name: "benchrig http", Doc: doc,
		Title: func(s *result.Sample) string {
			conns := 0
			if s.Config != nil {
				conns = s.Config.Engine.Connections
			}
			return fmt.Sprintf("benchrig http %s · %d connections · %s", rawURL, conns, describeWindow(s))
		},
		Heading: func(n int) string { return fmt.Sprintf("benchrig http %s · %s", rawURL, plural(n, "sample")) },
	}
}

// PGJob is benchrig pg's job of a kind of workload: its report names the
// server's PostgreSQL version.
func PGJob(doc quick.Doc, env map[string]string, kind string) Quick {
	version := ""
	return Quick{
		Name: "benchrig pg", Doc: doc, Env: env,
		OnPrepared: func(prov map[string]result.Provenance) {
			for _, pv := range prov {
				version = pv.Version
			}
		},
		Title: func(s *result.Sample) string {
			return fmt.Sprintf("benchrig pg · PostgreSQL %s · %s · %s · %s", version, s.Variant, s.Case, describeWindow(s))
		},
		Heading: func(n int) string {
			return fmt.Sprintf("benchrig pg · PostgreSQL %s · %s workload · %d samples", version, kind, n)
		},
	}
}

// RESPJob is benchrig resp's job against where (the address, or the
// ephemeral server) with its command (variant): its report names the
// address each sample's driver used and the server's version.
func RESPJob(doc quick.Doc, env map[string]string, where, variant string) Quick {
	var server string
	return Quick{
		Name: "benchrig resp", Doc: doc, Env: env,
		OnPrepared: func(prov map[string]result.Provenance) {
			for _, pv := range prov {
				server = strings.TrimSpace(pv.Version)
			}
		},
		Title: func(s *result.Sample) string {
			return fmt.Sprintf("benchrig resp %s · %s %s · %s", s.DriverAddr(where), variant, s.Case, describeWindow(s))
		},
		Heading: func(n int) string {
			return fmt.Sprintf("benchrig resp %s (redis %s) · %s · %d samples", where, server, variant, n)
		},
	}
}
