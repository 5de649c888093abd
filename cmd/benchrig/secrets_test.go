package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/cli"
)

// Planted secrets, one per channel: each is unique, so a hit names the
// channel that leaked it.
const (
	plantQueryToken   = "Qtok-Planted-1101"   // ?token= of the http URL
	plantQueryAPIKey  = "Qkey-Planted-1102"   // ?api_key= of the http URL
	plantCustomParam  = "Qcus-Planted-1103"   // ?tenant_ref= named by --secret-param
	plantCustomHeader = "Hcus-Planted-1201"   // X-Tenant-Tag named by --secret-header
	plantAuthz        = "Hazb-Planted-1202"   // Authorization: Bearer …
	plantUpstreamKey  = "Hupk-Planted-1203"   // X-Upstream-Key
	plantArgvEq       = "Aeq-Planted-1301"    // --password=… of the --target command
	plantArgvTwo      = "Atwo-Planted-1302"   // --db-password … of the --target command
	plantSuiteArgvEq  = "Seq-Planted-1303"    // --password=… of the suite's command
	plantSuiteArgvTwo = "Stwo-Planted-1304"   // --db-password … of the suite's command
	plantEnvURL       = "Eurl-Planted-1401"   // DATABASE_URL=postgres://u:…@h/db
	plantEnvToken     = "Etok-Planted-1402"   // API_TOKEN=…
	plantSuiteQuery   = "Squery-Planted-1403" // the suite path's ?access_token=
	plantSuiteAuthz   = "Sazb-Planted-1404"   // the suite path's Authorization
	plantSuiteCustom  = "Scus-Planted-1405"   // the suite's secret_headers header
	plantURLHTTPS     = "Uhttps-Planted-1501" // https://u:…@ (refused)
	plantURLBad       = "Ubad-Planted-1502"   // http://u:…@h:notaport/ (refused)
	plantURLBare      = "Ubare-Planted-1503"  // u:…@127.0.0.1:1/ (refused)
	plantWrongPGPW    = "Wrong-Planted-1601"  // a wrong DSN password (refused)
	plantRESPToken    = "Rtok-Planted-1701"   // the RESP token (requirepass)
)

// targetArgvSecrets are on a target's own command line by the user's
// choice: its process necessarily shows them in /proc/PID/cmdline, and only
// that process (the helper target) may.
var targetArgvSecrets = map[string]bool{plantArgvEq: true, plantArgvTwo: true, plantSuiteArgvEq: true, plantSuiteArgvTwo: true}

// secretTargetEnv makes the test binary the helper target of the secrets
// test (TestHelperSecretTarget).
const secretTargetEnv = "BENCHRIG_SECRETS_TEST_TARGET"

// TestHelperSecretTarget is not a test: run as a target by
// TestNothingLeaks (with secretTargetEnv set), it serves "ok" on $PORT
// and takes whatever arguments it is given (--password=…) without
// printing them.
func TestHelperSecretTarget(t *testing.T) {
	if os.Getenv(secretTargetEnv) != "1" {
		t.Skip("helper process of TestNothingLeaks")
	}
	port := os.Getenv("PORT")
	fmt.Printf("secret target listening on 127.0.0.1:%s\n", port)
	err := http.ListenAndServe("127.0.0.1:"+port, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "ok") }))
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

// leakWatch records every place a planted secret was seen.
type leakWatch struct {
	secrets []string
	// br is the benchrig binary under test; helper the test binary, run
	// as a target.
	br, helper string
	mu         sync.Mutex
	hits       map[string]bool // "secret in where"
	// hidden counts the readings of a re-executed benchrig's command
	// line: proof that the runs were watched while they went on.
	hidden int
	// preExec holds, by PID, a benchrig command line read before its
	// re-exec in three polls or more; reexeced the PIDs seen re-executed.
	// Only one never seen re-executed is a leak (settle): on a loaded
	// machine the first milliseconds before the re-exec may last long.
	preExec  map[string]string
	reexeced map[string]bool
}

