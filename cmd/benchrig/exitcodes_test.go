package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunExitCodes: the README's exit codes for `run`, decided after the
// whole plan ran and the file is complete: 0 with a failed sample among good
// ones (named on stderr), 3 for the same with --fail-unhealthy, 1 when every
// sample failed.
func TestRunExitCodes(t *testing.T) {
	hello := buildExample(t, "hello")
	dir := t.TempDir()
	write := func(name, targets string) string {
		src := fmt.Sprintf("name: codes\nrepeats: 1\nphases: {load: 300ms}\ntargets:\n%s\npaths:\n  p: {http: {url: \"http://127.0.0.1:{port}/\"}}\nmatrix:\n  targets: [%s]\n  paths: [p]\n  connections: [2]\n",
			targets, strings.Join(targetNames(targets), ", "))
		f := filepath.Join(dir, name)
		os.WriteFile(f, []byte(src), 0o644)
		return f
	}
	good := fmt.Sprintf("  good: {command: [%q, -addr, \"127.0.0.1:{port}\"]}", hello)
	bad := "  bad: {command: [\"false\"], ready: {timeout: 2s}}"
	mixed, allBad := write("mixed.yaml", good+"\n"+bad), write("bad.yaml", bad)
	for _, c := range []struct {
		suite string
		flags []string
		code  int
		want  string
	}{
		{mixed, nil, 0, "1 of 2 samples failed (exit 0; --fail-unhealthy exits 3)"},
		{mixed, []string{"--fail-unhealthy"}, 3, "1 of 2 samples UNHEALTHY, 1 of them failed"},
		{allBad, nil, 1, "start target"},
	} {
		out := filepath.Join(t.TempDir(), "r.json")
		_, stderr, code := cli(t, append([]string{"run", c.suite, "-o", out}, c.flags...)...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%s %v: exit %d, stderr %q; want %d and %q", filepath.Base(c.suite), c.flags, code, stderr, c.code, c.want)
		}
		if doc := readResults(t, out); doc.Footer == nil || doc.Footer.Interrupted {
			t.Errorf("%s: the file is not complete: footer %+v", filepath.Base(c.suite), doc.Footer)
		}
	}
}

// targetNames lists the names of "  name: {…}" lines.
func targetNames(targets string) []string {
	var out []string
	for _, l := range strings.Split(targets, "\n") {
		if name, _, ok := strings.Cut(strings.TrimSpace(l), ":"); ok {
			out = append(out, name)
		}
	}
	return out
}
