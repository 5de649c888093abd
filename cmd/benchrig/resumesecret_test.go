package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestQuickResumeKeepsCredentials: the results file records a quick run's
// Authorization header redacted; resuming it with the same flags must send
// the real header again (the live suite, which resolves to the recorded
// one), never the placeholder.
func TestQuickResumeKeepsCredentials(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Header.Get("Authorization")]++
		mu.Unlock()
		fmt.Fprint(w, "hello")
	}))
	t.Cleanup(srv.Close)
	out := filepath.Join(t.TempDir(), "a.json")
	args := []string{"http", srv.URL + "/", "-H", "Authorization: Bearer s3cret-token", "-r", "2", "-d", "300ms", "-c", "1", "--no-calibrate", "-o", out}
	if _, stderr, code := invoke(t, args...); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(out)
	if strings.Contains(string(b), "s3cret-token") {
		t.Fatal("the results file holds the token")
	}
	lines := strings.SplitAfter(string(b), "\n")
	os.WriteFile(out, []byte(lines[0]+lines[1]), 0o644) // header and one sample
	mu.Lock()
	clear(seen)
	mu.Unlock()
	_, stderr, code := invoke(t, append(args, "--resume")...)
	if code != 0 || strings.Contains(stderr, "warning") {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen["Bearer s3cret-token"] == 0 || len(seen) != 1 {
		t.Errorf("the resumed sample sent Authorization values %v; want only the real token", seen)
	}
	if doc := readResults(t, out); len(doc.Samples) != 2 || doc.Footer == nil {
		t.Errorf("after resume: %d samples, footer %v", len(doc.Samples), doc.Footer)
	}
}
