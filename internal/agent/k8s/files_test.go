package k8s

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDNSLabel: a suite name becomes a Kubernetes object name.
func TestDNSLabel(t *testing.T) {
	for in, want := range map[string]string{
		"My_Bench":              "my-bench",
		"--":                    "benchrig",
		strings.Repeat("a", 50): strings.Repeat("a", 40),
	} {
		if got := DNSLabel(in); got != want {
			t.Errorf("DNSLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEmitFetchFile: a results file emitted into a log is recovered from
// it, and an existing file is never overwritten.
func TestEmitFetchFile(t *testing.T) {
	dir := t.TempDir()
	res, log, got := filepath.Join(dir, "r.json"), filepath.Join(dir, "pod.log"), filepath.Join(dir, "got.json")
	if err := os.WriteFile(res, []byte("{\"a\":1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := EmitFile(&b, res); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log, []byte("other line\n"+b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, err := FetchFile([]string{log}, nil, got); err != nil || n != 8 {
		t.Fatalf("FetchFile: %d bytes, %v", n, err)
	}
	if b, _ := os.ReadFile(got); string(b) != "{\"a\":1}\n" {
		t.Errorf("fetched %q", b)
	}
	if _, err := FetchFile(nil, strings.NewReader(b.String()), got); err == nil || !strings.Contains(err.Error(), "not overwriting") {
		t.Errorf("fetch onto an existing file: %v", err)
	}
}
