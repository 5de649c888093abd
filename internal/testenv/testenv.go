// Package testenv decides, in one place, what a test does when a part it
// needs is missing: a browser, a server binary, the seeds' npm packages,
// root for network namespaces.
//
// A missing part fails the test when the run is strict — CI=true, or
// BENCHRIG_TEST_STRICT=1, which `make test` sets — and names the command
// that installs it. The user may skip a kind of part by name
// (BENCHRIG_TEST_SKIP=browser,seeds, which `SKIP=browser,seeds make test`
// sets; refused under CI=true by the make target). Outside both, as under a
// bare `go test`, a missing part skips the test with the reason, and
// `make test` lists every skip in its last lines.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"
)

// A Kind is a part the tests may need, named as SKIP takes it.
type Kind string

// The kinds of parts, and what installs each.
const (
	Browser  Kind = "browser"  // Chromium (headless): the report's in-browser checks
	Seeds    Kind = "seeds"    // the seeds' npm packages (Node 24, 12, 16, frameworks, pg, grpc-js)
	Redis    Kind = "redis"    // redis-server and redis-cli
	Postgres Kind = "postgres" // PostgreSQL's server binaries (initdb, postgres)
	Nginx    Kind = "nginx"    // nginx with the http2 module (nginx-light)
	Node     Kind = "node"     // node on PATH
	Netns    Kind = "netns"    // root and ip(8): the agents' network-namespace tests
	Tools    Kind = "tools"    // ordinary commands: sh, sleep, setsid, go, /proc
)

// installs says how to get each kind.
var installs = map[Kind]string{
	Browser:  "make deps (Debian package chromium)",
	Seeds:    "make seeds-npm (npm ci in examples/seeds/000, 002, 003 and examples/grpc)",
	Redis:    "make deps (Debian packages redis-server, redis-tools)",
	Postgres: "make deps (Debian package postgresql)",
	Nginx:    "make deps (Debian package nginx-light)",
	Node:     "make deps (Debian packages nodejs, npm)",
	Netns:    "run the tests as root; make deps (Debian package iproute2)",
	Tools:    "make deps",
}

// Kinds lists every kind, sorted.
func Kinds() []string {
	var ks []string
	for k := range installs {
		ks = append(ks, string(k))
	}
	sort.Strings(ks)
	return ks
}

// Strict reports whether a missing part fails the test.
func Strict() bool {
	return os.Getenv("CI") == "true" || os.Getenv("BENCHRIG_TEST_STRICT") == "1"
}

// Skipped reports whether the user skipped kind k by name.
func Skipped(k Kind) bool {
	for _, s := range strings.Split(os.Getenv("BENCHRIG_TEST_SKIP"), ",") {
		if strings.TrimSpace(s) == string(k) {
			return true
		}
	}
	return false
}

// Missing ends the test for a missing part of kind k, described by why:
// skipped when the user skipped k by name or the run is not strict,
// failed (naming what installs it) when it is.
func Missing(t testing.TB, k Kind, why string) {
	t.Helper()
	switch {
	case Skipped(k):
		t.Skipf("skipped by name (SKIP=%s): %s", k, why)
	case Strict():
		t.Fatalf("%s: a %s part is missing; install it with %s, or skip it by name with SKIP=%s make test (not under CI)", why, k, installs[k], k)
	default:
		t.Skipf("%s (install it with %s)", why, installs[k])
	}
}

// Need ends the test through Missing when err is not nil.
func Need(t testing.TB, k Kind, err error) {
	t.Helper()
	if err != nil {
		Missing(t, k, err.Error())
	}
}

// LookPath returns the path of command name, of kind k; a missing one ends
// the test through Missing. (SKIP matters only for a missing part: what is
// there runs.)
func LookPath(t testing.TB, k Kind, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, k, fmt.Sprintf("%s not found: %v", name, err))
	}
	return p
}

// WakeDelay is the worst lateness of 50 wake-ups from 1 ms sleeps, now:
// how long this machine's scheduler keeps a ready goroutine waiting.
func WakeDelay() time.Duration {
	var worst time.Duration
	for i := 0; i < 50; i++ {
		t0 := time.Now()
		time.Sleep(time.Millisecond)
		worst = max(worst, time.Since(t0)-time.Millisecond)
	}
	return worst
}

// Patience is how long one process of a test should wait for a word from
// another on this machine now: lo times the load per CPU (the 1-minute load
// average over the CPU count, when above 1), or 250 times the measured
// WakeDelay (a starved machine's stalls come in bursts far above one
// measurement), whichever is longer, and never above hi. Tests of
// deadlines between peers (the agents' heartbeats) take their deadlines
// from it instead of a constant.
func Patience(lo, hi time.Duration) time.Duration {
	p := lo
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		var l1 float64
		if _, err := fmt.Sscanf(string(b), "%f", &l1); err == nil && l1 > float64(runtime.NumCPU()) {
			p = time.Duration(float64(lo) * l1 / float64(runtime.NumCPU()))
		}
	}
	return min(max(p, 250*WakeDelay()), hi)
}
