package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/benchrig/benchrig/internal/protocol/http"
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
		got := strings.Join(RedactArgs(tt.args, ArgPolicy(tt.args), &found), " ")
		if got != tt.want {
			t.Errorf("RedactArgs(%q)\n got %s\nwant %s", tt.args, got, tt.want)
		}
		for _, h := range tt.hidden {
			if found.Scrub("<"+h+">") != "<"+secret.Placeholder+">" {
				t.Errorf("RedactArgs(%q) did not collect %q", tt.args, h)
			}
		}
		if tt.hidden == nil && found.Len() != 0 {
			t.Errorf("RedactArgs(%q) collected %q from plain text", tt.args, found.Values())
		}
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