// check records the planted secrets found in b, read from where.
func (w *leakWatch) check(where string, b []byte, allowTargetArgv bool) {
	for _, s := range w.secrets {
		if allowTargetArgv && targetArgvSecrets[s] {
			continue
		}
		if i := bytes.Index(b, []byte(s)); i >= 0 {
			lo, hi := max(0, i-60), min(len(b), i+len(s)+60)
			w.mu.Lock()
			w.hits[fmt.Sprintf("%s in %s: …%q…", s, where, b[lo:hi])] = true
			w.mu.Unlock()
		}
	}
}

// pollProc reads every process's command line and every file under tmp
// until stop is closed: /proc every 50 ms, the temp dir every 200 ms.
func (w *leakWatch) pollProc(tmp string, stop <-chan struct{}, done *sync.WaitGroup) {
	defer done.Done()
	self := strconv.Itoa(os.Getpid())
	preExec := map[string]int{} // PID → polls that saw it before its re-exec
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		case <-time.After(50 * time.Millisecond):
		}
		dirs, _ := os.ReadDir("/proc")
		for _, d := range dirs {
			if d.Name()[0] < '0' || d.Name()[0] > '9' || d.Name() == self {
				continue
			}
			// The environment first: a benchrig that has re-executed
			// itself carries BENCHRIG_ARGV, and exec is one-way, so a
			// command line read after it is the new image's. Before its
			// re-exec (its first milliseconds) benchrig's argv is what its
			// caller gave: that window is not benchrig's to close.
			environ, _ := os.ReadFile("/proc/" + d.Name() + "/environ")
			b, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
			if err != nil || len(b) == 0 {
				continue
			}
			if bytes.HasPrefix(b, []byte(w.br+"\x00")) {
				reexeced := bytes.Contains(environ, []byte("\x00"+argvEnv+"=")) || bytes.HasPrefix(environ, []byte(argvEnv+"="))
				args := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")[1:]
				if !reexeced && !slices.Equal(cli.RedactArgs(args, cli.ArgPolicy(args), nil), args) {
					// About to re-execute itself with these hidden: a
					// matter of milliseconds. Seen so in three polls
					// (150 ms or more), it did not.
					if preExec[d.Name()]++; preExec[d.Name()] >= 3 {
						w.mu.Lock()
						w.preExec[d.Name()] = string(b)
						w.mu.Unlock()
					}
					continue
				}
				if reexeced {
					w.mu.Lock()
					w.hidden++
					w.reexeced[d.Name()] = true
					w.mu.Unlock()
				}
			}
			// The helper target itself: the test binary, run as a target.
			helper := bytes.HasPrefix(b, []byte(w.helper+"\x00")) && bytes.Contains(b, []byte("TestHelperSecretTarget"))
			w.check("/proc/"+d.Name()+"/cmdline ("+strings.ReplaceAll(string(b[:min(len(b), 80)]), "\x00", " ")+")", b, helper)
		}
		if n%4 == 0 {
			w.scanDir(tmp)
		}
	}
}

// settle checks the command lines read before a re-exec of the processes
// never seen re-executed: those did not hide their secrets.
func (w *leakWatch) settle() {
	w.mu.Lock()
	pending := map[string]string{}
	for pid, b := range w.preExec {
		if !w.reexeced[pid] {
			pending[pid] = b
		}
	}
	w.mu.Unlock()
	for pid, b := range pending {
		w.check("/proc/"+pid+"/cmdline, never re-executed ("+strings.ReplaceAll(b[:min(len(b), 80)], "\x00", " ")+")", []byte(b), false)
	}
}

// scanDir reads every regular file under dir (temp files, target logs,
// the ephemeral servers' files) up to 8 MiB each.
func (w *leakWatch) scanDir(dir string) {
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > 8<<20 {
			return nil
		}
		if b, err := os.ReadFile(path); err == nil {
			w.check(path, b, false)
		}
		return nil
	})
}

// buildBenchrig puts benchrig (built once per test process) into dir and
// makes dir/tmp (traversable, as /tmp is) for the runs' TMPDIR.
func buildBenchrig(t *testing.T, dir string) (br, tmp string) {
	t.Helper()
	tmp = filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o755); err != nil {
		t.Fatal(err)
	}
	return linkBuild(t, ".", dir, "benchrig"), tmp
}

