package result

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
)

// FuzzReadFile writes arbitrary bytes to a results file and reads it back
// with ReadFile, Verify and Resume: none may panic, every error names the
// file, and each input's allocation stays under the fuzzcheck bound.
// testdata/fuzz/FuzzReadFile holds a complete file, a partial one, a torn
// one and damaged lines.
func FuzzReadFile(f *testing.F) {
	fuzzcheck.Limit()
	dir := f.TempDir()
	path := filepath.Join(dir, "r.json")
	w, err := Create(path, testHeader("a#1", "b#1"), false)
	if err != nil {
		f.Fatal(err)
	}
	if err := w.Append(testSample("a#1")); err != nil {
		f.Fatal(err)
	}
	if err := w.Close(false); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(dir, "in.json")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		fuzzcheck.Bound(t, len(data), func() {
			if _, _, _, err := ReadFile(p); err != nil && !strings.Contains(err.Error(), p) {
				t.Fatalf("ReadFile error does not name the file: %v", err)
			}
			rep, err := Verify(p, nil)
			if err != nil {
				t.Fatalf("Verify of a readable file: %v", err)
			}
			if rep.OK() && len(rep.Problems) != 0 {
				t.Fatal("OK with problems")
			}
			if w, _, err := Resume(p); err == nil {
				w.Abandon()
			} else if !strings.Contains(err.Error(), p) && !errors.Is(err, ErrComplete) {
				t.Fatalf("Resume error does not name the file: %v", err)
			}
		})
	})
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
