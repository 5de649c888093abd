package result

import (
	"encoding/json"
	"testing"
)

// TestVersionLines: --version's line and version's lines, with the
// commit unknown or dirty.
func TestVersionLines(t *testing.T) {
	t1 := Tool{Version: "v1.2", Commit: "abc", Dirty: true, Go: "go1.26.0"}
	if got, want := t1.VersionLine(), "v1.2 (commit abc, dirty, go1.26.0)"; got != want {
		t.Errorf("VersionLine %q, want %q", got, want)
	}
	if got, want := t1.VersionText(), "benchrig v1.2\ncommit abc (dirty)\ngo1.26.0\n"; got != want {
		t.Errorf("VersionText %q, want %q", got, want)
	}
	t2 := Tool{Version: "dev", Go: "go1.26.0"}
	if got, want := t2.VersionLine(), "dev (commit unknown, go1.26.0)"; got != want {
		t.Errorf("VersionLine %q, want %q", got, want)
	}
}

// TestDriverAddr: the driver's addr when its config holds one, else the
// default.
func TestDriverAddr(t *testing.T) {
	s := &Sample{Config: &Config{Driver: json.RawMessage(`{"addr":"127.0.0.1:6379"}`)}}
	if got := s.DriverAddr("x"); got != "127.0.0.1:6379" {
		t.Errorf("DriverAddr %q", got)
	}
	for _, s := range []*Sample{{}, {Config: &Config{Driver: json.RawMessage(`{}`)}}} {
		if got := s.DriverAddr("ephemeral redis-server"); got != "ephemeral redis-server" {
			t.Errorf("DriverAddr %q, want the default", got)
		}
	}
}
