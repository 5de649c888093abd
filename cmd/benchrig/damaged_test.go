package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// damage is one way a results file gets damaged: a full disk, a crash, an
// editor, a hand that edits figures and signs the file again.
type damage struct {
	name string
	// incomplete: a valid prefix of a run (INCOMPLETE, not corrupt).
	incomplete bool
	apply      func(t *testing.T, lines []string) []byte
	// problem is a part of what verify says of it.
	problem string
}

// resign recomputes the footer's checksum of lines (the last one is the
// footer) over every byte before it: what a hand that edits a figure and
// knows the format does.
func resign(t *testing.T, lines []string) []byte {
	t.Helper()
	n := len(lines) - 1
	body := strings.Join(lines[:n], "")
	var ft map[string]any
	if err := json.Unmarshal([]byte(lines[n]), &ft); err != nil || ft["type"] != "footer" {
		t.Fatalf("the last line is not a footer: %v", err)
	}
	sum := sha256.Sum256([]byte(body))
	ft["sha256"] = hex.EncodeToString(sum[:])
	b, _ := json.Marshal(ft)
	return []byte(body + string(b) + "\n")
}

// editSample applies edit to the JSON of sample line i (1-based) of lines.
func editSample(t *testing.T, lines []string, i int, edit func(s map[string]any)) []string {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal([]byte(lines[i]), &s); err != nil || s["type"] != "sample" {
		t.Fatalf("line %d is not a sample: %v", i+1, err)
	}
	edit(s)
	b, _ := json.Marshal(s)
	out := append([]string(nil), lines...)
	out[i] = string(b) + "\n"
	return out
}

// damages are the 15 kinds of damage every reading command must warn of
// or refuse, each made from a complete file of 8 samples (header, 8
// sample lines, footer).
var damages = []damage{
	{"header edited (host name)", false, func(t *testing.T, l []string) []byte {
		return []byte(strings.Replace(strings.Join(l, ""), `"hostname":"vm"`, `"hostname":"big-iron"`, 1))
	}, `checksum mismatch`},
	{"figure edited (requests/s doubled)", false, func(t *testing.T, l []string) []byte {
		l = editSample(t, l, 2, func(s map[string]any) {
			ld := s["load"].(map[string]any)
			ld["requests_per_sec"] = ld["requests_per_sec"].(float64) * 2
		})
		return []byte(strings.Join(l, ""))
	}, `requests_per_sec 186049.397, but 186057 requests in 2.000 s are 93024.699`},
	{"footer lost (the run stopped)", true, func(t *testing.T, l []string) []byte { return []byte(strings.Join(l[:len(l)-1], "")) }, `incomplete: 8 of 8 planned samples recorded and no footer`},
	{"torn last line (full disk mid-sample)", true, func(t *testing.T, l []string) []byte {
		return []byte(strings.Join(l[:4], "") + l[4][:len(l[4])/2])
	}, `d04.json:5: torn last line`},
	{"header only (stopped before a sample)", true, func(t *testing.T, l []string) []byte { return []byte(l[0]) }, `incomplete: 0 of 8 planned samples recorded`},
	{"empty (full disk before the header)", false, func(t *testing.T, l []string) []byte { return nil }, `empty file: no header line`},
	{"a sample line deleted", false, func(t *testing.T, l []string) []byte {
		return []byte(strings.Join(append(append([]string(nil), l[:3]...), l[4:]...), ""))
	}, `footer counts 8 samples, the file holds 7`},
	{"a sample line duplicated", false, func(t *testing.T, l []string) []byte {
		return []byte(strings.Join(append(append(append([]string(nil), l[:4]...), l[3]), l[4:]...), ""))
	}, `recorded twice`},
	{"a line of garbage inserted", false, func(t *testing.T, l []string) []byte {
		return []byte(strings.Join(append(append(append([]string(nil), l[:3]...), "\x00\x17garbage\xff\n"), l[3:]...), ""))
	}, `d09.json:4: not JSON`},
	{"a line cut short mid-file", false, func(t *testing.T, l []string) []byte {
		l = append([]string(nil), l...)
		l[3] = l[3][:len(l[3])/3] + "\n"
		return []byte(strings.Join(l, ""))
	}, `d10.json:4: not JSON: unexpected end of JSON input`},
	{"CRLF line ends (an editor)", false, func(t *testing.T, l []string) []byte {
		return []byte(strings.ReplaceAll(strings.Join(l, ""), "\n", "\r\n"))
	}, `checksum mismatch`},
	{"a sample appended after the footer", false, func(t *testing.T, l []string) []byte { return []byte(strings.Join(l, "") + l[1]) }, `d12.json:11: a "sample" line after the footer (line 10)`},
	{"re-signed: load.seconds halved", false, func(t *testing.T, l []string) []byte {
		return resign(t, editSample(t, l, 2, func(s map[string]any) { ld := s["load"].(map[string]any); ld["seconds"] = ld["seconds"].(float64) / 2 }))
	}, `load window of 1.000 s, but it starts at 2026-12-01T13:00:26.952813709Z and ends 2.000 s later`},
	{"re-signed: requests changed", false, func(t *testing.T, l []string) []byte {
		return resign(t, editSample(t, l, 5, func(s map[string]any) {
			ld := s["load"].(map[string]any)
			ld["requests"] = ld["requests"].(float64) + 1000
		}))
	}, `counts do not add up`},
	{"re-signed: a sample's key not in the plan", false, func(t *testing.T, l []string) []byte {
		return resign(t, editSample(t, l, 1, func(s map[string]any) { s["key"] = "go-hello/hello/c=4/b=1#9" }))
	}, `sample 1 (go-hello/hello/c=4/b=1#9): not in the plan`},
}

