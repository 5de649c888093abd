package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/grpcephemeral"
	"github.com/benchrig/benchrig/internal/suite"
)

// capabilityTargets gives, for every target kind × protocol pairing a
// suite may declare, the target's YAML and a path of that protocol. Each
// fixture starts what it needs (a process to attach to, an address).
var capabilityTargets = map[string]func(t *testing.T) (target, path string){
	"command/http": func(t *testing.T) (string, string) {
		hello := buildExample(t, "hello")
		return fmt.Sprintf(`{command: [%q, "-addr", "127.0.0.1:{port}"], ready: {http: "http://127.0.0.1:{port}/"}}`, hello),
			`{http: {url: "http://127.0.0.1:{port}/"}}`
	},
	"command/resp": func(t *testing.T) (string, string) {
		respNeedRedis(t)
		return `{command: [redis-server, --port, "{port}", --bind, 127.0.0.1, --save, "", --appendonly, "no"], serves: [resp]}`,
			`{resp: {command: GET, key: "k:{id}"}}`
	},
	"attach/http": func(t *testing.T) (string, string) {
		addr := startListening(t, exec.Command(buildExample(t, "hello"), "-addr", "127.0.0.1:0"))
		_, port, _ := net.SplitHostPort(addr)
		return fmt.Sprintf(`{attach: {port: %s}}`, port), `{http: {url: "http://127.0.0.1:{port}/"}}`
	},
	"attach/resp": func(t *testing.T) (string, string) {
		port := startRedis(t)
		return fmt.Sprintf(`{attach: {port: %d}, serves: [resp]}`, port), `{resp: {command: GET, key: "k:{id}"}}`
	},
	"address/http": func(t *testing.T) (string, string) {
		return `{address: {}}`, fmt.Sprintf(`{http: {url: %q}}`, helloServer(t))
	},
	"address/resp": func(t *testing.T) (string, string) {
		port := startRedis(t)
		return fmt.Sprintf(`{address: {addr: "127.0.0.1:%d"}, serves: [resp]}`, port), `{resp: {command: GET, key: "k:{id}"}}`
	},
	"command/grpc": func(t *testing.T) (string, string) {
		bin, path := greeterServer(t)
		return fmt.Sprintf(`{command: [%q, "-addr", "127.0.0.1:{port}"], serves: [grpc]}`, bin), path
	},
	"attach/grpc": func(t *testing.T) (string, string) {
		bin, path := greeterServer(t)
		_, port, _ := net.SplitHostPort(startListening(t, exec.Command(bin)))
		return fmt.Sprintf(`{attach: {port: %s}, serves: [grpc]}`, port), path
	},
	"address/grpc": func(t *testing.T) (string, string) {
		bin, path := greeterServer(t)
		return fmt.Sprintf(`{address: {addr: %q}, serves: [grpc]}`, startListening(t, exec.Command(bin))), path
	},
	"postgres/pg": func(t *testing.T) (string, string) {
		pgNeedBinaries(t)
		return `{postgres: {ephemeral: true}}`, `{pg: {path: any}}`
	},
	"postgres/resp": func(t *testing.T) (string, string) {
		// The sidecar by its path, not from PATH (TestSeed001Smoke takes
		// it from PATH): the table sets no environment, so it runs beside
		// the other parallel tests.
		return fmt.Sprintf(`{postgres: {ephemeral: true, sidecar: {command: [%q, -listen, "127.0.0.1:{port}"]}, resp: {port: 0}}, serves: [resp]}`, respcacheBin(t)),
			`{resp: {command: MGET, key: "item:{id}"}}`
	},
	"redis/resp": func(t *testing.T) (string, string) {
		respNeedRedis(t)
		return `{redis: {ephemeral: true}}`, `{resp: {command: MGET, key: "k:{id}"}}`
	},
}

// greeterServer returns the gRPC test server (grpc-go, greeter.proto),
// built once per test process and shared (builds_test.go), and a grpc path
// calling its SayHello.
func greeterServer(t *testing.T) (bin, path string) {
	t.Helper()
	bin = goBuild(t, "../../internal/grpcephemeral/cmd/greeter-server", "greeter-server")
	proto, err := grpcephemeral.WriteProto(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin, fmt.Sprintf(`{grpc: {call: benchrig.test.v1.Greeter/SayHello, proto: [%q], data: '{"name":"k{id}","id":{id}}'}}`, proto)
}

// startRedis starts a redis-server on a free loopback port for the test.
func startRedis(t *testing.T) int {
	t.Helper()
	respNeedRedis(t)
	port := freePort(t)
	cmd := exec.Command("redis-server", "--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return port
		}
	}
	t.Fatalf("redis-server did not listen on %d", port)
	return 0
}

