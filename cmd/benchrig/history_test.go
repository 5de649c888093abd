package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/history/synth"
)

// TestHistoryCLI: add, list, show, export (byte-identical, verify OK),
// remove, and the refusals, through the command line.
func TestHistoryCLI(t *testing.T) {
	dir := t.TempDir()
	paths, err := synth.Write(dir, synth.Options{Runs: 4, Seed: 3, StepAt: 2, StepPct: 10})
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "h.db")
	h := func(args ...string) (string, string, int) {
		return invoke(t, append([]string{"history", "--db", db}, args...)...)
	}
	out, errs, code := h(append([]string{"add"}, paths...)...)
	if code != 0 || strings.Count(out, "imported ") != 4 || !strings.Contains(out, "run 4, 6 samples") {
		t.Fatalf("add: %d\n%s%s", code, out, errs)
	}
	if out, _, code = h("add", paths[1]); code != 0 || !strings.Contains(out, "already imported: "+paths[1]+" (run 2): nothing added") {
		t.Fatalf("second add: %d %s", code, out)
	}
	if out, _, _ = h("list"); len(strings.Split(strings.TrimSpace(out), "\n")) != 5 || !strings.Contains(out, "history-synth") {
		t.Fatalf("list:\n%s", out)
	}
	out, _, code = h("show", "--cell", "api/hello/c=4/b=1")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 5 || !strings.Contains(lines[1], "10000 [9800–10200]") || !strings.Contains(lines[3], "11000 [") {
		t.Fatalf("show: %d\n%s", code, out)
	}
	page := filepath.Join(dir, "trends.html")
	if out, errs, code = h("show", "-o", page); code != 0 || !strings.Contains(out, "8 charts written to "+page) {
		t.Fatalf("show -o: %d %s%s", code, out, errs)
	}
	if b, _ := os.ReadFile(page); !bytes.Contains(b, []byte("<svg")) || !bytes.Contains(b, []byte("peak-mem · api")) {
		t.Fatal("trends page has no charts")
	}

	exported := filepath.Join(dir, "exported.json")
	if _, errs, code = h("export", "3", "-o", exported); code != 0 {
		t.Fatalf("export: %d %s", code, errs)
	}
	a, _ := os.ReadFile(paths[2])
	b, _ := os.ReadFile(exported)
	if !bytes.Equal(a, b) {
		t.Fatal("the exported file differs from the imported one")
	}
	if out, _, code = invoke(t, "verify", exported); code != 0 || !strings.HasPrefix(out, "OK: ") {
		t.Fatalf("verify of the export: %d %s", code, out)
	}

	// a tampered file: refused with verify's reason, naming the file.
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(bad, bytes.Replace(a, []byte(`"sent":`), []byte(`"sent": `), 1), 0o644)
	out, errs, code = h("add", bad)
	if code == 0 || !strings.Contains(errs, "FAILED verification: "+bad) || !strings.Contains(errs, "checksum mismatch") {
		t.Fatalf("tampered: %d %s%s", code, out, errs)
	}

	if out, _, code = h("remove", "2", "--reason", "runner was shared"); code != 0 || out != "removed run 2\n" {
		t.Fatalf("remove: %d %s", code, out)
	}
	for _, bad := range [][]string{
		{"remove", "0"}, {"remove", "x"}, {"export", "1"}, {"show", "--figure", "p42"}, {"add", "--branch", "", paths[0]},
	} {
		if _, errs, code = h(bad...); code != exitcode.BadUsage {
			t.Fatalf("%v: exit %d, want %d: %s", bad, code, exitcode.BadUsage, errs)
		}
	}
	if _, errs, code = h("export", "2", "-o", exported); code == 0 || !strings.Contains(errs, "run 2: no such run") {
		t.Fatalf("export of a removed run: %d %s", code, errs)
	}
}

// TestHistoryDSNNeverShown: --db-env takes a variable's name, and the
// DSN it holds is in no output.
func TestHistoryDSNNeverShown(t *testing.T) {
	t.Setenv("BENCHRIG_TEST_HISTORY_DSN", "postgres://bench:s3cret-pw-77@127.0.0.1:1/h?connect_timeout=5")
	out, errs, code := invoke(t, "history", "list", "--db-env", "BENCHRIG_TEST_HISTORY_DSN")
	if code == 0 || strings.Contains(out+errs, "s3cret-pw-77") || !strings.Contains(errs, "$BENCHRIG_TEST_HISTORY_DSN") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	_, errs, code = invoke(t, "history", "list", "--db-env", "postgres://u:p@h/db")
	if code == 0 || !strings.Contains(errs, "never a DSN") {
		t.Fatalf("a DSN as --db-env: %d %s", code, errs)
	}
}

// TestHistoryCheckCLI: `history check` imports the run and exits 3 with
// the evidence when it is a significant regression against the runs
// before it (requests/s 10 % down at run 8), 0 when it is not, 2 for a
// gate that points the way the figure gets better.
func TestHistoryCheckCLI(t *testing.T) {
	dir := t.TempDir()
	paths, err := synth.Write(dir, synth.Options{Runs: 9, Seed: 5, StepAt: 8, StepPct: -10})
	if err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "h.db")
	h := func(args ...string) (string, string, int) {
		return invoke(t, append([]string{"history", "--db", db}, args...)...)
	}
	if _, errs, code := h(append([]string{"add"}, paths[:7]...)...); code != 0 {
		t.Fatalf("add: %d %s", code, errs)
	}
	if out, errs, code := h("check", paths[7]); code != 0 || !strings.Contains(out, "no regression") {
		t.Fatalf("check of run 8 (no change): exit %d\n%s%s", code, out, errs)
	}
	out, errs, code := h("check", paths[8], "--fail-if", "req/s < -5%")
	if code != exitcode.Unhealthy || !strings.Contains(out, "regression: 10.0 % worse") || !strings.Contains(errs, "--fail-if \"req/s < -5%\"") {
		t.Fatalf("check of run 9 (10 %% fewer req/s): exit %d, want 3\n%s%s", code, out, errs)
	}
	if _, errs, code := h("check", paths[8], "--fail-if", "req/s > +5%"); code != exitcode.BadUsage || !strings.Contains(errs, "gets worse") {
		t.Fatalf("a gate pointing the better way: exit %d, want 2: %s", code, errs)
	}
}
