package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// bodyServer records the bodies it receives.
func bodyServer(t *testing.T) (addr string, bodies func() []string) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+string(b))
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), got...)
	}
}

// TestHabitsOfPeerUsers: what autocannon, wrk, hey and curl users type
// works: durations in bare seconds, URLs without a scheme (localhost and
// an IP), -b @file and --body-file, --version.
func TestHabitsOfPeerUsers(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	addr, bodies := bodyServer(t)
	port := addr[strings.LastIndexByte(addr, ':'):]
	for _, args := range [][]string{
		{"http", "http://" + addr + "/", "-c", "1", "-d", "1"},        // -d 10 as autocannon users type it
		{"http", "localhost" + port + "/", "-c", "1", "-n", "5"},      // seed 003's `autocannon localhost:3000/`
		{"http", "127.0.0.1" + port + "/", "-c", "1", "-n", "5"},      // an address without a scheme
		{"http", addr + "/", "-c", "1", "-n", "5", "--warmup", "0.2"}, // a bare fraction of a second
	} {
		if out, stderr, code := invoke(t, args...); code != 0 {
			t.Errorf("%v: exit %d\n%s\n%s", args, code, out, stderr)
		}
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "body.json")
	os.WriteFile(file, []byte(`{"from":"file"}`), 0o644)
	before := len(bodies())
	if _, stderr, code := invoke(t, "http", addr+"/", "-m", "POST", "-b", "@"+file, "-c", "1", "-n", "3"); code != 0 {
		t.Fatalf("-b @file: exit %d: %s", code, stderr)
	}
	if _, stderr, code := invoke(t, "http", addr+"/", "-m", "POST", "--body-file", file, "-c", "1", "-n", "3"); code != 0 {
		t.Fatalf("--body-file: exit %d: %s", code, stderr)
	}
	got := bodies()[before:]
	for _, b := range got {
		if b != `POST {"from":"file"}` {
			t.Errorf("the server received %q, want the file's body", b)
		}
	}
	if len(got) < 6 {
		t.Errorf("%d requests with a body, want at least 6", len(got))
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"http", addr + "/", "-b", "@" + filepath.Join(dir, "missing")}, "-b/--body: body file: open "},
		{[]string{"http", addr + "/", "-b", "x", "--body-file", file}, "give -b/--body or --body-file, not both"},
		{[]string{"http", addr + "/", "-d", "-3"}, "must be between 0 and 168h0m0s, got -3 seconds"},
		{[]string{"http", addr + "/", "-d", "soon"}, "a number of seconds (10, 1.5) or a number with a unit"},
	} {
		if _, stderr, code := invoke(t, c.args...); code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
	out, _, code := invoke(t, "--version")
	if code != 0 || !strings.HasPrefix(out, "benchrig ") || !strings.Contains(out, "go1.") {
		t.Errorf("--version: exit %d, %q", code, out)
	}
}

// TestTargetsFile: a request file of three requests of different methods
// and bodies, with weights, is sent in the stated proportion (counted at
// the server), without a URL argument.
func TestTargetsFile(t *testing.T) {
	addr, bodies := bodyServer(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "b.json"), []byte(`{"put":1}`), 0o644)
	file := filepath.Join(dir, "targets.txt")
	os.WriteFile(file, []byte(fmt.Sprintf("GET http://%s/a weight=3\n\nPOST http://%s/b weight=2\nContent-Type: text/plain\n@<<EOF\nposted\nEOF\n\nPUT http://%s/c\n@b.json\n", addr, addr, addr)), 0o644)
	out, stderr, code := invoke(t, "http", "--targets", file, "-c", "1", "-n", "600")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	n := map[string]int{}
	for _, b := range bodies() {
		n[b]++
	}
	// The pre- and post-check send the first request once each, outside
	// the window.
	if n["GET "] != 300+2 || n["POST posted\n"] != 200 || n[`PUT {"put":1}`] != 100 {
		t.Errorf("the server received %v; want 300 GET (+2 checks), 200 POST, 100 PUT (weights 3:2:1 of 600)", n)
	}
}
