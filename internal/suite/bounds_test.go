package suite_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	_ "github.com/benchrig/benchrig/internal/protocol/all"
	. "github.com/benchrig/benchrig/internal/suite"
)

// envSuite is a valid suite whose target's env: map holds n keys.
func envSuite(n int) []byte {
	var b strings.Builder
	b.WriteString("name: t\ntargets:\n  web:\n    command: [./srv]\n    env:\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "      K%d: v\n", i)
	}
	b.WriteString("paths:\n  hello: {http: {url: \"http://127.0.0.1:{port}/\"}}\nmatrix: {targets: [web], paths: [hello], connections: [4]}\n")
	return []byte(b.String())
}

// TestPrescanBounds: the keys of one mapping and the nodes of the
// document are bounded before goccy/go-yaml (quadratic in a mapping's
// keys, 1.7 KiB a node) sees them: the 4 MiB suites (a 233k-key
// env: map, a list of "[]") are refused at once with their position and the
// bound; mappings at the bound, many of them at one column under different
// parents, list entries' own mappings and every suite in the repository
// are not.
func TestPrescanBounds(t *testing.T) {
	fill := func(head, unit, tail string) []byte {
		return []byte(head + strings.Repeat(unit, (MaxSuiteBytes-len(head)-len(tail))/len(unit)) + tail)
	}
	var flowMap, entries, twoMaps strings.Builder
	flowMap.WriteString("name: t\nx: {")
	for i := 0; i <= MaxKeys; i++ {
		fmt.Fprintf(&flowMap, "k%d: v, ", i)
	}
	flowMap.WriteString("}\n")
	entries.WriteString(okHead + okMatrix + "x:\n")
	for i := 0; i < 2*MaxKeys; i++ {
		entries.WriteString("  - a: 1\n    b: 2\n")
	}
	twoMaps.WriteString(okHead + okMatrix + "x:\n")
	for _, m := range []string{"m1", "m2"} {
		twoMaps.WriteString("  " + m + ":\n")
		for i := 0; i < MaxKeys*3/4; i++ {
			fmt.Fprintf(&twoMaps, "    k%d: v\n", i)
		}
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want string // a substring of the first error
	}{
		{"a 4 MiB env: map (233k keys)", fill("name: t\ntargets:\n  web:\n    command: [./srv]\n    env:\n", "      Kxxxxx: v\n", ""),
			"s.yaml:262:13: a mapping with more than 256 keys, the bound of a suite"},
		{"257 keys", envSuite(MaxKeys + 1), "s.yaml:262:11: a mapping with more than 256 keys"},
		{"256 keys", envSuite(MaxKeys), ""},
		{"a flow mapping of 257 keys", []byte(flowMap.String()), "s.yaml:2:2197: a mapping with more than 256 keys"},
		{"512 list entries of two keys", []byte(entries.String()), `unknown key "x"`},
		{"two mappings of 192 keys at one column", []byte(twoMaps.String()), `unknown key "x"`},
		{"a 4 MiB list of []", fill("name: t\nx: [", "[],", "]\n"), "s.yaml:2:299993: more than 100000 YAML nodes (scalars, lists, mappings and their entries), the bound of a suite (list many HTTP requests in a requests_file)"},
		{"a 4 MiB block list", fill("name: t\nx:\n", "- a\n", ""), "s.yaml:50001:3: more than 100000 YAML nodes"},
		{"nesting behind an anchor", []byte("name: t\nx: &a " + strings.Repeat("[", 200) + "\n"), "s.yaml:2:107: nesting deeper than 100 levels of [ and {"},
		{"nesting behind a tag", []byte("name: t\nx: !!seq " + strings.Repeat("[", 200) + "\n"), "nesting deeper than 100 levels of [ and {"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Now()
			got := firstErr(t, tc.in)
			if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			if d := time.Since(t0); tc.want != "" && strings.Contains(tc.want, "bound") && d > 2*time.Second {
				t.Errorf("refused after %v: the pre-scan is linear and runs before the parser", d)
			}
		})
	}
	// every suite in the repository is within the bounds.
	var files []string
	for _, pattern := range []string{"../../examples/*/*.yaml", "../../examples/seeds/*/*.yaml", "testdata/*.yaml", "../report/testdata/suites/*.yaml"} {
		m, _ := filepath.Glob(pattern)
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("found only %d suites", len(files))
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := Prescan(f, data); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestBOMAndHeaderValues: a UTF-8 byte-order mark is skipped (positions
// count from after it, as editors show them; the recorded SHA-256 is the
// file's); a header value with a CR or LF is refused when the suite is
// parsed (so by plan), with its position, not first in run.
func TestBOMAndHeaderValues(t *testing.T) {
	bom := "\ufeff"
	s, err := Parse("s.yaml", []byte(bom+okHead+okMatrix))
	if err != nil {
		t.Fatalf("a suite with a byte-order mark: %v", err)
	}
	if s.Name != "t" || s.Source.SHA256 == "" {
		t.Errorf("name %q", s.Name)
	}
	if got := firstErr(t, []byte(bom+"name: t\nx: 1\n")); !strings.HasPrefix(got, `s.yaml:2:1: unknown key "x"`) {
		t.Errorf("position after a byte-order mark: %q", got)
	}
	src := okHead + `  h:
    http:
      url: "http://127.0.0.1:{port}/"
      headers: {X-A: "ok", X-B: "a\r\nInjected: yes"}
      requests:
        - {url: "http://127.0.0.1:{port}/x", headers: {X-C: "one\ntwo"}}
` + okMatrix
	_, err = Parse("s.yaml", []byte(src))
	if err == nil {
		t.Fatal("header values with line breaks accepted")
	}
	for _, want := range []string{
		`s.yaml:9:33: paths.h.http.headers.X-B: header value holds a line break, CR (\r) at byte 1 of "a\r\nInjected: yes": a header value is one line`,
		`s.yaml:11:61: paths.h.http.requests[0].headers.X-C: header value holds a line break, LF (\n) at byte 3 of "one\ntwo"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("missing %q in\n%v", want, err)
		}
	}
}

// TestWorstSuiteParse measures what the worst suites of MaxSuiteBytes cost
// to parse once the pre-scan has let them through (at its bounds) or
// refused them: each stays under 512 MiB of allocation (the fuzz targets'
// memory limit) and under 20 s on a loaded machine (the 4 MiB env: map took
// minutes before the bounds). go test -v prints the figures.
func TestWorstSuiteParse(t *testing.T) {
	if testing.Short() {
		t.Skip("parses 4 MiB suites")
	}
	for _, w := range worstSuites() {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		t0 := time.Now()
		_, err := Parse("s.yaml", w.data)
		d := time.Since(t0)
		runtime.ReadMemStats(&m1)
		alloc := (m1.TotalAlloc - m0.TotalAlloc) >> 20
		verdict := "parsed"
		if err != nil {
			verdict = strings.SplitN(err.Error(), "\n", 2)[0]
			if i := strings.Index(verdict, ": "); i > 0 {
				verdict = verdict[i+2:]
			}
			verdict = clip(verdict, 70)
		}
		t.Logf("%-36s %7d bytes %6.2f s %4d MiB  %s", w.name, len(w.data), d.Seconds(), alloc, verdict)
		if alloc > 512 || d > 20*time.Second {
			t.Errorf("%s: %v and %d MiB", w.name, d, alloc)
		}
	}
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// worstSuites are the shapes that cost goccy/go-yaml most, at the
// pre-scan's bounds or filling MaxSuiteBytes.
func worstSuites() []struct {
	name string
	data []byte
} {
	fill := func(head, unit, tail string) []byte {
		return []byte(head + strings.Repeat(unit, (MaxSuiteBytes-len(head)-len(tail))/len(unit)) + tail)
	}
	var maps, flowMaps strings.Builder
	maps.WriteString("name: t\nx:\n")
	flowMaps.WriteString("name: t\nx: [")
	for m := 0; m < MaxNodes/(2*MaxKeys+2)-1; m++ {
		fmt.Fprintf(&maps, "  m%d:\n", m)
		flowMaps.WriteString("{")
		for k := 0; k < MaxKeys; k++ {
			fmt.Fprintf(&maps, "    k%d%s: %s\n", k, strings.Repeat("x", 20), strings.Repeat("v", 40))
			if k > 0 {
				flowMaps.WriteString(", ")
			}
			fmt.Fprintf(&flowMaps, "k%d: v", k)
		}
		flowMaps.WriteString("},\n")
	}
	flowMaps.WriteString("]\n")
	return []struct {
		name string
		data []byte
	}{
		{"env: map of 233k keys (4 MiB)", fill("name: t\ntargets:\n  web:\n    command: [./srv]\n    env:\n", "      Kxxxxx: v\n", "")},
		{"list of [] (4 MiB)", fill("name: t\nx: [", "[],", "]\n")},
		{"mappings of 256 keys to the node bound", []byte(maps.String())},
		{"flow mappings of 256 keys to the bound", []byte(flowMaps.String())},
		{"list of 99,990 []", []byte("name: t\nx: [" + strings.Repeat("[],", MaxNodes-10) + "]\n")},
		{"block list of 49,990 []", []byte("name: t\nx:\n" + strings.Repeat("- []\n", MaxNodes/2-10))},
		{"one plain scalar (4 MiB)", fill("name: t\nx: ", "a", "\n")},
		{"double-quoted escapes (4 MiB)", fill("name: t\nx: \"", "\\u00e9", "\"\n")},
		{"single-quoted quotes (4 MiB)", fill("name: t\nx: '", "a''", "'\n")},
		{"block scalar (4 MiB)", fill("name: t\nx: |\n", "  abcdefgh\n", "")},
		{"comments (4 MiB)", fill("name: t\n", "# comment\n", "")},
		{"blank lines (4 MiB)", fill("name: t\n", "\n", "")},
		{"entries indented 399 (4 MiB)", fill("name: t\nx:\n", strings.Repeat(" ", 399)+"- a\n", "")},
		{"99 levels of [ (4 MiB)", fill("name: t\nx: [", strings.Repeat("[", 98)+strings.Repeat("]", 98)+",", "]\n")},
		{"99 levels of [, to the node bound", []byte("name: t\nx: [" + strings.Repeat(strings.Repeat("[", 98)+strings.Repeat("]", 98)+",", MaxNodes/98-1) + "]\n")},
	}
}
