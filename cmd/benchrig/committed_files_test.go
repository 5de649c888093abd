package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The committed results, reports and docs are read on other machines: a
// path into the temporary, home or work directory of the machine a file
// was made on means nothing there (and names that machine's layout). Such
// a path is written relative to the repository, or with a placeholder
// ($TMPDIR/… for a run's temporary directory). System paths that are the
// same everywhere (/proc/, /sys/fs/cgroup/, /usr/lib/postgresql/…) are
// documentation and are not matched.

// machinePath matches an absolute path into a machine's temporary, home or
// work directory: the directory at the start of a path (line start, after
// a space, quote, "=", "(", ":", a JSON escape such as \n, or file://),
// so "examples/work/", "$TMPDIR/" and a URL's ".../home/..." are not.
var machinePath = regexp.MustCompile(`(?:^|[^A-Za-z0-9_.~$/-]|\\[nrt"]|file://)(/(?:tmp|var/tmp|var/folders|private/(?:tmp|var)|root|home|Users|work)/)`)

func TestMachinePathPattern(t *testing.T) {
	for _, c := range []struct {
		line string
		want bool
	}{
		{"/tmp/run-1/x.log", true},
		{`"binary":"/work/src/app/node_modules/.bin/node"`, true},
		{"- **File**: /tmp/out/r.json", true},
		{"| app | command |  | /work/src/node\\_modules/.bin/node |", true},
		{`"log_tail":"line\n/tmp/run-2/app.log"`, true},
		{"see file:///tmp/report.html", true},
		{"-o=/home/someone/r.json", true},
		{"cd /root/benchrig", true},
		{"TMPDIR is /var/tmp/x", true},
		{"/Users/someone/r.json", true},
		{"$TMPDIR/run-1/x.log", false},
		{`- **File**: \$TMPDIR/out/r.json`, false},
		{"examples/seeds/002/node_modules/node24/bin/node", false},
		{"/proc/self/stat and /sys/fs/cgroup/cpu.max", false},
		{"/usr/lib/postgresql/15/bin/postgres", false},
		{"https://example.com/home/index.html", false},
		{"mountPath: /tmp", false},
		{"a live run in another PID namespace sharing /tmp is left alone", false},
		{"bench/work/x and ~/work/y", false},
	} {
		if got := machinePath.MatchString(c.line); got != c.want {
			t.Errorf("%q: matched %v, want %v", c.line, got, c.want)
		}
	}
}

// TestCommittedFilesHaveNoMachinePaths scans every committed results file
// (any file under a results/ directory: bench/results, the seeds'
// results), report and doc (every .md) for machinePath. testdata/ is left
// out: those results files are the report package's golden-test inputs,
// whose rendered bytes the goldens pin.
func TestCommittedFilesHaveNoMachinePaths(t *testing.T) {
	root, files := committedFiles(t)
	scanned := 0
	for _, f := range files {
		if !resultsOrDoc(f) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		scanned++
		var shown []string
		hits := 0
		for i, line := range bytes.Split(data, []byte("\n")) {
			for _, m := range machinePath.FindAllSubmatchIndex(line, -1) {
				if hits++; hits <= 5 {
					shown = append(shown, fmt.Sprintf("%s:%d: %s", f, i+1, excerpt(line, m[2])))
				}
			}
		}
		if hits > 0 {
			if hits > 5 {
				shown = append(shown, fmt.Sprintf("… %d in all in %s", hits, f))
			}
			t.Errorf("absolute machine path (write it relative to the repository, or $TMPDIR/… for a temporary directory):\n\t%s",
				strings.Join(shown, "\n\t"))
		}
	}
	if scanned == 0 {
		t.Fatalf("no results, report or doc file found under %s: the selection is wrong", root)
	}
}

// datedName is a bench/results file's name: what it measures, the date it
// was made, and (when two runs of one script share a date) the commit of
// the benchrig measured: http-peers-2026-12-01-f6164e9.txt.
var datedName = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*-\d{4}-\d{2}-\d{2}(?:-[0-9a-f]{7,40})?\.[a-z0-9.]+$`)

// TestBenchResultsNamedByWhatAndWhen: bench/results/README.md states the
// rule; a name that says only in which order the work was done
// (before-…, after-…) does not say what was measured or when.
func TestBenchResultsNamedByWhatAndWhen(t *testing.T) {
	_, files := committedFiles(t)
	n := 0
	for _, f := range files {
		dir, name := path.Split(f)
		if dir != "bench/results/" || name == "README.md" {
			continue
		}
		n++
		if !datedName.MatchString(name) || strings.HasPrefix(name, "before-") || strings.HasPrefix(name, "after-") {
			t.Errorf("%s: name it by what it measures and when: SCRIPT[-CONDITION]-YYYY-MM-DD[-COMMIT].txt (bench/results/README.md)", f)
		}
	}
	if n == 0 {
		t.Fatal("no file under bench/results")
	}
}

func TestResultsOrDocSelection(t *testing.T) {
	for f, want := range map[string]bool{
		"bench/results/seeds-peers-2026-12-01.txt":         true,
		"examples/seeds/002/results/node-http.json":        true,
		"examples/seeds/002/results/node-http.json.sha256": true,
		"README.md":      true,
		"docs/METHOD.md": true,
		"internal/report/testdata/results/rate.json":   false,
		"internal/report/testdata/golden/rate.md":      false,
		"examples/seeds/000/node_modules/pg/README.md": false,
		"bench/http-peers.sh":                          false,
		"internal/result/file.go":                      false,
		"deploy/manifests.golden.yaml":                 false,
	} {
		if got := resultsOrDoc(f); got != want {
			t.Errorf("resultsOrDoc(%q) = %v, want %v", f, got, want)
		}
	}
}

// resultsOrDoc reports whether the repository path f is a results file,
// report or doc that TestCommittedFilesHaveNoMachinePaths reads.
func resultsOrDoc(f string) bool {
	parts := strings.Split(f, "/")
	for _, p := range parts {
		if p == "testdata" || p == "node_modules" {
			return false
		}
	}
	if strings.HasSuffix(f, ".md") {
		return true
	}
	for _, p := range parts[:len(parts)-1] {
		if p == "results" {
			return true
		}
	}
	return false
}

// committedFiles returns the repository's root and its committed files
// (git ls-files, slash-separated). Without git (an exported tree) it walks
// the tree instead, leaving out .git, node_modules and the build's bin/.
func committedFiles(t *testing.T) (string, []string) {
	t.Helper()
	if out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output(); err == nil {
		root := strings.TrimSpace(string(out))
		ls := exec.Command("git", "ls-files", "-z")
		ls.Dir = root
		if out, err := ls.Output(); err == nil {
			var files []string
			for _, f := range strings.Split(string(out), "\x00") {
				if f != "" {
					files = append(files, f)
				}
			}
			return root, files
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no git and no repository at %s: %v", root, err)
	}
	var files []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "bin" || d.Name() == ".git" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		files = append(files, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return root, files
}

// excerpt is the part of line around byte offset i, short enough to read
// in a failure message (a results line can be megabytes long).
func excerpt(line []byte, i int) string {
	from, to := max(0, i-40), min(len(line), i+80)
	s := string(line[from:to])
	if from > 0 {
		s = "…" + s
	}
	if to < len(line) {
		s += "…"
	}
	return s
}
