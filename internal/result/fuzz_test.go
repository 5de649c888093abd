package result

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
)

// FuzzReadFile reads arbitrary bytes as a results file the three ways
// benchrig does — the strict reader (ReadFile), the one verification every
// reading command goes through (Check) and Resume's reading — in memory:
// no file is written, so an input costs microseconds, not a file system's
// round trips (the harness that wrote each input to a file ran about 57
// inputs a second). None may panic, every error and problem names the
// file, an OK verdict has no problem, what the strict reader accepts Check
// reads the same, and each input's allocation stays under the fuzzcheck
// bound. testdata/fuzz/FuzzReadFile holds a complete file, a partial one,
// a torn one and damaged lines; TestFileReadersAgree runs the file-based
// readers on the same inputs.
func FuzzReadFile(f *testing.F) {
	fuzzcheck.Limit()
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzcheck.Bound(t, len(data), func() { readAllWays(t, "in.json", data) })
	})
}

// fuzzSeeds are a complete results file of two samples and its first half.
func fuzzSeeds(t testing.TB) [][]byte {
	path := filepath.Join(t.TempDir(), "r.json")
	w, err := Create(path, testHeader("a#1", "b#1"), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a#1", "b#1"} {
		if err := w.Append(testSample(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(false); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return [][]byte{good, good[:len(good)/2]}
}

// readAllWays is one input of FuzzReadFile.
func readAllWays(t *testing.T, name string, data []byte) {
	strict := &Checked{Path: name}
	serr := strict.read(bytes.NewReader(data), true)
	if serr != nil && !strings.Contains(serr.Error(), name) {
		t.Fatalf("ReadFile error does not name the file: %v", serr)
	}
	c := CheckReader(name, bytes.NewReader(data), nil)
	rep := c.Report
	if rep.OK() && (len(rep.Problems) != 0 || rep.Notice(name, true) != nil) {
		t.Fatal("OK with problems or a notice")
	}
	if !rep.OK() && (rep.Verdict() == "ok" || len(rep.Notice(name, false)) == 0) {
		t.Fatalf("not OK (%q) without a notice", rep.Problems)
	}
	for _, p := range c.lineProblems {
		if !strings.Contains(p, name) {
			t.Fatalf("problem does not name the file: %s", p)
		}
	}
	if serr == nil && (len(c.lineProblems) != 0 || len(c.Samples) != len(strict.Samples) || (c.Header == nil) != (strict.Header == nil) || (c.Footer == nil) != (strict.Footer == nil)) {
		t.Fatalf("the strict reader read %d samples without error, Check %d with %q", len(strict.Samples), len(c.Samples), c.lineProblems)
	}
	if len(c.Samples) < len(strict.Samples) {
		t.Fatalf("Check read %d samples, the strict reader %d", len(c.Samples), len(strict.Samples))
	}
	st, err := resumeState(name, data)
	switch {
	case err != nil && !strings.Contains(err.Error(), name):
		t.Fatalf("Resume error does not name the file: %v", err)
	case err == nil && (st.hdr == nil || !bytes.HasPrefix(data, st.keep) || st.n < len(st.done)):
		t.Fatalf("Resume state: header %v, keeps %d of %d bytes, %d samples for %d keys", st.hdr != nil, len(st.keep), len(data), st.n, len(st.done))
	}
}

// TestFileReadersAgree runs the file-based readers (ReadFile, Verify,
// Resume) on the seeds and corpus of FuzzReadFile: what the in-memory
// harness reads they read alike.
func TestFileReadersAgree(t *testing.T) {
	inputs := fuzzSeeds(t)
	corpus, _ := filepath.Glob("testdata/fuzz/FuzzReadFile/*")
	for _, name := range corpus {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		// the corpus format: a header line, then []byte("…")
		_, lit, ok := strings.Cut(string(b), "[]byte(")
		if !ok {
			continue
		}
		v, err := strconv.Unquote(strings.TrimSuffix(strings.TrimSpace(lit), ")"))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		inputs = append(inputs, []byte(v))
	}
	dir := t.TempDir()
	for i, data := range inputs {
		p := filepath.Join(dir, fmt.Sprintf("in%d.json", i))
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		readAllWays(t, p, data)
		h, samples, ft, err := ReadFile(p)
		mem := &Checked{Path: p}
		merr := mem.read(bytes.NewReader(data), true)
		if fmt.Sprint(err) != fmt.Sprint(merr) || (h == nil) != (mem.Header == nil) || len(samples) != len(mem.Samples) || (ft == nil) != (mem.Footer == nil) {
			t.Errorf("input %d: ReadFile %v, in memory %v", i, err, merr)
		}
		rep, err := Verify(p, nil)
		if err != nil || fmt.Sprint(rep.Problems) != fmt.Sprint(CheckReader(p, bytes.NewReader(data), nil).Report.Problems) {
			t.Errorf("input %d: Verify %v %+v", i, err, rep)
		}
		w, _, rerr := Resume(p)
		if rerr == nil {
			w.Abandon()
		}
		if _, serr := resumeState(p, data); (rerr == nil) != (serr == nil) && !errors.Is(rerr, ErrNoHeader) {
			t.Errorf("input %d: Resume %v, in memory %v", i, rerr, serr)
		}
	}
}

// TestLineLimit checks that a line past the bound is an error naming its
// line number and the bound, from ReadFile, Verify and Resume.
func TestLineLimit(t *testing.T) {
	old := maxLine
	maxLine = 1 << 10
	defer func() { maxLine = old }()
	path := filepath.Join(t.TempDir(), "r.json")
	w, err := Create(path, testHeader("a#1"), false)
	if err != nil {
		t.Fatal(err)
	}
	w.Abandon()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"type":"sample","x":"` + strings.Repeat("x", 2<<10) + "\"}\n")
	f.Close()
	want := path + ":2: line longer than 1024 bytes"
	if _, _, _, err := ReadFile(path); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("ReadFile: got %v, want %q", err, want)
	}
	rep, err := Verify(path, nil)
	if err != nil || len(rep.Problems) == 0 || !strings.Contains(rep.Problems[0], want) {
		t.Fatalf("Verify: got %v %v", rep, err)
	}
	if _, _, err := Resume(path); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Resume: got %v, want %q", err, want)
	}
}