// TestNothingLeaks runs every mode of the built benchrig (http, pg, resp,
// run, report in every format, compare, verify) with a secret planted in
// every channel (URL userinfo in https, malformed and scheme-less URLs,
// query tokens, a --secret-param, a --secret-header, Authorization,
// X-Upstream-Key, target argv in both forms, env values with URL
// credentials, a DSN password for pg and for resp's fill, a RESP token)
// and greps stdout, stderr, results files, reports, target logs, every
// file under the runs' TMPDIR and /proc/*/cmdline of every process (polled
// every 50 ms while the runs go on) for each of them: 0 hits, or the test
// fails naming each place.
func TestNothingLeaks(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	pgNeedBinaries(t)
	respNeedRedis(t)
	dir := t.TempDir()
	br, tmp := buildBenchrig(t, dir)
	pg := startPGTestServer(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	w := &leakWatch{br: br, helper: self, hits: map[string]bool{}, preExec: map[string]string{}, reexeced: map[string]bool{}, secrets: []string{
		plantQueryToken, plantQueryAPIKey, plantCustomParam, plantCustomHeader, plantAuthz, plantUpstreamKey,
		plantArgvEq, plantArgvTwo, plantSuiteArgvEq, plantSuiteArgvTwo, plantEnvURL, plantEnvToken, plantSuiteQuery,
		plantSuiteAuthz, plantSuiteCustom, plantURLHTTPS, plantURLBad, plantURLBare, plantWrongPGPW, plantRESPToken, pgTestPassword,
	}}
	stop := make(chan struct{})
	var polling sync.WaitGroup
	polling.Add(1)
	go w.pollProc(tmp, stop, &polling)
	stopped := false
	stopPolling := func() {
		if !stopped {
			stopped = true
			close(stop)
			polling.Wait()
		}
	}
	defer stopPolling()

	env := append(os.Environ(), "TMPDIR="+tmp, secretTargetEnv+"=1", "RESP_TOKEN="+plantRESPToken, "PGDSN=", "DATABASE_URL=")
	// benchrig runs the built binary and checks its stdout and stderr.
	benchrig := func(name string, wantOK bool, args ...string) {
		t.Helper()
		cmd := exec.Command(br, args...)
		cmd.Env = env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		w.check(name+" stdout", stdout.Bytes(), false)
		w.check(name+" stderr", stderr.Bytes(), false)
		if cmd.Process != nil && !strings.Contains(stderr.String(), "cannot hide the credentials") {
			// It re-executed itself, or had nothing to hide (hideArgv
			// says so when it cannot): a process that lived too short a
			// time after its re-exec to be polled again is not one that
			// kept its credentials on its command line.
			w.mu.Lock()
			w.reexeced[strconv.Itoa(cmd.Process.Pid)] = true
			w.mu.Unlock()
		}
		if wantOK && err != nil {
			t.Errorf("%s: %v\n%s", name, err, clip(stderr.String()))
		}
		if !wantOK && err == nil {
			t.Errorf("%s: succeeded, want a refusal", name)
		}
	}
	short := []string{"-d", "1s", "--baseline", "200ms", "--settle", "100ms", "--recovery", "200ms", "--sample-interval", "100ms"}
	results := func(name string) string { return filepath.Join(dir, name+".json") }
	helper := self + " -test.run=^TestHelperSecretTarget$ --"

	// http: query tokens, a custom param, Authorization, X-Upstream-Key, a
	// custom secret header, and a target command with both argv forms.
	port := freePort(t)
	benchrig("http", true, append([]string{"http",
		fmt.Sprintf("http://127.0.0.1:%d/x?token=%s&api_key=%s&tenant_ref=%s&q=1", port, plantQueryToken, plantQueryAPIKey, plantCustomParam),
		"--target", helper + " --password=" + plantArgvEq + " --db-password " + plantArgvTwo,
		"-H", "Authorization: Bearer " + plantAuthz, "-H", "X-Upstream-Key: " + plantUpstreamKey, "-H", "X-Tenant-Tag: " + plantCustomHeader,
		"--secret-header", "X-Tenant-Tag", "--secret-param", "tenant_ref", "-c", "2", "-o", results("http")}, short...)...)
	// URL credentials are refused, and never echoed, whatever the form.
	benchrig("http https userinfo", false, "http", "https://u:"+plantURLHTTPS+"@127.0.0.1:1/", "-d", "1s")
	benchrig("http malformed URL", false, "http", "http://u:"+plantURLBad+"@127.0.0.1:notaport/", "-d", "1s")
	benchrig("http scheme-less URL", false, "http", "u:"+plantURLBare+"@127.0.0.1:1/", "-d", "1s")

	// pg: a DSN with a password on the command line, and a wrong one.
	benchrig("pg", true, append([]string{"pg", "--dsn", pg.dsn("bench", pgTestPassword, "bench"), "--path", "any", "--batch", "4",
		"-c", "2", "--rows", "512", "-o", results("pg")}, short...)...)
	benchrig("pg wrong password", false, "pg", "--dsn", pg.dsn("bench", plantWrongPGPW, "bench"), "-d", "1s")

	// resp: an ephemeral redis-server whose password is the token, filled
	// from PostgreSQL by a DSN with a password on the command line.
	benchrig("resp", true, append([]string{"resp", "--ephemeral", "--token-env", "RESP_TOKEN", "--batch", "4", "-c", "2",
		"--fill-from-pg", "--fill-from-pg-dsn", pg.dsn("bench", pgTestPassword, "bench"), "--keyspace", "64", "-o", results("resp")}, short...)...)

	// run: a suite whose command target has both argv forms and secret
	// environment values, and whose path has a query token, Authorization
	// and a header named by secret_headers.
	suiteFile := filepath.Join(dir, "suite.yaml")
	suiteYAML := fmt.Sprintf(`name: secrets
repeats: 1
sampler: {interval: 100ms}
phases: {baseline: 200ms, settle: 100ms, load: 1s, recovery: 200ms}
secret_headers: [X-Suite-Tag]
targets:
  helper:
    command: [%q, "-test.run=^TestHelperSecretTarget$", "--", "--password=%s", "--db-password", %q]
    env: {PORT: "{port}", DATABASE_URL: "postgres://u:%s@db.invalid/app", API_TOKEN: %q}
paths:
  get:
    http:
      url: "http://127.0.0.1:{port}/?access_token=%s"
      headers: {Authorization: "Bearer %s", X-Suite-Tag: %q}
matrix:
  targets: [helper]
  paths: [get]
  connections: [2]
`, self, plantSuiteArgvEq, plantSuiteArgvTwo, plantEnvURL, plantEnvToken, plantSuiteQuery, plantSuiteAuthz, plantSuiteCustom)
	if err := os.WriteFile(suiteFile, []byte(suiteYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	benchrig("run", true, "run", suiteFile, "-o", results("run"))
	stopPolling()
	w.settle()

	// report in every format, and compare, from every results file.
	for _, name := range []string{"http", "pg", "resp", "run"} {
		f := results(name)
		if b, err := os.ReadFile(f); err != nil {
			t.Errorf("%s: %v", name, err)
		} else {
			w.check(f, b, false)
		}
		for _, ext := range []string{"md", "html", "txt", "json", "csv"} {
			out := filepath.Join(dir, name+"-report."+ext)
			args := []string{"report", f, "-o", out}
			if ext == "txt" {
				args = []string{"report", f, "-f", "text", "-o", out}
			}
			benchrig("report "+name+" "+ext, true, args...)
			if b, err := os.ReadFile(out); err != nil {
				t.Errorf("report %s %s: %v", name, ext, err)
			} else {
				w.check(out, b, false)
			}
		}
		benchrig("report "+name+" stdout", true, "report", f)
		benchrig("verify "+name, true, "verify", f)
	}
	benchrig("compare", true, "compare", results("http"), results("run"))
	benchrig("compare pg", true, "compare", results("pg"), results("pg"))
	w.scanDir(tmp)
	t.Logf("%d readings of re-executed benchrig command lines", w.hidden)
	if w.hidden == 0 {
		t.Errorf("no re-executed benchrig was seen in /proc while the runs went on: the command-line check proved nothing")
	}

	if len(w.hits) > 0 {
		var list []string
		for h := range w.hits {
			list = append(list, h)
		}
		sort.Strings(list)
		t.Errorf("%d leaks of planted secrets:\n%s", len(list), strings.Join(list, "\n"))
	}
}
