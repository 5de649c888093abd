package execute

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
)

// TestSamplesExit maps a run's samples to its exit: interrupted runs and
// runs whose every sample failed fail, --fail-unhealthy exits 3 on an
// UNHEALTHY sample, and failed or cut-short samples otherwise exit 0 and
// are named on stderr.
func TestSamplesExit(t *testing.T) {
	plan := &suite.Plan{Samples: make([]suite.Sample, 2)}
	ok := &result.Sample{Key: "a#1", Verdict: result.Verdict{Healthy: true}}
	failed := &result.Sample{Key: "b#1", Error: "target exited"}
	cut := &result.Sample{Key: "c#1", Load: &result.Load{Interrupted: true}, Verdict: result.Verdict{Reasons: []string{"window cut short"}}}
	for _, tc := range []struct {
		name          string
		res           executed
		failUnhealthy bool
		code          int
		err, stderr   string
	}{
		{"healthy", executed{plan: plan, samples: []*result.Sample{ok, ok}}, true, 0, "", ""},
		{"interrupted", executed{plan: plan, samples: []*result.Sample{ok}, interrupted: true}, false, exitcode.Failed,
			"interrupted: 1 of 2 samples ran; the figures above cover what finished", ""},
		{"partial", executed{plan: plan, interrupted: true, partial: &result.Sample{Load: &result.Load{Seconds: 1.25}}, path: "r.json"}, false, exitcode.Failed,
			"interrupted: the figures above cover the 1.2 s that ran; r.json holds no sample yet (--resume measures it again)", ""},
		{"one failed", executed{plan: plan, samples: []*result.Sample{failed}}, false, exitcode.Failed, "target exited", ""},
		{"all failed", executed{plan: plan, samples: []*result.Sample{failed, failed}}, false, exitcode.Failed, "all 2 samples failed; the first: target exited", ""},
		{"some failed", executed{plan: plan, samples: []*result.Sample{ok, failed}}, false, 0, "",
			"benchrig: 1 of 2 samples failed (exit 0; --fail-unhealthy exits 3); the first: target exited\n"},
		{"some failed, --fail-unhealthy", executed{plan: plan, samples: []*result.Sample{ok, failed}}, true, exitcode.Unhealthy,
			"the run was UNHEALTHY: 1 of 2 samples UNHEALTHY, 1 of them failed; the first: target exited", ""},
		{"cut short", executed{plan: plan, samples: []*result.Sample{ok, cut}}, false, 0, "",
			"benchrig: 1 of 2 samples UNHEALTHY with their load window cut short (exit 0; --fail-unhealthy exits 3); the first: c#1: window cut short\n"},
	} {
		var stderr, printed strings.Builder
		err := samplesExit(&tc.res, tc.failUnhealthy, &stderr)
		code := exitcode.Of(err, &printed)
		if code != tc.code || (err != nil) != (tc.err != "") || (err != nil && err.Error() != tc.err) || stderr.String() != tc.stderr {
			t.Errorf("%s: exit %d, error %v, stderr %q; want %d, %q, %q", tc.name, code, err, stderr.String(), tc.code, tc.err, tc.stderr)
		}
	}
}

// TestAbsentIfHeaderless: --resume of a file that does not exist starts a
// new run; a file with no complete header line is replaced without
// --force; a whole file is left to the refusal of an existing file.
func TestAbsentIfHeaderless(t *testing.T) {
	dir := t.TempDir()
	var stderr strings.Builder
	missing := Output{Path: filepath.Join(dir, "none.json"), Resume: true, ResumeChanged: true}
	missing.absentIfHeaderless(&stderr)
	if missing.Resume || missing.ResumeChanged || missing.replace || !strings.Contains(stderr.String(), "there is nothing to resume; a new run starts") {
		t.Errorf("--resume of a missing file: %+v, %q", missing, stderr.String())
	}
	torn := filepath.Join(dir, "torn.json")
	if err := os.WriteFile(torn, []byte(`{"type":"header","sui`), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	o := Output{Path: torn}
	o.absentIfHeaderless(&stderr)
	if !o.replace || !strings.Contains(stderr.String(), "holds no complete header line") || !strings.HasSuffix(stderr.String(), "a new run replaces it\n") {
		t.Errorf("a headerless file: %+v, %q", o, stderr.String())
	}
	whole := filepath.Join(dir, "whole.json")
	if err := os.WriteFile(whole, []byte("{\"type\":\"header\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	o = Output{Path: whole}
	o.absentIfHeaderless(&stderr)
	if o.replace || stderr.Len() != 0 {
		t.Errorf("a file with its header: %+v, %q", o, stderr.String())
	}
}

// TestRanCheck: the first record of what a target ran is the reference;
// other bytes stop a run, refuse a resume, or, with --resume-changed, are
// accepted and listed once.
func TestRanCheck(t *testing.T) {
	v1 := []result.RanFile{{Path: "/srv/app", SHA256: strings.Repeat("a", 64), Kind: "exe"}}
	v2 := []result.RanFile{{Path: "/srv/app", SHA256: strings.Repeat("b", 64), Kind: "exe"}}
	var stderr strings.Builder
	run := &ranCheck{ref: map[string][]result.RanFile{}, path: "r.json", stderr: &stderr}
	if err := run.check("app", v1); err != nil {
		t.Fatal(err)
	}
	if err := run.check("app", v1); err != nil {
		t.Errorf("the same bytes: %v", err)
	}
	if err := run.check("app", v2); err == nil || !strings.HasPrefix(err.Error(), "what a target runs changed during the run (") || !strings.Contains(err.Error(), "r.json keeps the samples measured before") {
		t.Errorf("a run: %v", err)
	}
	resume := &ranCheck{ref: map[string][]result.RanFile{"app": v1}, resuming: true, path: "r.json", stderr: &stderr}
	if err := resume.check("app", v2); err == nil || !strings.HasPrefix(err.Error(), "r.json was measured against other targets than these (") {
		t.Errorf("a resume: %v", err)
	}
	accept := &ranCheck{ref: map[string][]result.RanFile{"app": v1}, resuming: true, accept: true, stderr: &stderr}
	if err := accept.check("app", v2); err != nil || len(accept.changed) != 1 {
		t.Errorf("--resume-changed: %v, changed %q", err, accept.changed)
	}
	if !strings.Contains(stderr.String(), "benchrig: resuming against changed targets (--resume-changed): ") {
		t.Errorf("--resume-changed said %q", stderr.String())
	}
}

// TestDescribeWindow says how a window is bounded and driven.
func TestDescribeWindow(t *testing.T) {
	for _, tc := range []struct {
		c    result.Config
		want string
	}{
		{result.Config{Phases: result.Phases{Load: 5 * time.Second}, Engine: result.EngineConfig{Pipeline: 1}}, "5s · closed loop"},
		{result.Config{Phases: result.Phases{Load: 10 * time.Second, Warmup: 15 * time.Second}, Engine: result.EngineConfig{Rate: 1000}},
			"10s · 1000 req/s (constant arrivals) · warm-up 15s"},
		{result.Config{Phases: result.Phases{Requests: 500}, Engine: result.EngineConfig{Pipeline: 16}}, "500 requests · closed loop, pipeline 16"},
	} {
		if got := DescribeWindow(&result.Sample{Config: &tc.c}); got != tc.want {
			t.Errorf("describeWindow = %q, want %q", got, tc.want)
		}
	}
	if got := Plural(1, "case") + ", " + Plural(3, "repeat"); got != "1 case, 3 repeats" {
		t.Errorf("plural: %q", got)
	}
}
