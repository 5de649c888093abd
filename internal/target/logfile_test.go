package target

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/tmpdir"
)

func TestLogTail(t *testing.T) {
	sh := need(t, "sh")
	spec := testSpec(t, "talk", sh, "-c", `i=1; while [ $i -le 50 ]; do echo line $i; i=$((i+1)); done; echo err >&2; sleep 30`)
	p := startT(t, spec, nil)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(p.LogTail(1), "err") && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if got, want := p.LogTail(3), "line 49\nline 50\nerr"; got != want {
		t.Errorf("LogTail(3) = %q, want %q", got, want)
	}
	if got := strings.Count(p.LogTail(1000), "\n"); got != 50 {
		t.Errorf("LogTail(1000) has %d newlines, want 50 (51 lines)", got)
	}
	// A second run with the same name and log dir gets its own file.
	p2 := startT(t, Spec{Name: "talk", Argv: []string{sh, "-c", "sleep 30"}, LogDir: spec.LogDir}, nil)
	if p2.LogPath() == p.LogPath() {
		t.Errorf("two runs share log %s", p.LogPath())
	}
}

func TestTailLinesFile(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := 1; i <= 5000; i++ { // about 50 KiB: several read chunks
		fmt.Fprintf(&b, "line %d of a long log\n", i)
	}
	path := filepath.Join(dir, "big.log")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, want := tailLines(path, 2), "line 4999 of a long log\nline 5000 of a long log"; got != want {
		t.Errorf("tail 2 = %q", got)
	}
	got := tailLines(path, 1000)
	lines := strings.Split(got, "\n")
	if len(lines) != 1000 || lines[0] != "line 4001 of a long log" {
		t.Errorf("tail 1000: %d lines, first %q", len(lines), lines[0])
	}

	short := filepath.Join(dir, "short.log")
	os.WriteFile(short, []byte("a\n\nb\nno newline at end"), 0o644)
	if got := tailLines(short, 10); got != "a\n\nb\nno newline at end" {
		t.Errorf("short: %q", got)
	}
	if got := tailSummary(short); got != "a | b | no newline at end" {
		t.Errorf("summary: %q", got)
	}
	if tailLines(filepath.Join(dir, "missing"), 3) != "" || tailLines(short, 0) != "" {
		t.Error("missing file or n=0 gave text")
	}
	long := filepath.Join(dir, "long.log")
	os.WriteFile(long, []byte(strings.Repeat("y", 1000)+"\nEND\n"), 0o644)
	if s := tailSummary(long); len(s) > 310 || !strings.HasSuffix(s, "END") || !strings.HasPrefix(s, "…") {
		t.Errorf("long summary (%d bytes): %q", len(s), s)
	}
}

func TestCreateLogNames(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs", "run1")
	var paths []string
	for i := 0; i < 3; i++ {
		f, err := createLog(dir, "node http/v20")
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		paths = append(paths, filepath.Base(f.Name()))
	}
	want := []string{"node_http_v20.log", "node_http_v20.2.log", "node_http_v20.3.log"}
	if strings.Join(paths, " ") != strings.Join(want, " ") {
		t.Errorf("log names %v, want %v", paths, want)
	}
	if safeFileName("..") != "target" || safeFileName("") != "target" {
		t.Error("safeFileName of a name with no safe letters")
	}
	f, err := createLog("", "tmp")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := tmpdir.Remove(filepath.Dir(f.Name())); err != nil { // the directory and its lock file beside it
		t.Error(err)
	}
}

func TestOneLine(t *testing.T) {
	if got := oneLine("a\nb\r\nc"); got != "a | b | c" {
		t.Errorf("oneLine = %q", got)
	}
	e := &StartError{Target: "t", Op: "exited before ready", Err: errors.New("exit status 1"), Tail: `x "y"`, LogPath: "/l"}
	if got, want := e.Error(), `target "t": exited before ready: exit status 1; last output: "x \"y\"" (log: /l)`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestCreateLogRetention: the 1,001st log of a target is created and the
// oldest removed (a suite used to fail at sample 1,001 with "already holds
// 1000 logs"); with a smaller bound the newest logs are the ones kept.
func TestCreateLogRetention(t *testing.T) {
	dir := t.TempDir()
	for i := 0; i < MaxLogsPerTarget+1; i++ {
		f, err := createLog(dir, "cache")
		if err != nil {
			t.Fatalf("log %d: %v", i+1, err)
		}
		f.Close()
	}
	got, err := logIndexes(dir, "cache")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != MaxLogsPerTarget || got[0] != 2 || got[len(got)-1] != MaxLogsPerTarget+1 {
		t.Errorf("after %d logs: %d kept, numbers %d to %d; want %d kept, 2 to %d", MaxLogsPerTarget+1, len(got), got[0], got[len(got)-1], MaxLogsPerTarget, MaxLogsPerTarget+1)
	}

	small := t.TempDir()
	other, err := createLogKeep(small, "other", 3) // another target's log is not counted
	if err != nil {
		t.Fatal(err)
	}
	other.Close()
	for i := 0; i < 5; i++ {
		f, err := createLogKeep(small, "srv", 3)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(f, "run %d\n", i+1)
		f.Close()
	}
	ents, _ := os.ReadDir(small)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if want := "other.log srv.3.log srv.4.log srv.5.log"; strings.Join(names, " ") != want {
		t.Errorf("kept %v, want %s", names, want)
	}
	if b, _ := os.ReadFile(filepath.Join(small, "srv.5.log")); string(b) != "run 5\n" {
		t.Errorf("newest log holds %q", b)
	}
}
