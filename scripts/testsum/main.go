// Command testsum reads `go test -json` on stdin and prints what a person
// needs of it: one line per package, the whole output of every failed test
// (and of a package that failed outside its tests: a build error, a panic,
// a timeout), then every skipped test with its reason, and a closing line
// "tests: N passed, N failed, N skipped". It exits 1 when anything failed
// or the stream ended before a package said how it ended. `make test` pipes
// the test run through it.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Elapsed    float64
	Output     string
	ImportPath string // build-output and build-fail
}

type skip struct{ pkg, test, reason string }

type summary struct {
	out                    io.Writer
	output                 map[string][]string // package + "\x00" + test → its output lines
	started, ended         map[string]bool     // packages
	passed, failed, helper int
	skips                  []skip
	broken                 []string // packages that failed outside their tests
}

func newSummary(out io.Writer) *summary {
	return &summary{out: out, output: map[string][]string{}, started: map[string]bool{}, ended: map[string]bool{}}
}

func (s *summary) add(e event) {
	key := e.Package + "\x00" + e.Test
	switch e.Action {
	case "build-output":
		fmt.Fprint(s.out, e.Output)
	case "build-fail":
		s.broken = append(s.broken, e.ImportPath+" (build failed)")
	case "start":
		s.started[e.Package] = true
	case "output":
		s.output[key] = append(s.output[key], e.Output)
	case "pass", "fail", "skip":
		if e.Test == "" {
			s.endPackage(e)
			return
		}
		lines := s.output[key]
		delete(s.output, key)
		switch e.Action {
		case "pass":
			s.passed++
		case "fail":
			s.failed++
			fmt.Fprintf(s.out, "--- FAIL: %s %s (%.2fs)\n", e.Package, e.Test, e.Elapsed)
			for _, l := range lines {
				if !strings.HasPrefix(l, "=== ") && !strings.HasPrefix(l, "--- FAIL: "+e.Test+" ") {
					fmt.Fprint(s.out, l)
				}
			}
		case "skip":
			r := reason(lines)
			if strings.Contains(r, "helper process") {
				s.helper++ // a test binary's child entry point, not a test
				return
			}
			s.skips = append(s.skips, skip{e.Package, e.Test, r})
		}
	}
}

func (s *summary) endPackage(e event) {
	s.ended[e.Package] = true
	lines := s.output[e.Package+"\x00"]
	delete(s.output, e.Package+"\x00")
	switch e.Action {
	case "fail":
		fmt.Fprintf(s.out, "FAIL\t%s\t%.1fs\n", e.Package, e.Elapsed)
		for _, l := range lines {
			if l != "FAIL\n" && !strings.HasPrefix(l, "FAIL\t") {
				fmt.Fprint(s.out, l)
			}
		}
		s.broken = append(s.broken, e.Package)
	case "pass":
		fmt.Fprintf(s.out, "ok\t%s\t%.1fs\n", e.Package, e.Elapsed)
	}
}

// reason is what a skipped test said, without the runner's own lines.
func reason(lines []string) string {
	var r []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		r = append(r, t)
	}
	return strings.Join(r, " / ")
}

// finish prints the skips and the closing line; it reports whether the
// run is a success.
func (s *summary) finish() bool {
	var unended []string
	for p := range s.started {
		if !s.ended[p] {
			unended = append(unended, p)
		}
	}
	sort.Strings(unended)
	for _, p := range unended {
		fmt.Fprintf(s.out, "FAIL\t%s: the stream ended before the package did; its last output:\n", p)
		for k, lines := range s.output {
			if strings.HasPrefix(k, p+"\x00") {
				for _, l := range lines {
					fmt.Fprint(s.out, l)
				}
			}
		}
	}
	sort.Slice(s.skips, func(i, j int) bool {
		if s.skips[i].pkg != s.skips[j].pkg {
			return s.skips[i].pkg < s.skips[j].pkg
		}
		return s.skips[i].test < s.skips[j].test
	})
	if len(s.skips) > 0 {
		fmt.Fprintf(s.out, "\nskipped (%d):\n", len(s.skips))
		for _, k := range s.skips {
			fmt.Fprintf(s.out, "  %s %s: %s\n", strings.TrimPrefix(k.pkg, "github.com/benchrig/benchrig/"), k.test, k.reason)
		}
	} else {
		fmt.Fprintln(s.out, "\nskipped: none")
	}
	failed := s.failed
	if len(s.broken)+len(unended) > 0 {
		fmt.Fprintf(s.out, "failed packages: %s\n", strings.Join(append(s.broken, unended...), ", "))
		if failed == 0 {
			failed = len(s.broken) + len(unended) // no test failed, the packages did
		}
	}
	fmt.Fprintf(s.out, "tests: %d passed, %d failed, %d skipped\n", s.passed, failed, len(s.skips))
	return s.failed == 0 && len(s.broken) == 0 && len(unended) == 0 && s.passed > 0
}

func main() {
	s := newSummary(os.Stdout)
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			fmt.Println(sc.Text()) // not an event: go's own message
			continue
		}
		s.add(e)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "testsum: reading the test stream:", err)
		os.Exit(1)
	}
	if !s.finish() {
		os.Exit(1)
	}
}
