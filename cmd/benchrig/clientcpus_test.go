package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestClientCPUsNotAllowed: --client-cpus naming a CPU benchrig may not run
// on used to fail with the kernel's "pin thread N: invalid argument"; now
// it is a usage error (exit 2) before anything starts, naming the flag, the
// CPU and the CPUs benchrig may use; a suite's placement is refused by plan
// the same way, with its position.
func TestClientCPUsNotAllowed(t *testing.T) {
	cpu := runtime.NumCPU() + 97
	_, stderr, code := invoke(t, "http", helloServer(t), "--client-cpus", fmt.Sprint(cpu), "-d", "1s")
	want := fmt.Sprintf("--client-cpus: CPU %d is not available: benchrig may run on CPUs ", cpu)
	if code != 2 || !strings.Contains(stderr, want) || strings.Contains(stderr, "invalid argument") {
		t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, stderr, want)
	}
	dir := t.TempDir()
	sf := filepath.Join(dir, "s.yaml")
	os.WriteFile(sf, []byte(fmt.Sprintf("name: pin\nplacement: {client_cpus: \"%d\"}\ntargets:\n  web: {address: {addr: \"127.0.0.1:1\"}}\npaths:\n  p: {http: {url: \"http://127.0.0.1:1/\"}}\nmatrix: {targets: [web], paths: [p], connections: [1]}\n", cpu)), 0o644)
	for _, cmd := range []string{"plan", "run"} {
		args := []string{cmd, sf}
		if cmd == "run" {
			args = append(args, "-o", filepath.Join(dir, "r.json"))
		}
		_, stderr, code := invoke(t, args...)
		want := fmt.Sprintf("s.yaml:2:26: placement.client_cpus: CPU %d is not available", cpu)
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and %q", cmd, code, stderr, want)
		}
	}
}

// TestTargetCPUsOutsideOwnAffinity: benchrig started under taskset on one
// CPU may still start its server on another (bench scripts do: server on
// CPU 0, client on CPU 1); plan must not refuse it. A CPU that is not
// online is refused.
func TestTargetCPUsOutsideOwnAffinity(t *testing.T) {
	t.Parallel() // the CPU lists are given to child processes (taskset, the built benchrig), never to this one
	if runtime.NumCPU() < 2 {
		t.Skip("needs two CPUs")
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Fatal("taskset (util-linux) not installed")
	}
	dir := t.TempDir()
	br, _ := buildBenchrig(t, dir)
	sf := filepath.Join(dir, "s.yaml")
	suite := "name: pin\nplacement: {target_cpus: \"%d\"}\ntargets:\n  web: {address: {addr: \"127.0.0.1:1\"}}\npaths:\n  p: {http: {url: \"http://127.0.0.1:1/\"}}\nmatrix: {targets: [web], paths: [p], connections: [1]}\n"
	os.WriteFile(sf, []byte(fmt.Sprintf(suite, 0)), 0o644)
	if out, err := exec.Command("taskset", "-c", "1", br, "plan", sf).CombinedOutput(); err != nil {
		t.Errorf("plan under taskset -c 1 with target_cpus 0: %v\n%s", err, out)
	}
	os.WriteFile(sf, []byte(fmt.Sprintf(suite, runtime.NumCPU()+50)), 0o644)
	out, err := exec.Command(br, "plan", sf).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "placement.target_cpus: CPU") || !strings.Contains(string(out), "is not online") {
		t.Errorf("target_cpus beyond the online CPUs: %v\n%s", err, out)
	}
}
