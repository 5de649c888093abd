package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/proc"
	"github.com/benchrig/benchrig/internal/result"
)

// TestBusyPoll: --busy-poll makes a closed loop's event loops poll for
// answers before they sleep, and the sample says how long and how much of
// the client's CPU went into it; a constant rate never polls; a value
// past its bound is a usage error naming the flag.
func TestBusyPoll(t *testing.T) {
	// not parallel: the busy poll is the process's while the sample runs
	url := helloServer(t)
	stdout, stderr, code := invoke(t, "http", url, "--busy-poll", "30us", "-c", "2", "-d", "300ms", "--no-calibrate", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	c := parseResults(t, stdout).Sample.Load.Client
	if c.BusyPollUS != 30 || !(c.BusyPollSeconds > 0) || c.BusyPollSeconds > c.UserSeconds+c.SystemSeconds {
		t.Errorf("busy poll %g µs, %g s of %g s CPU; want 30 µs and a part of the CPU", c.BusyPollUS, c.BusyPollSeconds, c.UserSeconds+c.SystemSeconds)
	}

	stdout, stderr, code = invoke(t, "http", url, "--busy-poll", "30us", "-R", "200", "-c", "2", "-d", "300ms", "--no-calibrate", "--json")
	if code != 0 {
		t.Fatalf("rate: exit %d: %s", code, stderr)
	}
	if c := parseResults(t, stdout).Sample.Load.Client; c.BusyPollUS != 0 || c.BusyPollSeconds != 0 {
		t.Errorf("a constant rate busy-polled: %g µs, %g s", c.BusyPollUS, c.BusyPollSeconds)
	}

	_, stderr, code = invoke(t, "http", url, "--busy-poll", "5ms", "-d", "1s")
	if want := "--busy-poll: must be between 0 (off) and 1ms, got 5ms"; code != 2 || !strings.Contains(stderr, want) {
		t.Errorf("--busy-poll 5ms: exit %d, stderr %q; want exit 2 and %q", code, stderr, want)
	}
}

// TestBusyPollAuto: by default (auto) a client beside a pinned target, on
// CPUs the target does not use, polls 20 µs; sharing the target's CPUs,
// it sleeps at once. The CPU lists go to a built benchrig,
// never to this process.
func TestBusyPollAuto(t *testing.T) {
	t.Parallel()
	if runtime.NumCPU() < 2 {
		t.Skip("needs two CPUs: one for the target, one for the client")
	}
	dir := t.TempDir()
	br, _ := buildBenchrig(t, dir)
	bin := buildBucket(t)
	for _, c := range []struct {
		name string
		args []string
		want float64
	}{
		{"auto beside the target", []string{"--target-cpus", "0"}, 20},
		{"auto on the target's CPU", []string{"--target-cpus", "0", "--client-cpus", "0-1"}, 0},
	} {
		out := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".json")
		port := freePort(t)
		args := append([]string{}, "http", fmt.Sprintf("http://127.0.0.1:%d/", port), "--target", bin+" -rate 1e9",
			"-c", "2", "-d", "500ms", "--no-calibrate", "-o", out,
			"--baseline", "0", "--warmup", "0", "--settle", "0", "--recovery", "0", "--sample-interval", "200ms")
		args = append(args, c.args...)
		if b, err := exec.Command(br, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, b)
		}
		s := readResults(t, out).Sample
		if got := s.Load.Client.BusyPollUS; got != c.want || (c.want > 0) != (s.Load.Client.BusyPollSeconds > 0) {
			t.Errorf("%s: busy poll %g µs (%g s), want %g µs; placement %+v", c.name, got, s.Load.Client.BusyPollSeconds, c.want, s.Server.Placement)
		}
	}

	// A server someone else pinned (taskset), benchrig given only its URL
	// and run under taskset on the other CPU: found pinned, so auto polls.
	// The same server unpinned: benchrig cannot have a CPU of its own.
	for _, c := range []struct {
		name   string
		server []string // the command that starts the server
		cpus   string   // placement.server_cpus
		want   float64
	}{
		{"found pinned", []string{"taskset", "-c", "0", bin}, "0", 20},
		{"not pinned", []string{bin}, "", 0},
	} {
		addr := startListening(t, exec.Command(c.server[0], append(c.server[1:], "-addr", "127.0.0.1:0", "-rate", "1e9")...))
		out := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".json")
		args := []string{"-c", "1", br, "http", "http://" + addr + "/", "-c", "2", "-d", "500ms", "--no-calibrate", "-o", out,
			"--baseline", "0", "--warmup", "0", "--settle", "0", "--recovery", "0"}
		if b, err := exec.Command("taskset", args...).CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, b)
		}
		doc := readResults(t, out)
		s := doc.Sample
		// benchrig under taskset -c 1 still counts the machine's CPUs
		// (runtime.NumCPU would say 1)
		if online := proc.OnlineCount(); doc.Header.Host == nil || doc.Header.Host.OnlineCPUs != online {
			t.Errorf("%s: host %+v; want the machine's %d online CPUs", c.name, doc.Header.Host, online)
		}
		var pl result.Placement
		if s.Server != nil && s.Server.Placement != nil {
			pl = *s.Server.Placement
		}
		if pl.ServerCPUs != c.cpus || s.Load.Client.BusyPollUS != c.want {
			t.Errorf("%s: placement %+v, busy poll %g µs; want server CPUs %q and %g µs", c.name, pl, s.Load.Client.BusyPollUS, c.cpus, c.want)
		}
		if c.cpus != "" && (pl.ClientCPUs != "1" || !pl.ClientChosen) {
			t.Errorf("%s: placement %+v; want the client chosen on CPU 1, beside the server", c.name, pl)
		}
	}
}
