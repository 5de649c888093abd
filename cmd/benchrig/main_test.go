package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/testenv"
)

// TestMain gives the package's tests a temporary directory of their own:
// runs whose target failed keep its log there on purpose (the error names
// it), and nothing a test leaves may reach the machine's /tmp.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "benchrig-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Traversable, as /tmp is: ephemeral PostgreSQL servers run as the
	// postgres user under it.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("TMPDIR", dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func invoke(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	err := run(context.Background(), args, &o, &e)
	code = exitcode.Of(err, &e)
	return o.String(), e.String(), code
}

func helloServer(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hello") }))
	t.Cleanup(srv.Close)
	return srv.URL + "/"
}

func TestVersion(t *testing.T) {
	out, _, code := invoke(t, "version")
	if code != 0 || !strings.HasPrefix(out, "benchrig ") || !strings.Contains(out, "go1.") {
		t.Errorf("version: %d %q", code, out)
	}
}

func TestHTTPQuickRunTablesAndJSON(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	url := helloServer(t)
	outFile := filepath.Join(t.TempDir(), "r.json")
	out, _, code := invoke(t, "http", url, "-c", "4", "-d", "1500ms", "-o", outFile)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, out)
	}
	for _, want := range []string{"│ Latency ", "2.5%", "97.5%", "99.9%", "Stdev", "│ Req/Sec ", "│ Bytes/Sec ", "requests in", "Client:", "requests per CPU-second"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	doc := readResults(t, outFile)
	l := doc.Sample.Load
	if doc.Header.Schema != result.ResultsSchema || doc.Footer == nil || l == nil || l.Requests == 0 || len(l.Timeline) == 0 || l.Client.UserSeconds+l.Client.SystemSeconds <= 0 {
		t.Fatalf("document incomplete: %+v", doc)
	}
	h, err := l.Latency.Decode()
	if err != nil || h.TotalCount() != l.Requests {
		t.Errorf("histogram decodes to %v (err %v), want %d values", h.TotalCount(), err, l.Requests)
	}
	if c := doc.Sample.Config; c == nil || c.Protocol != "http" || len(c.Driver) == 0 || c.Engine.Connections != 4 || c.Cell == nil {
		t.Errorf("resolved config missing: %+v", c)
	}
}

func TestHTTPCountAndJSONStdout(t *testing.T) {
	out, _, code := invoke(t, "http", helloServer(t), "-c", "3", "-n", "500", "-p", "4", "--json")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	doc := parseResults(t, out)
	if doc.Sample.Load.Requests != 500 || doc.Sample.Load.Sent != 500 {
		t.Errorf("requests %d sent %d, want 500", doc.Sample.Load.Requests, doc.Sample.Load.Sent)
	}
}

func TestHTTPBadInput(t *testing.T) {
	url := helloServer(t)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := ln.Addr().String()
	ln.Close()
	notHTTP, _ := net.Listen("tcp", "127.0.0.1:0")
	defer notHTTP.Close()
	go func() {
		for {
			c, err := notHTTP.Accept()
			if err != nil {
				return
			}
			go func() {
				bufio.NewReader(c).ReadString('\n')
				c.Write([]byte("-ERR unknown command\r\n"))
				c.Close()
			}()
		}
	}()
	cases := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"http", "::bad"}, 2, "URL"},
		{[]string{"http", "ftp://127.0.0.1/"}, 2, "want http://"},
		{[]string{"http", url, "-d", "0s"}, 2, "--duration must be > 0"},
		{[]string{"http", url, "-d", "-3s"}, 2, `invalid argument "-3s" for "-d, --duration" flag: must be ≥ 0, got -3s`},
		{[]string{"http", url, "-d", "soon"}, 2, "invalid argument"},
		{[]string{"http", url, "-c", "0"}, 2, "--connections: must be ≥ 1, got 0"},
		{[]string{"http", url, "-n", "0"}, 2, "--requests must be ≥ 1"},
		{[]string{"http", url, "-p", "0"}, 2, "--pipeline: must be ≥ 1, got 0"},
		{[]string{"http", url, "-H", "nocolon"}, 2, "--header"},
		{[]string{"http"}, 2, "give a URL, or --targets FILE"},
		{[]string{"http", url, "--nope"}, 2, "unknown flag"},
		{[]string{"http", url, "-R", "0"}, 2, "--rate must be > 0"},
		{[]string{"http", url, "-R", "-5"}, 2, "--rate must be > 0"},
		{[]string{"http", url, "-R", "100", "-n", "500", "-d", "10s"}, 2, "contradicts"},
		{[]string{"http", url, "-R", "100", "--max-backlog", "0"}, 2, "--max-backlog must be ≥ 1"},
		{[]string{"http", url, "-R", "100", "-p", "4"}, 2, "--pipeline: pipeline 4 cannot be combined with rates"},
		{[]string{"http", url, "--arrival", "poisson"}, 2, "need --rate"},
		{[]string{"http", url, "--timer-slack", "1ms"}, 2, "--arrival, --max-backlog and --timer-slack need --rate"},
		{[]string{"http", url, "-R", "100", "--timer-slack", "20ms"}, 2, "--timer-slack: must be 0 (a wake-up for each due time) to 10ms in whole microseconds, got 20ms"},
		{[]string{"http", "http://" + closed + "/", "-d", "1s"}, 1, "connection refused"},
		{[]string{"http", "http://" + notHTTP.Addr().String() + "/", "-d", "1s"}, 1, "HTTP/1.x status line"},
		{[]string{"nosuch"}, 2, "unknown command"},
	}
	for _, c := range cases {
		done := make(chan struct{})
		var stderr string
		var code int
		go func() {
			defer close(done)
			_, stderr, code = invoke(t, c.args...)
		}()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("%v: hung", c.args)
		}
		if code != c.code || !strings.Contains(stderr, c.msg) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", c.args, code, stderr, c.code, c.msg)
		}
		if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 0 && code == 2 {
			t.Errorf("%v: usage error is %d lines, want one: %q", c.args, n+1, stderr)
		}
	}
}

