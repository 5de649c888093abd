package main

import (
	"bytes"
	"fmt"
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

	"github.com/benchrig/benchrig/internal/proc"
)

// Planted in benchrig's environment by TestChildEnvironments: each names a
// credential benchrig reads for itself.
const (
	plantAgentEnv    = "BENCHRIG_AGENT_TOKEN"
	plantAgentToken  = "Agent-Planted-2101"
	plantRedisEnv    = "CHILD_REDIS_TOKEN"
	plantRedisToken  = "Redis-Planted-2102"
	plantPGEnv       = "CHILD_PG_DSN"
	plantSidecarName = "BENCHRIG_DSN" // the sidecar's own: its server's DSN
	sidecarSleep     = "300.2103"     // the sidecar's command: sleep 300.2103
)

// envdumpScript is a wrapper every program of the test's suite runs
// through: it copies its own /proc/PID/environ (the one the program it
// execs keeps) into dir, named after its first argument and its PID.
func envdumpScript(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "envdump")
	body := "#!/bin/sh\nname=$1; shift\ncat /proc/$$/environ > " + dir + "/env.$name.$$\nexec \"$@\"\n"
	if err := os.WriteFile(p, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// childEnv is one environment read from a process benchrig started.
type childEnv struct {
	what    string // where it was read, and the process's command line
	kind    string // "watchdog", "agent", "sidecar" or "other"
	environ []byte
}

// TestChildEnvironments is the planted-secrets test of the processes
// benchrig starts. benchrig runs, with the agents' token, a redis token and
// a PostgreSQL DSN (with its password) in its environment, a suite of an
// HTTP command target (with a version_command), an ephemeral redis-server
// reading its token from token_env, and a PostgreSQL server by dsn_env with
// a sidecar, its load from one local agent (--agents 1 --local). The
// environment of every child is read: through /proc/PID/environ of each
// process below benchrig (polled every 10 ms: watchdogs, agents, targets,
// probes, git), and by a wrapper every program of the suite runs through
// (targets, the version_command, redis-server --version and the server,
// the sidecar), so short-lived probes are never missed. No child holds a
// variable or value it was not meant to have: the watchdogs hold nothing,
// the sidecar only its server's DSN (under its own name), the agents
// (benchrig itself, running the suite's drivers) the agents' token.
func TestChildEnvironments(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	if testing.Short() {
		t.Skip("builds benchrig and runs a suite with PostgreSQL and redis-server")
	}
	pgNeedBinaries(t)
	respNeedRedis(t)
	redisBin, _ := exec.LookPath("redis-server")
	dir := t.TempDir()
	br, tmp := buildBenchrig(t, dir)
	pg := startPGTestServer(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dumps := filepath.Join(dir, "dumps")
	if err := os.Mkdir(dumps, 0o755); err != nil {
		t.Fatal(err)
	}
	envdump := envdumpScript(t, dumps)
	redisWrap := filepath.Join(dir, "redis-server")
	if err := os.WriteFile(redisWrap, []byte(fmt.Sprintf("#!/bin/sh\nexec %s redis \"%s\" \"$@\"\n", envdump, redisBin)), 0o755); err != nil {
		t.Fatal(err)
	}
	dsn := pg.dsn("bench", pgTestPassword, "bench")
	suiteFile := filepath.Join(dir, "suite.yaml")
	suiteYAML := fmt.Sprintf(`name: child-env
repeats: 1
sampler: {interval: 100ms}
phases: {baseline: 100ms, settle: 0s, load: 400ms, recovery: 100ms}
targets:
  web:
    command: [%[1]q, web, %[2]q, "-test.run=^TestHelperSecretTarget$", "--"]
    env: {PORT: "{port}"}
    version_command: [%[1]q, version, sh, -c, "echo v1"]
  cache:
    redis: {ephemeral: true, token_env: %[3]s, bin: %[4]q}
  db:
    postgres:
      dsn_env: %[5]s
      sidecar: {command: [%[1]q, sidecar, sleep, %[6]q]}
paths:
  get: {http: {url: "http://127.0.0.1:{port}/"}}
  mget: {resp: {command: MGET, key: "item:{id}"}}
  any: {pg: {path: any}}
workloads:
  hot: {kind: hot, rows: 512, hot: 64}
matrix:
  cases:
    - {target: web, path: get}
    - {target: cache, path: mget, workload: hot}
    - {target: db, path: any, workload: hot}
  connections: [2]
`, envdump, self, plantRedisEnv, redisWrap, plantPGEnv, sidecarSleep)
	if err := os.WriteFile(suiteFile, []byte(suiteYAML), 0o600); err != nil {
		t.Fatal(err)
	}

	cmd := exec.Command(br, "run", suiteFile, "-o", filepath.Join(dir, "r.json"), "--agents", "1", "--local", "--listen", "127.0.0.1:0", "--no-calibrate")
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp, secretTargetEnv+"=1", "PGDSN=", "DATABASE_URL=",
		plantAgentEnv+"="+plantAgentToken, plantRedisEnv+"="+plantRedisToken, plantPGEnv+"="+dsn)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	root := cmd.Process.Pid
	var (
		mu   sync.Mutex
		seen = map[int]childEnv{}
	)
	stop := make(chan struct{})
	var polling sync.WaitGroup
	polling.Add(1)
	go func() {
		defer polling.Done()
		fs := proc.Default()
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			tab, err := fs.Table()
			if err != nil {
				continue
			}
			rootArgs, _ := fs.Cmdline(root) // after benchrig's re-exec, what its forks show
			for _, pid := range tab.Descendants(root) {
				mu.Lock()
				_, done := seen[pid]
				mu.Unlock()
				if done {
					continue
				}
				// the command line before and after the environment: a
				// process in the middle of its exec (a forked child
				// becoming the sidecar) shows one program's environment
				// beside the other's arguments; read it again next round
				before, err0 := fs.Cmdline(pid)
				env, err1 := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
				args, err2 := fs.Cmdline(pid)
				if err0 != nil || err1 != nil || err2 != nil || len(args) == 0 || !slices.Equal(before, args) {
					continue
				}
				if args[0] == br && (len(args) == 1 || slices.Equal(args, rootArgs)) {
					// forked, not yet exec'd (a vfork child shares
					// benchrig's memory, so its command line and
					// environment are benchrig's own)
					continue
				}
				kind := "other"
				switch {
				case args[0] == "benchrig-watchdog":
					kind = "watchdog"
				case args[0] == br && len(args) > 1 && args[1] == "agent":
					kind = "agent"
				case slices.Contains(args, sidecarSleep): // the wrapper, or the sleep it execs
					kind = "sidecar"
				case len(args) == 2 && args[0] == "cat" && strings.HasSuffix(args[1], "/environ"):
					// the wrapper's copy of its own environment: its kind
					parent, _ := os.ReadFile(strings.TrimSuffix(args[1], "environ") + "cmdline")
					if strings.Contains(string(parent), sidecarSleep) {
						kind = "sidecar"
					}
				}
				mu.Lock()
				seen[pid] = childEnv{what: fmt.Sprintf("/proc/%d/environ (%s)", pid, strings.Join(args, " ")), kind: kind, environ: env}
				mu.Unlock()
			}
		}
	}()
	err = cmd.Wait()
	close(stop)
	polling.Wait()
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}

	var all []childEnv
	kinds := map[string]int{}
	for _, c := range seen {
		all = append(all, c)
		kinds[c.kind]++
	}
	files, _ := filepath.Glob(filepath.Join(dumps, "env.*"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.Split(filepath.Base(f), ".")[1]
		kind := "other"
		if name == "sidecar" {
			kind = "sidecar"
		}
		all = append(all, childEnv{what: "the environment of " + filepath.Base(f), kind: kind, environ: b})
		kinds["wrapped "+name]++
	}
	t.Logf("environments read: %v", kinds)
	for _, c := range seen {
		if c.kind == "other" {
			t.Logf("also read: %s", c.what)
		}
	}
	// Every kind of child was read: the watchdogs and the agent from /proc,
	// the rest by the wrapper (the redis wrapper twice: --version, server).
	for _, k := range []string{"watchdog", "agent", "wrapped web", "wrapped version", "wrapped redis", "wrapped sidecar"} {
		if kinds[k] == 0 {
			t.Errorf("no environment of a %s was read", k)
		}
	}
	if kinds["wrapped redis"] < 2 {
		t.Errorf("the redis-server wrapper ran %d times, want 2 (--version, the server)", kinds["wrapped redis"])
	}

	var leaks []string
	for _, c := range all {
		vars := map[string]string{}
		for _, kv := range bytes.Split(c.environ, []byte{0}) {
			if k, v, ok := strings.Cut(string(kv), "="); ok {
				vars[k] = v
			}
		}
		switch c.kind {
		case "watchdog":
			for k := range vars {
				if k != "GOCOVERDIR" {
					leaks = append(leaks, fmt.Sprintf("%s: a watchdog's environment holds %s", c.what, k))
				}
			}
			continue
		case "agent":
			continue // benchrig itself: the suite's drivers and the agents' token are its own
		case "sidecar":
			if vars[plantSidecarName] == "" {
				leaks = append(leaks, fmt.Sprintf("%s: the sidecar did not get its DSN in $%s", c.what, plantSidecarName))
			}
		}
		for _, name := range []string{plantAgentEnv, plantRedisEnv, plantPGEnv} {
			if _, ok := vars[name]; ok {
				leaks = append(leaks, fmt.Sprintf("%s: holds $%s", c.what, name))
			}
		}
		for k, v := range vars {
			if strings.Contains(v, plantAgentToken) || strings.Contains(v, plantRedisToken) ||
				(strings.Contains(v, pgTestPassword) && !(c.kind == "sidecar" && k == plantSidecarName)) {
				leaks = append(leaks, fmt.Sprintf("%s: $%s holds a planted secret", c.what, k))
			}
		}
	}
	sort.Strings(leaks)
	for _, l := range leaks {
		t.Error(l)
	}
}
