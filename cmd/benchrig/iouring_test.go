package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/driver/evloop"
)

// TestIOUring: a built benchrig's RESP and HTTP/1.1 closed loops go on
// io_uring by default (placement.io_uring auto; no busy poll beside an
// unpinned server), say so in the Client line and the results
// (client.io), and count what they count on epoll (--io-uring off); a
// value neither auto nor off is a usage error naming the flag.
func TestIOUring(t *testing.T) {
	t.Parallel()
	respNeedRedis(t)
	if why, err := evloop.RingCheck(); err != nil {
		t.Fatal(err)
	} else if why != "" {
		t.Skip(why)
	}
	dir := t.TempDir()
	br, _ := buildBenchrig(t, dir)
	for _, c := range []struct {
		name, io, line string
		args           []string
	}{
		{"auto", "io_uring", ", on io_uring\n", nil},
		{"off", "epoll", "requests per CPU-second\n", []string{"--io-uring", "off"}},
	} {
		out := filepath.Join(dir, c.name+".json")
		args := append([]string{"resp", "--ephemeral", "--fill", "--keyspace", "16", "-c", "4", "-p", "4", "-n", "4000",
			"--no-calibrate", "--baseline", "0", "--recovery", "0", "-o", out}, c.args...)
		b, err := exec.Command(br, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, b)
		}
		if !strings.Contains(string(b), c.line) || strings.Contains(string(b), ", on io_uring") != (c.io == "io_uring") {
			t.Errorf("%s: output lacks %q:\n%s", c.name, c.line, b)
		}
		s := readResults(t, out).Sample
		if s.Load.Client.IO != c.io || s.Load.Requests != 4000 || s.Load.Errors != 0 {
			t.Errorf("%s: client.io %q, %d requests, %d errors; want %s, 4000, 0", c.name, s.Load.Client.IO, s.Load.Requests, s.Load.Errors, c.io)
		}
		if hits := s.Stats["client_hits"]; hits != 4000 {
			t.Errorf("%s: client_hits %v, want 4000", c.name, hits)
		}
	}
	url := helloServer(t)
	for _, c := range []struct{ io, flag string }{{"io_uring", "auto"}, {"epoll", "off"}} {
		out := filepath.Join(dir, "http-"+c.flag+".json")
		b, err := exec.Command(br, "http", url, "--io-uring", c.flag, "-c", "2", "-n", "3000", "--no-calibrate",
			"--baseline", "0", "--recovery", "0", "-o", out).CombinedOutput()
		if err != nil {
			t.Fatalf("http --io-uring %s: %v\n%s", c.flag, err, b)
		}
		s := readResults(t, out).Sample
		if s.Load.Client.IO != c.io || s.Load.Requests != 3000 || s.Load.Errors != 0 {
			t.Errorf("http --io-uring %s: client.io %q, %d requests, %d errors; want %s, 3000, 0", c.flag, s.Load.Client.IO, s.Load.Requests, s.Load.Errors, c.io)
		}
	}
	b, err := exec.Command(br, "resp", "--ephemeral", "--io-uring", "on", "-n", "10").CombinedOutput()
	if want := `--io-uring: not an io_uring setting: "on"; accepted: auto, off`; err == nil || !strings.Contains(string(b), want) {
		t.Errorf("--io-uring on: %v, output %q; want a usage error with %q", err, b, want)
	}
}
