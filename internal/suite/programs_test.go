package suite_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckPrograms: a command target's relative program is resolved
// against its dir, else the directory benchrig runs in, never the suite
// file's; plan refuses one that is not there, saying so, as run would.
func TestCheckPrograms(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"bin", "srv/bin", "other"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	os.WriteFile(filepath.Join(root, "bin", "hello"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(root, "srv", "bin", "hello"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(root, "bin", "data"), []byte("x"), 0o644)
	for _, tc := range []struct {
		name, target, cwd, want string // want "" accepted
	}{
		{"relative, from its directory", `{command: [./bin/hello]}`, root, ""},
		{"relative, from another directory", `{command: [./bin/hello]}`, filepath.Join(root, "other"),
			`targets.a.command[0]: program ./bin/hello: not found at ` + filepath.Join(root, "other", "bin", "hello") + `: a relative program is resolved against the directory benchrig runs in (` + filepath.Join(root, "other") + `), not the suite file's directory`},
		{"relative to dir", `{command: [./bin/hello], dir: srv}`, root, ""},
		{"relative to dir, missing", `{command: [./bin/hello], dir: other}`, root, "resolved against the target's dir (" + filepath.Join(root, "other") + ")"},
		{"absolute", `{command: [` + filepath.Join(root, "bin", "hello") + `]}`, "/", ""},
		{"absolute, missing", `{command: [/no/such/prog]}`, root, "program /no/such/prog: not found"},
		{"not executable", `{command: [bin/data]}`, root, "not an executable file"},
		{"a directory", `{command: [./bin]}`, root, "not an executable file"},
		{"in PATH", `{command: [no-such-name-in-path]}`, root, ""},
		{"placeholder", `{command: ["./{v}/hello"], params: {v: [nope]}}`, root, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := mustParse(t, "s.yaml", "name: progs\nrepeats: 1\nphases: {load: 1s}\ntargets:\n  a: "+tc.target+"\npaths:\n  p: {http: {url: \"http://127.0.0.1:1/\"}}\nmatrix: {targets: [a], paths: [p], connections: [1]}\n")
			if _, err := s.Plan(); err != nil {
				t.Fatal(err)
			}
			err := s.CheckPrograms(tc.cwd)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v\nwant %q", err, tc.want)
			}
		})
	}
}
