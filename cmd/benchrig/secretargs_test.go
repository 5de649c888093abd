package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/result"
	runner "github.com/benchrig/benchrig/internal/run"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/suite"
)

// TestRedactArgs: benchrig's own command line as recorded and as ps shows
// it after the re-exec: every credential hidden, every other word kept,
// and each hidden value collected for scrubbing (free text is not).
func TestRedactArgs(t *testing.T) {
	for _, tt := range []struct {
		args   []string
		want   string
		hidden []string
	}{
		{[]string{"pg", "--dsn", "postgres://u:pw1@h/db", "--dsn=host=h password=pw2", "--sql", "SELECT key=1"},
			"pg --dsn postgres://u:[redacted]@h/db --dsn=host=h password=[redacted] --sql SELECT key=[redacted]", []string{"pw1", "pw2"}},
		{[]string{"resp", "--fill-from-pg-dsn", "postgres://u:pw3@h/db", "-c", "4"},
			"resp --fill-from-pg-dsn postgres://u:[redacted]@h/db -c 4", []string{"pw3"}},
		{[]string{"http", "https://u:pw4@h/x?access_token=tk5&q=1", "-H", "Authorization: Bearer tk6", "-HX-Upstream-Key: k7",
			"--header=X-Tenant: t8", "--secret-header", "X-Tenant", "-H", "Accept: text/html"},
			"http https://u:[redacted]@h/x?access_token=[redacted]&q=1 -H Authorization: [redacted] -HX-Upstream-Key: [redacted] " +
				"--header=X-Tenant: [redacted] --secret-header X-Tenant -H Accept: text/html", []string{"pw4", "tk5", "tk6", "k7", "t8"}},
		{[]string{"http", "u:pw9@127.0.0.1:1/?cb=c10", "--secret-param=cb"},
			"http u:[redacted]@127.0.0.1:1/?cb=[redacted] --secret-param=cb", []string{"pw9", "c10"}},
		{[]string{"http", "http://127.0.0.1:1/", "--target", "node server.js --password=pw11 --db-password 'pw 12' DATABASE_URL=postgres://u:pw13@h/db"},
			"http http://127.0.0.1:1/ --target node server.js --password=[redacted] --db-password [redacted] DATABASE_URL=postgres://u:[redacted]@h/db",
			[]string{"pw11", "pw 12", "pw13"}},
		{[]string{"run", "suite.yaml", "-o", "r.json", "--set", "connections=4"}, "run suite.yaml -o r.json --set connections=4", nil},
	} {
		var found secret.Set
		got := strings.Join(redactArgs(tt.args, argPolicy(tt.args), &found), " ")
		if got != tt.want {
			t.Errorf("redactArgs(%q)\n got %s\nwant %s", tt.args, got, tt.want)
		}
		for _, h := range tt.hidden {
			if found.Scrub("<"+h+">") != "<"+secret.Placeholder+">" {
				t.Errorf("redactArgs(%q) did not collect %q", tt.args, h)
			}
		}
		if tt.hidden == nil && found.Len() != 0 {
			t.Errorf("redactArgs(%q) collected %q from plain text", tt.args, found.Values())
		}
	}
}

// TestHideArgvRestores: the re-executed benchrig takes its real arguments
// from BENCHRIG_ARGV and unsets it (no child inherits it); arguments
// without a credential are run as they are, with no re-exec.
func TestHideArgvRestores(t *testing.T) {
	var stderr strings.Builder
	t.Setenv(argvEnv, `["pg","--dsn","postgres://u:pw@h/db"]`)
	got := hideArgv([]string{"pg", "--dsn", "postgres://u:[redacted]@h/db"}, &stderr)
	if strings.Join(got, " ") != "pg --dsn postgres://u:pw@h/db" {
		t.Errorf("restored %q", got)
	}
	if _, ok := os.LookupEnv(argvEnv); ok {
		t.Errorf("%s still set", argvEnv)
	}
	t.Setenv(argvEnv, `not json`)
	if got := hideArgv([]string{"version"}, &stderr); len(got) != 1 || !strings.Contains(stderr.String(), "not a JSON list") {
		t.Errorf("bad %s: %q, stderr %q", argvEnv, got, stderr.String())
	}
	os.Unsetenv(argvEnv)
	plain := []string{"http", "http://127.0.0.1:1/", "-c", "4"}
	if got := hideArgv(plain, &stderr); strings.Join(got, " ") != strings.Join(plain, " ") {
		t.Errorf("plain args changed: %q", got)
	}
}

// TestScrubRecord: the last line of defence replaces known secrets in
// every string value of a record, never in its keys, and leaves a record
// without them untouched.
func TestScrubRecord(t *testing.T) {
	var set secret.Set
	set.Add("requests", "case", "pw-4711")
	smp := &result.Sample{Error: "login pw-4711 failed after 12 requests", Case: "c",
		Target: &result.TargetInfo{Argv: []string{"srv", "--x=pw-4711"}, LogTail: "context pw-4711x"}}
	scrubRecord(smp, &set)
	if smp.Error != "login [redacted] failed after 12 [redacted]" || smp.Target.Argv[1] != "--x=[redacted]" || smp.Target.LogTail != "context pw-4711x" {
		t.Errorf("scrubbed %+v %+v", smp, smp.Target)
	}
	if b, _ := json.Marshal(smp); smp.Case != "c" || strings.Contains(string(b), `"[redacted]":`) {
		t.Errorf("a key was scrubbed: %s", b)
	}
	mem := &runner.Memory{}
	sink := scrubSink{next: mem, set: &set}
	if err := sink.Append(&result.Sample{Key: "k", Error: "pw-4711"}); err != nil || mem.Samples[0].Error != "[redacted]" || sink.Done("k") != mem.Done("k") {
		t.Errorf("scrubSink stored %+v", mem.Samples)
	}
	var none secret.Set
	keep := &result.Sample{Error: "pw-4711"}
	scrubRecord(keep, &none)
	if keep.Error != "pw-4711" {
		t.Errorf("an empty set changed the record")
	}
}

