package main

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// TestClientCPUsNotAllowed: --client-cpus naming a CPU benchrig may not run
// on used to fail with the kernel's "pin thread N: invalid argument"; now
// the sample fails before anything starts, naming the CPU and the CPUs
// benchrig may use.
func TestClientCPUsNotAllowed(t *testing.T) {
	cpu := runtime.NumCPU() + 97
	_, stderr, code := cli(t, "http", helloServer(t), "--client-cpus", fmt.Sprint(cpu), "-d", "1s")
	want := fmt.Sprintf("pin the client to CPUs %d: CPU %d is not available: benchrig may run on CPUs ", cpu, cpu)
	if code != 1 || !strings.Contains(stderr, want) || strings.Contains(stderr, "invalid argument") {
		t.Errorf("exit %d, stderr %q; want exit 1 and %q", code, stderr, want)
	}
}
