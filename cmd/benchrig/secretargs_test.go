package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

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