// TestResumePlanKeepsCredentials: a resumed run gets its credentials from
// the suite file when it is unchanged (the recorded copy has them
// redacted), and is warned when it must run the redacted copy.
func TestResumePlanKeepsCredentials(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "s.yaml")
	yaml := `name: resume-secrets
repeats: 1
targets:
  t:
    command: ["true"]
    env: {API_TOKEN: tok-4711, PORT: "{port}"}
paths:
  get:
    http: {url: "http://127.0.0.1:{port}/"}
matrix: {targets: [t], paths: [get], connections: [1]}
`
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := suite.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := suite.ApplyOverrides(s, func(string) string { return "" }, []string{"connections=2"}); err != nil {
		t.Fatal(err)
	}
	resolved, err := s.Resolved()
	if err != nil || strings.Contains(string(resolved), "tok-4711") {
		t.Fatalf("resolved %s, %v", resolved, err)
	}
	hdr := &result.Header{Suite: result.SuiteInfo{File: file, SHA256: s.SHA256(), Resolved: resolved, Overrides: []string{"set:connections=2"}}}
	var stderr strings.Builder
	p, err := resumePlan(hdr, &stderr)
	if err != nil || p.Suite.Targets["t"].Env["API_TOKEN"] != "tok-4711" || stderr.Len() != 0 {
		t.Fatalf("resume from the unchanged file: err %v, env %v, stderr %q", err, p.Suite.Targets["t"].Env, stderr.String())
	}
	if err := os.WriteFile(file, []byte(yaml+"# changed\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err = resumePlan(hdr, &stderr)
	if err != nil || p.Suite.Targets["t"].Env["API_TOKEN"] != secret.Placeholder || !strings.Contains(stderr.String(), "redacted credentials") {
		t.Fatalf("resume from the recorded copy: err %v, stderr %q", err, stderr.String())
	}
}

// TestArgvNotice: a credential on the command line gets one line naming
// the flags that brought it and the forms that keep it off the command
// line; arguments without one (free text an --sql redacts included) get
// none.
func TestArgvNotice(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want []string // parts of the notice; nil: none
	}{
		{[]string{"pg", "--dsn", "postgres://u:pw1@h/db"}, []string{"a credential on the command line (--dsn)", "--dsn-env NAME"}},
		{[]string{"pg", "--dsn=postgres://u:pw1@h/db", "--dsn", "host=h password=x"}, []string{"(--dsn)", "--dsn-env NAME"}},
		{[]string{"resp", "--fill-from-pg-dsn", "postgres://u:pw3@h/db"}, []string{"(--fill-from-pg-dsn)", "fill_from_pg: {dsn_env: NAME}"}},
		{[]string{"http", "http://h/x?access_token=tk5", "-H", "Authorization: Bearer tk6"},
			[]string{"credentials on the command line (a URL, -H)", "--targets FILE (its URL line); --targets FILE (header lines under its URL)"}},
		{[]string{"http", "http://127.0.0.1:1/", "--target", "node s.js --password=pw11"}, []string{"(--target)", "a suite's target env:"}},
		{[]string{"pg", "--dsn", "postgres://u@h/db", "--sql", "SELECT key=1"}, nil},
		{[]string{"run", "suite.yaml", "-o", "r.json"}, nil},
	} {
		_, notice := argvNotice(tt.args)
		if tt.want == nil {
			if notice != "" {
				t.Errorf("argvNotice(%q) = %q, want none", tt.args, notice)
			}
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(notice, w) {
				t.Errorf("argvNotice(%q) = %q, lacks %q", tt.args, notice, w)
			}
		}
		if strings.Contains(notice, "\n") || !strings.Contains(notice, "ps, /proc/PID/cmdline") {
			t.Errorf("argvNotice(%q) = %q: want one line that names ps", tt.args, notice)
		}
		for _, a := range tt.args {
			if strings.Contains(a, "pw") && strings.Contains(notice, a) {
				t.Errorf("argvNotice(%q) shows an argument with its credential", tt.args)
			}
		}
	}
}

// TestArgvNoticeOnce: the built benchrig, given a DSN with a password on
// its command line, says so on stderr once (before its re-exec, not
// after), naming --dsn-env; given none, it says nothing of the kind.
func TestArgvNoticeOnce(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds benchrig")
	}
	br, _ := buildBenchrig(t, t.TempDir())
	port := closedPort(t)
	run := func(args ...string) string {
		cmd := exec.Command(br, args...)
		cmd.Env = append(os.Environ(), "PGDSN=", "DATABASE_URL=")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		_ = cmd.Run()
		return stderr.String()
	}
	stderr := run("pg", "--dsn", fmt.Sprintf("postgres://u:notice-pw-31@127.0.0.1:%d/db", port), "-d", "1s")
	if n := strings.Count(stderr, "could be read by every user of this machine"); n != 1 || !strings.Contains(stderr, "--dsn-env NAME") {
		t.Errorf("%d notices, want 1 naming --dsn-env:\n%s", n, stderr)
	}
	if strings.Contains(stderr, "notice-pw-31") {
		t.Errorf("stderr shows the password:\n%s", stderr)
	}
	stderr = run("pg", "--dsn", fmt.Sprintf("postgres://u@127.0.0.1:%d/db", port), "-d", "1s")
	if strings.Contains(stderr, "could be read by every user") {
		t.Errorf("a notice without a credential:\n%s", stderr)
	}
}