// noticeRE matches the first line of the one verification notice.
var noticeRE = regexp.MustCompile(`^(FAILED verification|INCOMPLETE \(not corrupt\)): `)

// TestDamagedFilesEveryCommand: 15 kinds of damage × every reading
// command (verify; report on the terminal, in Markdown, HTML, CSV and
// JSON; compare; export hgrm): every cell either puts the one verification
// notice first in its output or refuses the file with it. A damage that
// only cuts the run short is INCOMPLETE (not corrupt), every other one
// FAILED. go test -v prints the table.
func TestDamagedFilesEveryCommand(t *testing.T) {
	good := filepath.Join(fixtures, "results", "closed.json")
	b, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	lines = lines[:len(lines)-1] // after the last newline
	if len(lines) != 10 {
		t.Fatalf("closed.json has %d lines, want header, 8 samples, footer", len(lines))
	}
	dir := t.TempDir()
	const caseName = "4 conns"
	type column struct {
		name string
		run  func(path string) (out, stderr string, code int)
		// first is what the output starts with when the command warns
		first func(out string, path string) string
	}
	text := func(out, _ string) string { return out }
	columns := []column{
		{"verify", func(p string) (string, string, int) { return invoke(t, "verify", p) }, text},
		{"report (terminal)", func(p string) (string, string, int) { return invoke(t, "report", p) }, text},
		{"report -o .md", func(p string) (string, string, int) {
			o, e, c := invoke(t, "report", p, "-o", p+".md")
			md, _ := os.ReadFile(p + ".md")
			return strings.TrimPrefix(string(md), "> **") + o, e, c
		}, text},
		{"report -o .html", func(p string) (string, string, int) {
			o, e, c := invoke(t, "report", p, "-o", p+".html")
			page, _ := os.ReadFile(p + ".html")
			// the notice is the first element of the body
			_, body, _ := strings.Cut(string(page), "<body>\n")
			if rest, ok := strings.CutPrefix(body, `<div class="verification" role="alert"`); ok {
				_, rest, _ = strings.Cut(rest, "<p><strong>")
				return rest, e, c
			}
			return body + o, e, c
		}, text},
		{"report -f csv", func(p string) (string, string, int) {
			o, e, c := invoke(t, "report", p, "-f", "csv")
			return strings.TrimPrefix(o, "# "), e, c
		}, text},
		{"report -f json", func(p string) (string, string, int) {
			o, e, c := invoke(t, "report", p, "-f", "json")
			var sum struct{ Notice []string }
			if json.Unmarshal([]byte(o), &sum) == nil && len(sum.Notice) > 0 {
				return strings.Join(sum.Notice, "\n"), e, c
			}
			return o, e, c
		}, text},
		{"compare (A damaged)", func(p string) (string, string, int) { return invoke(t, "compare", p, good) }, text},
		{"compare (B damaged)", func(p string) (string, string, int) { return invoke(t, "compare", good, p) }, text},
		{"export hgrm", func(p string) (string, string, int) {
			out := p + ".hgrm.d"
			o, e, c := invoke(t, "export", "hgrm", p, "--case", caseName, "-o", out)
			files, _ := filepath.Glob(filepath.Join(out, "*.hgrm"))
			for _, f := range files {
				h, _ := os.ReadFile(f)
				if !noticeRE.Match(bytes.TrimPrefix(h, []byte("# "))) {
					return "a written file lacks the notice: " + f, e, c
				}
			}
			return o, e, c
		}, text},
	}
	var table strings.Builder
	table.WriteString("| damage | verdict | " + func() string {
		var h []string
		for _, c := range columns {
			h = append(h, c.name)
		}
		return strings.Join(h, " | ")
	}() + " |\n|---|---|" + strings.Repeat("---|", len(columns)) + "\n")
	for i, d := range damages {
		path := filepath.Join(dir, fmt.Sprintf("d%02d.json", i+1))
		if err := os.WriteFile(path, d.apply(t, lines), 0o644); err != nil {
			t.Fatal(err)
		}
		want := "FAILED verification"
		if d.incomplete {
			want = "INCOMPLETE (not corrupt)"
		}
		row := []string{d.name, strings.Fields(want)[0]}
		for _, c := range columns {
			out, stderr, code := c.run(path)
			cell := ""
			switch {
			case code == 0 && c.name != "verify" && strings.HasPrefix(c.first(out, path), want+": "+path):
				cell = "warns"
			case code != 0 && c.name == "verify" && strings.HasPrefix(out, want+": "+path):
				cell = fmt.Sprintf("says so (exit %d)", code)
				if !strings.Contains(out, d.problem) {
					t.Errorf("%s: verify does not say %q:\n%s", d.name, d.problem, out)
				}
			case code != 0 && c.name != "verify" && strings.HasPrefix(stderr, "benchrig: "+want+": "+path):
				cell = fmt.Sprintf("refuses (exit %d)", code)
			default:
				cell = "**MISSED**"
				t.Errorf("%s × %s: exit %d, neither warns nor refuses with %q first:\nstdout %.300s\nstderr %.300s", d.name, c.name, code, want, c.first(out, path), stderr)
			}
			row = append(row, cell)
		}
		table.WriteString("| " + strings.Join(row, " | ") + " |\n")
	}
	t.Logf("15 kinds of damage × the reading commands:\n%s", table.String())
}
