package main

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/capacity"
	"github.com/benchrig/benchrig/internal/capacity/bucketserver"
	"github.com/benchrig/benchrig/internal/report"
	"github.com/benchrig/benchrig/internal/reportsrc"
)

// TestCapacityFindsTheBucket: against a server that refuses (503) every
// request above N per second, benchrig capacity finds N within 10 %, and
// every step at 1.1·N or more was UNHEALTHY (one resolution step above the
// capacity may still be HEALTHY when N lies inside the search's last
// bracket: a bucket of exactly N per second holds a rate of N); the file
// verifies, and its report replays the same capacity. N is far below what a loaded
// machine can do, and the p99 threshold loose, so the verdicts turn on the
// refusals alone.
func TestCapacityFindsTheBucket(t *testing.T) {
	const n = 400.0
	var out, stdout string
	var got float64
	// The bucket judges a request when the server reads it: a machine so
	// busy that it starves the in-process server for more than the
	// bucket's burst (50 ms) refuses requests offered below N, and the
	// search, rightly, finds less. Such a run is repeated once (the
	// bucket's own count says it happened), never accepted.
	for attempt := 1; ; attempt++ {
		srv, err := bucketserver.Start("127.0.0.1:0", n)
		if err != nil {
			t.Fatal(err)
		}
		out = filepath.Join(t.TempDir(), "cap.json")
		var stderr string
		var code int
		stdout, stderr, code = invoke(t, "capacity", srv.URL(), "--from", "50", "--max", "3200", "--confirm", "2",
			"-c", "8", "-d", "1s", "--max-p99", "2s", "--timer-slack", "200us", "--no-calibrate", "-o", out)
		srv.Close()
		if code != 0 {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		m := regexp.MustCompile(`capacity ([0-9.]+)/s`).FindStringSubmatch(stdout)
		if m == nil {
			t.Fatalf("no capacity in the output:\n%s", stdout)
		}
		got, _ = strconv.ParseFloat(m[1], 64)
		if got >= 0.9*n && got <= 1.1*n {
			break
		}
		if attempt == 2 || got > 1.1*n || !refusedBelow(t, out, 0.9*n) {
			t.Fatalf("capacity %v/s, want %v/s within 10 %%\n%s", got, n, stdout)
		}
		t.Logf("attempt %d: capacity %v/s with requests refused below %v/s (the server starved by the machine): once more\n%s", attempt, got, 0.9*n, stdout)
	}
	if _, e, code := invoke(t, "verify", out); code != 0 {
		t.Fatalf("verify: exit %d: %s", code, e)
	}
	// the rate mode's flags apply to every step (a search decides the
	// rates, so they need no --rate)
	for _, s := range readResults(t, out).Samples {
		if s.Config.Engine.TimerSlackUS != 200 || s.Config.Engine.Rate == 0 {
			t.Errorf("%s: engine %+v, want a rate and a timer slack of 200 µs", s.Key, s.Config.Engine)
		}
	}
	src, err := reportsrc.Load(out, false)
	if err != nil {
		t.Fatal(err)
	}
	rows := report.Capacities(src)
	if len(rows) != 1 || !rows[0].Ended || math.Abs(rows[0].Result.Median.Rate-got) > 0.01 || rows[0].Result.Median.Bound != capacity.Exact {
		t.Fatalf("the report replays %+v, the run said %v/s", rows, got)
	}
	for _, s := range rows[0].Steps {
		if s.Search.Rate >= 1.1*n && s.Verdict.Healthy {
			t.Errorf("step %s at %v/s (≥ 1.1·N) HEALTHY", s.Key, s.Search.Rate)
		}
	}
	if o, e, code := invoke(t, "compare", out, out); code != 0 || !strings.Contains(o, "Capacity, A and B") || !strings.Contains(o, "no difference shown") {
		t.Errorf("compare of a search with itself: exit %d\n%s%s", code, o, e)
	}
	html := filepath.Join(t.TempDir(), "cap.html")
	if _, e, code := invoke(t, "report", out, "-o", html); code != 0 {
		t.Fatalf("report: exit %d: %s", code, e)
	}
	b, err := os.ReadFile(html)
	if err != nil || !strings.Contains(string(b), "Capacity by variant and case") || !strings.Contains(string(b), "Latency against the achieved rate") {
		t.Errorf("the HTML report has no capacity section (%v)", err)
	}
}

// refusedBelow reports whether a step of the search in file offered less
// than rate and had requests refused (unexpected responses).
func refusedBelow(t *testing.T, file string, rate float64) bool {
	t.Helper()
	src, err := reportsrc.Load(file, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range report.Capacities(src) {
		for _, s := range c.Steps {
			if s.Search.Rate < rate && s.Load != nil && s.Load.Unexpected > 0 {
				return true
			}
		}
	}
	return false
}

// TestCapacityResume: a search file cut after its first steps (a run
// killed mid-search) is continued by --resume: the recorded steps are
// replayed, not measured again, the search goes on from there, and the
// file verifies.
func TestCapacityResume(t *testing.T) {
	srv, err := bucketserver.Start("127.0.0.1:0", 400)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	dir := t.TempDir()
	full := filepath.Join(dir, "full.json")
	args := []string{"capacity", srv.URL(), "--from", "100", "--max", "1600", "--confirm", "1", "-c", "8", "-d", "500ms", "--max-p99", "2s", "--no-calibrate"}
	if _, e, code := invoke(t, append(args, "-o", full)...); code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	b, err := os.ReadFile(full)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	if len(lines) < 6 {
		t.Fatalf("%d lines in the full search", len(lines))
	}
	cut := filepath.Join(dir, "cut.json")
	head := strings.Join(lines[:3], "") // the header and the first two steps
	if err := os.WriteFile(cut, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, e, code := invoke(t, append(args, "-o", cut, "--resume")...); code != 0 {
		t.Fatalf("resume: exit %d: %s", code, e)
	}
	if _, e, code := invoke(t, "verify", cut); code != 0 {
		t.Fatalf("verify the resumed file: exit %d: %s", code, e)
	}
	doc := readResults(t, cut)
	if len(doc.Samples) <= 2 || doc.Samples[0].Key != doc.Samples[0].Cell+"@s1/1" || doc.Samples[2].Search == nil || doc.Samples[2].Search.Index != 3 {
		t.Errorf("the resumed search: %d samples, the third %+v", len(doc.Samples), doc.Samples[min(2, len(doc.Samples)-1)].Search)
	}
	after, _ := os.ReadFile(cut)
	if !strings.HasPrefix(string(after), head) {
		t.Errorf("the recorded steps were rewritten")
	}
}

// The flags a search decides are refused, and so is a pipeline at its
// rates over HTTP/1.1 (one request at a time per connection at a rate),
// each by name, before anything runs.
func TestCapacityRefusals(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--rate", "100"}, "--rate: a capacity search decides the rates"},
		{[]string{"-n", "100"}, "--requests: a capacity search decides the rates"},
		{[]string{"-p", "4"}, `--pipeline: pipeline 4 cannot be combined with rates for path`},
	} {
		_, stderr, code := invoke(t, append([]string{"capacity", "http://127.0.0.1:1/", "--no-calibrate"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
}
