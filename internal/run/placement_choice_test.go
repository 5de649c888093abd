package run

import (
	"testing"
)

// addrDriver says its server's address, as the HTTP and gRPC drivers do.
type addrDriver string

func (a addrDriver) Addr() string { return string(a) }

// A server on loopback is on this machine; one elsewhere, or a driver
// that does not say, is not.
func TestOnLoopback(t *testing.T) {
	for addr, want := range map[string]bool{"127.0.0.1:80": true, "[::1]:443": true, "localhost:6379": true,
		"/var/run/postgresql:5432": true, "10.0.0.7:80": false, "example.com:80": false, "no-port": false} {
		if got := onLoopback(addrDriver(addr)); got != want {
			t.Errorf("onLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
	if onLoopback(struct{}{}) {
		t.Error("a driver without Addr is on loopback")
	}
}
