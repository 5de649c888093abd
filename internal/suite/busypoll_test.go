package suite

import (
	"testing"
	"time"
)

func TestParseIOUring(t *testing.T) {
	for in, want := range map[string]bool{"": false, "auto": false, " Auto ": false, "off": true, "OFF": true} {
		if got, err := ParseIOUring(in); err != nil || got != want {
			t.Errorf("ParseIOUring(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"on", "epoll", "0", "auto,off"} {
		want := `not an io_uring setting: "` + in + `"; accepted: auto, off`
		if _, err := ParseIOUring(in); err == nil || err.Error() != want {
			t.Errorf("ParseIOUring(%q): %v, want %s", in, err, want)
		}
	}
}

func TestParseCoalesce(t *testing.T) {
	for in, want := range map[string]bool{"": false, "auto": false, " Auto ": false, "off": true, "OFF": true} {
		if got, err := ParseCoalesce(in); err != nil || got != want {
			t.Errorf("ParseCoalesce(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"on", "20us", "0", "auto,off"} {
		want := `not a coalesce setting: "` + in + `"; accepted: auto, off`
		if _, err := ParseCoalesce(in); err == nil || err.Error() != want {
			t.Errorf("ParseCoalesce(%q): %v, want %s", in, err, want)
		}
	}
}

func TestParseBusyPoll(t *testing.T) {
	for in, want := range map[string]time.Duration{"": -1, "auto": -1, " AUTO ": -1, "off": 0, "0": 0, "0s": 0,
		"20us": 20 * time.Microsecond, "50µs": 50 * time.Microsecond, "0.2ms": 200 * time.Microsecond, "1ms": time.Millisecond} {
		got, err := ParseBusyPoll(in)
		if err != nil || got != want {
			t.Errorf("ParseBusyPoll(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for in, want := range map[string]string{
		"1001us": "must be between 0 (off) and 1ms, got 1.001ms",
		"-1us":   "must be between 0 (off) and 1ms, got -1µs",
		"20":     `not a busy poll: "20"; accepted: auto, off, or a duration up to 1ms (20us, 50µs, 0.2ms)`,
		"on":     `not a busy poll: "on"; accepted: auto, off, or a duration up to 1ms (20us, 50µs, 0.2ms)`,
	} {
		if _, err := ParseBusyPoll(in); err == nil || err.Error() != want {
			t.Errorf("ParseBusyPoll(%q): %v, want %s", in, err, want)
		}
	}
}