// TestCapabilityTable walks suite.Capabilities: every pairing `plan`
// accepts runs one short sample to a verified results file, so what plan
// accepts, run can do; and a pairing outside the table is refused by plan
// with its position.
func TestCapabilityTable(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	for kind, protos := range suite.Capabilities() {
		for _, proto := range protos {
			name := kind + "/" + string(proto)
			t.Run(name, func(t *testing.T) {
				t.Parallel() // each pairing its own servers and files
				fixture, ok := capabilityTargets[name]
				if !ok {
					t.Fatalf("suite.Capabilities lists %s but this test has no fixture for it: add one", name)
				}
				tgt, path := fixture(t)
				dir := t.TempDir()
				// a warm-up first: on a loaded machine a server's first answers
				// (a RESP sidecar opening its PostgreSQL connections) can take
				// the whole 300 ms window
				src := fmt.Sprintf("name: caps\nrepeats: 1\nphases: {warmup: 500ms, load: 300ms}\ntargets:\n  sut: %s\npaths:\n  p: %s\nmatrix:\n  targets: [sut]\n  paths: [p]\n  connections: [2]\n", tgt, path)
				file := filepath.Join(dir, "s.yaml")
				if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
				if out, stderr, code := invoke(t, "plan", file); code != 0 {
					t.Fatalf("plan refused %s: exit %d\n%s%s", name, code, out, stderr)
				}
				res := filepath.Join(dir, "r.json")
				if out, stderr, code := invoke(t, "run", file, "-o", res); code != 0 {
					t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
				}
				doc := readResults(t, res)
				if len(doc.Samples) != 1 {
					t.Fatalf("%d samples", len(doc.Samples))
				}
				s := doc.Sample
				// Answered reads: a GET of the empty servers' keys is a miss
				// (issue 26), never a completed request.
				if s.Error != "" || s.Load == nil || s.Load.Requests+s.Load.Misses == 0 || s.Protocol != string(proto) || s.Config == nil || s.Config.Protocol != string(proto) {
					t.Fatalf("sample: error %q, protocol %q, load %+v", s.Error, s.Protocol, s.Load)
				}
				if sampled := kind != suite.KindAddress; sampled != (s.Server != nil && s.Server.Figures.WindowSeconds > 0) {
					t.Errorf("server figures %+v (a %s target is sampled: %v)", s.Server, kind, sampled)
				}
				if out, _, code := invoke(t, "verify", res); code != 0 {
					t.Errorf("verify: %s", out)
				}
			})
		}
	}
}

// TestPlanRefusesWhatRunCannot: a pairing outside the table is refused by
// plan with file:line:col, naming what the kind accepts.
func TestPlanRefusesWhatRunCannot(t *testing.T) {
	for _, c := range []struct{ target, want string }{
		{`{command: [./srv], serves: [pg]}`, "s.yaml:4:36: targets.sut.serves[0]: a command target cannot serve pg; accepted: http, grpc, resp"},
		{`{postgres: {ephemeral: true}, serves: [pg, http]}`, "s.yaml:4:51: targets.sut.serves[1]: a postgres target cannot serve http; accepted: pg, resp"},
		{`{postgres: {ephemeral: true}, serves: [pg, resp]}`, "s.yaml:4:38: targets.sut.serves: a postgres target serves resp through its RESP endpoint: add postgres.resp"},
		{`{redis: {ephemeral: true}, serves: [http]}`, "s.yaml:4:44: targets.sut.serves[0]: a redis target cannot serve http; accepted: resp"},
	} {
		dir := t.TempDir()
		src := fmt.Sprintf("name: caps\nrepeats: 1\ntargets:\n  sut: %s\npaths:\n  p: {pg: {path: any}}\nmatrix: {targets: [sut], paths: [p], connections: [2]}\n", c.target)
		file := filepath.Join(dir, "s.yaml")
		os.WriteFile(file, []byte(src), 0o644)
		_, stderr, code := invoke(t, "plan", file)
		if code != 2 || !strings.Contains(stderr, filepath.Join(dir, c.want)) {
			t.Errorf("%s: exit %d, stderr %q; want %q", c.target, code, stderr, c.want)
		}
	}
}

// TestAttachTreeCountsEveryWorker: a RESP server answering from two worker
// processes on one port (SO_REUSEPORT, forked by one parent) is sampled
// whole with attach.tree — the parent and both workers, and the PIDs
// named — where attaching by port alone samples one worker.
func TestAttachTreeCountsEveryWorker(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	bin := buildExample(t, "reuseport")
	port := freePort(t)
	startListening(t, exec.Command(bin, "-addr", fmt.Sprintf("127.0.0.1:%d", port), "-workers", "2"))
	procs := map[bool]int{}
	for _, tree := range []bool{false, true} {
		dir := t.TempDir()
		src := fmt.Sprintf("name: tree\nrepeats: 1\nphases: {load: 600ms}\nsampler: {interval: 100ms}\ntargets:\n  w: {attach: {port: %d, tree: %v}, serves: [resp]}\npaths:\n  p: {resp: {command: GET, key: \"k:{id}\"}}\nmatrix: {targets: [w], paths: [p], connections: [4]}\n", port, tree)
		file := filepath.Join(dir, "s.yaml")
		os.WriteFile(file, []byte(src), 0o644)
		res := filepath.Join(dir, "r.json")
		if _, stderr, code := invoke(t, "run", file, "-o", res); code != 0 {
			t.Fatalf("tree=%v: exit %d: %s", tree, code, stderr)
		}
		s := readResults(t, res).Sample
		if s.Server == nil || len(s.Server.Samples) == 0 {
			t.Fatalf("tree=%v: no server samples", tree)
		}
		for _, r := range s.Server.Samples {
			procs[tree] = max(procs[tree], r.Processes)
		}
		if tree && (s.Target == nil || strings.Count(s.Target.Settings["listeners"], ",") != 1) {
			t.Errorf("tree: the target names listeners %q, want both workers", s.Target.Settings["listeners"])
		}
	}
	if procs[false] != 1 || procs[true] != 3 {
		t.Errorf("processes sampled: by port %d, with tree %d; want 1 (one worker) and 3 (parent and both workers)", procs[false], procs[true])
	}
}
