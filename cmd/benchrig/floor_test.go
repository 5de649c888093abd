package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFloorRecordedAndReported: a run measures benchrig's own floor for
// its protocol before the first sample, records it in the results header,
// and the terminal, text, Markdown and HTML reports of the file print it;
// --no-calibrate records that it was skipped.
func TestFloorRecordedAndReported(t *testing.T) {
	url := helloServer(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "r.json")
	term, stderr, code := invoke(t, "http", url, "-c", "2", "-d", "500ms", "-o", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(term, "benchrig's own floor here: http p50 ") {
		t.Errorf("terminal report lacks the floor:\n%s", term)
	}
	doc := readResults(t, out)
	f := doc.Header.Floor
	if f == nil || len(f.Protocols) != 2 {
		t.Fatalf("header floor %+v: want http at one connection and at the run's two", f)
	}
	for i, e := range f.Protocols {
		if e.Protocol != "http" || e.Conns() != i+1 || e.Error != "" || e.Requests == 0 || e.P50US <= 0 || e.P99US < e.P50US || e.ClientCPUUS <= 0 || e.RoundTripUS <= 0 {
			t.Errorf("floor entry %d: %+v", i, e)
		}
	}
	console, _, _ := invoke(t, "report", out)
	if !strings.Contains(console, "benchrig's own floor here: http p50 ") {
		t.Errorf("console report lacks the floor:\n%s", console)
	}
	for _, ext := range []string{"txt", "md", "html"} {
		p := filepath.Join(dir, "r."+ext)
		if _, e, code := invoke(t, "report", out, "-o", p); code != 0 {
			t.Fatalf("report -o %s: %s", p, e)
		}
		b, _ := os.ReadFile(p)
		s := strings.ReplaceAll(string(b), "&#39;", "'")
		if !strings.Contains(s, "benchrig's own floor here: http p50 ") || !strings.Contains(s, "µs CPU per request") || !strings.Contains(s, " at 2 connections)") {
			t.Errorf("%s report lacks the floor line with its levels", ext)
		}
		if ext != "txt" && !strings.Contains(s, "Client floor µs/request") {
			t.Errorf("%s report lacks the floor at each case's connections", ext)
		}
	}

	skipped := filepath.Join(dir, "s.json")
	if _, e, code := invoke(t, "http", url, "-c", "2", "-d", "300ms", "--no-calibrate", "-o", skipped); code != 0 {
		t.Fatalf("--no-calibrate: %s", e)
	}
	if f := readResults(t, skipped).Header.Floor; f == nil || f.Skipped != "--no-calibrate" || len(f.Protocols) != 0 {
		t.Errorf("--no-calibrate floor %+v", f)
	}
}

// TestCalibrateCommand: benchrig calibrate prints one row per protocol
// and the floor line; bad flags are usage errors naming the bound.
func TestCalibrateCommand(t *testing.T) {
	out, stderr, code := invoke(t, "calibrate", "-d", "200ms", "-c", "1,4")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"│ grpc ", "│ http ", "│ pg ", "│ resp ", "Client CPU µs/request", "Connections", "benchrig's own floor here: grpc p50 ", "; http p50 ", " at 4 connections)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "not measured") {
		t.Errorf("a protocol was not measured:\n%s", out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"calibrate", "-d", "10ms"}, "--duration must be between 100ms and 1m0s, got 10ms"},
		{[]string{"calibrate", "--protocols", "h3"}, `unknown protocol "h3"; accepted: grpc, http, pg, resp`},
		{[]string{"calibrate", "-c", "300"}, "--connections: each count must be between 1 and 256"},
	} {
		_, e, code := invoke(t, tc.args...)
		if code != 2 || !strings.Contains(e, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, e, tc.want)
		}
	}
}
