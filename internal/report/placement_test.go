package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/result"
)

// The terminal names where client and server ran: the server's CPUs as
// benchrig pinned them, or as found (a server someone else pinned).
func TestTerminalPlacement(t *testing.T) {
	for _, c := range []struct {
		pl   *result.Placement
		want string
	}{
		{&result.Placement{ClientCPUs: "1", TargetCPUs: "0"}, "Placement: client on CPUs 1, server on CPUs 0.\n"},
		{&result.Placement{ClientCPUs: "1", ServerCPUs: "0", ClientChosen: true}, "Placement: client on CPUs 1, server on CPUs 0 (found pinned).\n"},
		{&result.Placement{ClientCPUs: "2-3"}, "Placement: client on CPUs 2-3, server on CPUs (all).\n"},
		{&result.Placement{}, ""},
	} {
		var b bytes.Buffer
		serverTable(&printer{w: &b}, &result.Server{Placement: c.pl}, &result.Load{})
		got := ""
		for _, line := range strings.SplitAfter(b.String(), "\n") {
			if strings.HasPrefix(line, "Placement:") {
				got = line
			}
		}
		if got != c.want {
			t.Errorf("placement %+v: %q, want %q", *c.pl, got, c.want)
		}
	}
}
