package result

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestHeaderlessFileIsAbsent: a run that stops before its header line is
// whole (a full disk, a kill) leaves an empty file or a header cut before
// its newline. It holds no sample, so it is treated as absent: Create
// replaces it without force, Resume refuses it with ErrNoHeader (the
// caller starts afresh). A file with anything else in it is still never
// replaced without force.
func TestHeaderlessFileIsAbsent(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full.json")
	w, err := Create(full, testHeader("a#1"), false)
	if err != nil {
		t.Fatal(err)
	}
	w.Abandon()
	header, _ := os.ReadFile(full)
	for _, tc := range []struct {
		name   string
		body   string
		absent bool
	}{
		{"empty", "", true},
		{"cut in the type", `{"ty`, true},
		{"cut in the header", string(header[:len(header)/2]), true},
		{"header without its newline", string(header[:len(header)-1]), true},
		{"a whole header", string(header), false},
		{"someone else's text", "notes about the run", false},
		{"someone else's line", "x\n", false},
		{"a newline only", "\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".json")
			if err := os.WriteFile(path, []byte(tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			if got, err := Headerless(path); err != nil || got != tc.absent {
				t.Fatalf("Headerless = %v, %v; want %v", got, err, tc.absent)
			}
			rw, _, rerr := Resume(path)
			if errors.Is(rerr, ErrNoHeader) != tc.absent {
				t.Errorf("Resume: %v", rerr)
			}
			if rerr == nil {
				rw.Abandon()
			}
			w, err := Create(path, testHeader("b#1"), false)
			if !tc.absent {
				if !errors.Is(err, ErrExists) {
					t.Fatalf("Create over a file that is not headerless: %v", err)
				}
				if b, _ := os.ReadFile(path); string(b) != tc.body {
					t.Fatalf("the file was changed: %q", b)
				}
				return
			}
			if err != nil {
				t.Fatalf("Create over a headerless file: %v", err)
			}
			if err := w.Append(testSample("b#1")); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(false); err != nil {
				t.Fatal(err)
			}
			if r, err := Verify(path, nil); err != nil || !r.OK() {
				t.Fatalf("the replaced file does not verify: %v %+v", err, r)
			}
		})
	}
	if _, err := Headerless(filepath.Join(dir, "missing.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Headerless of a missing file: %v", err)
	}
	// a FIFO or a device is not looked into (opening a FIFO would wait
	// for a writer): it is not headerless, and Create refuses it at once.
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, "/dev/null"} {
		if got, err := Headerless(p); got || err != nil {
			t.Errorf("Headerless(%s) = %v, %v", p, got, err)
		}
	}
	if _, err := Create(fifo, testHeader("a#1"), false); !errors.Is(err, ErrExists) {
		t.Errorf("Create over a FIFO: %v", err)
	}
}
