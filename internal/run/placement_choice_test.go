package run

import (
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
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

// placement.busy_poll: as asked when given; auto busy-polls only a client
// pinned to CPUs the pinned target does not use.
func TestBusyPollOf(t *testing.T) {
	cases := []struct {
		name           string
		asked          time.Duration
		client, target string
		server         string // found pinned (ServerCPUs)
		want           time.Duration
	}{
		{"asked, shared CPUs", 50 * time.Microsecond, "0-1", "0-1", "", 50 * time.Microsecond},
		{"off, CPUs of its own", 0, "1", "0", "", 0},
		{"auto, CPUs of its own", -1, "2-3", "0,1", "", suite.BusyPollAuto},
		{"auto, one CPU shared", -1, "1-2", "0-1", "", 0},
		{"auto, beside a server found pinned", -1, "1", "", "0", suite.BusyPollAuto},
		{"auto, a server found pinned on the client's CPU", -1, "1", "", "1", 0},
		{"auto, benchrig's pinning first", -1, "1", "1", "0", 0},
		{"auto, target not pinned", -1, "1", "", "", 0},
		{"auto, client not pinned", -1, "", "0", "", 0},
	}
	for _, c := range cases {
		p := &result.Placement{ClientCPUs: c.client, TargetCPUs: c.target, ServerCPUs: c.server}
		if got := busyPollOf(c.asked, p); got != c.want {
			t.Errorf("%s: busyPollOf(%s, client %q, target %q, server %q) = %s, want %s", c.name, c.asked, c.client, c.target, c.server, got, c.want)
		}
	}
	if got := busyPoll("junk"); got != -1 {
		t.Errorf("busyPoll of an invalid value = %s, want -1 (auto)", got)
	}
	if got := busyPoll("30us"); got != 30*time.Microsecond {
		t.Errorf("busyPoll(30us) = %s", got)
	}
}
