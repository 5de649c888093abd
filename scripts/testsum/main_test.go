package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func feed(t *testing.T, events ...event) (string, bool) {
	t.Helper()
	var b strings.Builder
	s := newSummary(&b)
	for _, e := range events {
		// through JSON, as the stream arrives
		raw, _ := json.Marshal(e)
		var back event
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		s.add(back)
	}
	ok := s.finish()
	return b.String(), ok
}

func TestSummaryListsSkipsAndFailures(t *testing.T) {
	const p = "github.com/benchrig/benchrig/internal/x"
	out, ok := feed(t,
		event{Action: "start", Package: p},
		event{Action: "run", Package: p, Test: "TestA"},
		event{Action: "pass", Package: p, Test: "TestA"},
		event{Action: "output", Package: p, Test: "TestB", Output: "=== RUN   TestB\n"},
		event{Action: "output", Package: p, Test: "TestB", Output: "    b_test.go:9: chromium not found\n"},
		event{Action: "skip", Package: p, Test: "TestB"},
		event{Action: "output", Package: p, Test: "TestHelper", Output: "    h_test.go:3: helper process\n"},
		event{Action: "skip", Package: p, Test: "TestHelper"},
		event{Action: "output", Package: p, Test: "TestC", Output: "    c_test.go:1: got 3, want 4\n"},
		event{Action: "fail", Package: p, Test: "TestC", Elapsed: 1.5},
		event{Action: "fail", Package: p, Elapsed: 2},
	)
	if ok {
		t.Error("a failed test made a successful run")
	}
	for _, want := range []string{
		"--- FAIL: " + p + " TestC (1.50s)\n    c_test.go:1: got 3, want 4\n",
		"skipped (1):\n  internal/x TestB: b_test.go:9: chromium not found\n",
		"FAIL\t" + p + "\t2.0s\n",
		"\ntests: 1 passed, 1 failed, 1 skipped\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.HasSuffix(out, "tests: 1 passed, 1 failed, 1 skipped\n") == false {
		t.Errorf("the closing line is not last:\n%s", out)
	}
}

func TestSummaryUnendedPackageFails(t *testing.T) {
	const p = "example.com/y"
	out, ok := feed(t,
		event{Action: "start", Package: p},
		event{Action: "pass", Package: p, Test: "TestA"},
		event{Action: "output", Package: p, Test: "TestB", Output: "panic: boom\n"},
	)
	if ok || !strings.Contains(out, "the stream ended before the package did") || !strings.Contains(out, "panic: boom") {
		t.Errorf("ok=%v:\n%s", ok, out)
	}
	if _, ok := feed(t, event{Action: "start", Package: p}, event{Action: "pass", Package: p, Test: "TestA"}, event{Action: "pass", Package: p}); !ok {
		t.Error("a clean run failed")
	}
}