// TestOutOfProcessServers runs the quick mode against real servers started
// as processes: the example Go server, and Node running a plain http server
// like seed 003's simple.js (skipped when node is not installed).
func TestOutOfProcessServers(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	bin := buildExample(t, "hello")
	servers := map[string]*exec.Cmd{"go": exec.Command(bin, "-addr", "127.0.0.1:0")}
	if node, err := exec.LookPath("node"); err == nil {
		c := exec.Command(node, "../../examples/servers/node-http/server.js")
		c.Env = append(os.Environ(), "PORT=0")
		servers["node"] = c
	} else {
		servers["node"] = nil
	}
	for name, cmd := range servers {
		t.Run(name, func(t *testing.T) {
			if cmd == nil {
				testenv.Missing(t, testenv.Node, "node not found on PATH")
			}
			addr := startListening(t, cmd)
			out, stderr, code := invoke(t, "http", "http://"+addr+"/", "-c", "10", "-d", "2s")
			if code != 0 || !strings.Contains(out, "│ Req/Sec ") || !strings.Contains(out, "\n0 errors") {
				t.Errorf("exit %d\n%s\n%s", code, out, stderr)
			}
		})
	}
}

// startListening starts cmd, waits for its "listening on ADDR" line and
// returns ADDR; the process is killed at cleanup.
func startListening(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				lines <- a
			}
		}
	}()
	select {
	case a := <-lines:
		return a
	case <-time.After(15 * time.Second):
		t.Fatalf("%s did not say it was listening", cmd.Path)
		return ""
	}
}

// TestHTTPSecretsNotRecorded: a credential header is sent but never reaches
// the results file or stdout; credentials in the URL are refused.
func TestHTTPSecretsNotRecorded(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "r.json")
	stdout, _, code := invoke(t, "http", srv.URL+"/", "-n", "5", "-H", "Authorization: Bearer sekrit-123", "-o", out)
	if code != 0 || got != "Bearer sekrit-123" {
		t.Fatalf("exit %d, server saw %q", code, got)
	}
	b, _ := os.ReadFile(out)
	if strings.Contains(string(b), "sekrit-123") || strings.Contains(stdout, "sekrit-123") {
		t.Error("the header's value reached the results file or stdout")
	}
	if !strings.Contains(string(b), "[redacted]") {
		t.Error("the recorded header is not marked redacted")
	}
	u := strings.Replace(srv.URL, "http://", "http://user:pw-secret@", 1)
	_, stderr, code := invoke(t, "http", u+"/", "-n", "5")
	if code != 2 || strings.Contains(stderr, "pw-secret") || !strings.Contains(stderr, "credentials in the URL") {
		t.Errorf("URL with credentials: exit %d %q", code, stderr)
	}
}

// resultsDoc is what a results file (-o, or --json on stdout) holds, for
// the tests: header, samples, footer, and Sample = the first sample.
type resultsDoc struct {
	Header  *result.Header
	Samples []result.Sample
	Footer  *result.Footer
	Sample  result.Sample
}

// readResults reads a results file.
func readResults(t *testing.T, path string) *resultsDoc {
	t.Helper()
	h, samples, f, err := result.ReadFile(path)
	if err != nil {
		t.Fatalf("read results %s: %v", path, err)
	}
	d := &resultsDoc{Header: h, Samples: samples, Footer: f}
	if len(samples) > 0 {
		d.Sample = samples[0]
	}
	return d
}

// parseResults reads a results file printed on stdout (--json).
func parseResults(t *testing.T, out string) *resultsDoc {
	t.Helper()
	path := filepath.Join(t.TempDir(), "stdout.json")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return readResults(t, path)
}
