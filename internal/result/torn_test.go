package result

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTornLastLineIsIncomplete: a disk that fills up mid-write leaves the
// last sample line cut short (no newline). That file is a valid prefix of
// a run, INCOMPLETE, never FAILED; a damaged line before the end still is.
func TestTornLastLineIsIncomplete(t *testing.T) {
	for _, tc := range []struct {
		name, tail string
		incomplete bool
	}{
		{"cut mid-line", `{"type":"sample","key":"c#1","prot`, true},
		{"cut before its newline", `{"type":"sample","key":"c#1","protocol":"http","verdict":{"healthy":true}}`, true},
		{"a damaged line before the end", "{\"type\":\"sample\",\"key\":\"c#1\",\"prot\n" + `{"type":"sample","key":"d#1","protocol":"http","verdict":{"healthy":true}}` + "\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "r.json")
			w, err := Create(path, testHeader("a#1", "b#1", "c#1", "d#1"), false)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Append(testSample("a#1")); err != nil {
				t.Fatal(err)
			}
			w.Abandon()
			f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
			f.WriteString(tc.tail)
			f.Close()

			_, samples, _, rerr := ReadFile(path)
			var torn *TornLineError
			if errors.As(rerr, &torn) != tc.incomplete || len(samples) != 1 {
				t.Fatalf("ReadFile: %d samples, err %v", len(samples), rerr)
			}
			r, err := Verify(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			all := true
			for _, p := range r.Problems {
				all = all && strings.HasPrefix(p, "incomplete:")
			}
			if r.OK() || !r.Incomplete || all != tc.incomplete {
				t.Fatalf("verify: %+v", r)
			}
			if tc.incomplete && !strings.Contains(strings.Join(r.Problems, "\n"), "r.json:3: torn last line") {
				t.Errorf("problems do not name the torn line: %q", r.Problems)
			}
			if !tc.incomplete {
				return
			}
			// --resume drops the torn line and goes on.
			w, _, err = Resume(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"b#1", "c#1", "d#1"} {
				if err := w.Append(testSample(k)); err != nil {
					t.Fatal(err)
				}
			}
			w.Close(false)
			if r, _ := Verify(path, nil); !r.OK() {
				t.Errorf("after resume: %+v", r)
			}
		})
	}
}

// TestResumedChangedWarns: samples measured after --resume-changed carry
// what had changed, and verify warns of them although the file verifies.
func TestResumedChangedWarns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	w, _ := Create(path, testHeader("a#1", "b#1"), false)
	w.Append(testSample("a#1"))
	s := testSample("b#1")
	s.ResumedChanged = []string{`target "web": binary sha256 aaaa → bbbb`}
	w.Append(s)
	w.Close(false)
	r, err := Verify(path, nil)
	if err != nil || !r.OK() {
		t.Fatalf("verify: %+v %v", r, err)
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "1 of 2 samples were measured after --resume-changed") || !strings.Contains(r.Warnings[0], "b#1") || !strings.Contains(r.Warnings[0], "aaaa → bbbb") {
		t.Errorf("warnings: %q", r.Warnings)
	}
}
