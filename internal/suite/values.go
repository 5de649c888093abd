package suite

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/proc"

	"github.com/goccy/go-yaml/ast"
)

// Duration is a non-negative time.Duration written in a suite as a Go
// duration string ("1.5s", "250ms", "1m") or as a bare number of seconds
// (60, 1.5), as autocannon, wrk and hey users write them. It is recorded in
// JSON as a duration string. It is at most MaxDuration.
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// String formats d as Go does ("1.5s").
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON records d as a duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration string, so a recorded suite reads back.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// MaxDuration bounds every duration of a suite or flag: a week.
const MaxDuration = Duration(7 * 24 * time.Hour)

// ParseDuration parses a non-negative Go duration string, or a bare number
// of seconds ("10", "1.5"), at most MaxDuration.
func ParseDuration(s string) (Duration, error) {
	s = strings.TrimSpace(s)
	var v time.Duration
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if f < 0 || f > MaxDuration.D().Seconds() || f != f {
			return 0, fmt.Errorf("must be between 0 and %s, got %s seconds", MaxDuration, s)
		}
		v = time.Duration(f * float64(time.Second))
	} else if v, err = time.ParseDuration(s); err != nil {
		return 0, fmt.Errorf("not a duration: %q; accepted: a number of seconds (10, 1.5) or a number with a unit (250ms, 1.5s, 1m)", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("must be ≥ 0, got %s", v)
	}
	if Duration(v) > MaxDuration {
		return 0, fmt.Errorf("must be at most %s, got %s", MaxDuration, v)
	}
	return Duration(v), nil
}

func (d *Duration) decodeYAML(dec *decoder, field string, n ast.Node) {
	at := nodePos(n)
	switch x := n.(type) {
	case *ast.IntegerNode, *ast.FloatNode:
		v, err := ParseDuration(x.GetToken().Value)
		if err != nil {
			dec.errAt(at, field, "%s", err.Error())
			return
		}
		*d = v
	case *ast.StringNode:
		v, err := ParseDuration(x.Value)
		if err != nil {
			dec.errAt(at, field, "%s", err.Error())
			return
		}
		*d = v
	default:
		dec.errAt(at, field, "must be a duration such as 250ms or 1.5s, got %s", describe(n))
	}
}

// CPUList is a set of CPUs in the Linux cpulist syntax ("0", "0-3",
// "0,2-3"), used to pin the client or a target. Empty means no pinning. A
// bare integer in YAML (cpus: 0) is read as that one CPU.
type CPUList string

// CPUs returns the CPU numbers of l, sorted and without repeats; nil when l
// is empty.
func (l CPUList) CPUs() ([]int, error) { return ParseCPUList(string(l)) }

func (l *CPUList) decodeYAML(dec *decoder, field string, n ast.Node) {
	switch x := n.(type) {
	case *ast.StringNode:
		*l = CPUList(x.Value)
	case *ast.IntegerNode:
		*l = CPUList(x.GetToken().Value)
	default:
		dec.errAt(nodePos(n), field, "must be a CPU list such as \"0\", \"0-3\" or \"0,2-3\", got %s", describe(n))
	}
}

// ParseCPUList parses the Linux cpulist syntax: comma-separated CPU numbers
// and inclusive ranges ("0", "0-3", "0,2-3"), with proc.ParseCPUList's
// rules. It returns the CPUs sorted and without repeats, or nil for an
// empty string (no pinning).
func ParseCPUList(s string) ([]int, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	cpus, err := proc.ParseCPUList(s)
	if err != nil {
		return nil, fmt.Errorf("not a CPU list: %q; accepted: CPU numbers 0–%d and ranges, e.g. \"0\", \"0-3\", \"0,2-3\"", s, proc.MaxCPU-1)
	}
	return cpus, nil
}

// BusyPollAuto is the busy poll of placement.busy_poll "auto" on a client
// with CPUs of its own: long enough to span a server's answer on
// loopback (a few µs to tens of µs), short enough that a client waiting
// on a slow server sleeps almost at once.
const BusyPollAuto = 20 * time.Microsecond

// ParseIOUring reads placement.io_uring (--io-uring): "", "auto" or
// "off"; off says the event loops stay on epoll.
func ParseIOUring(s string) (off bool, err error) { return parseAutoOff(s, "an io_uring") }

// ParseCoalesce reads placement.coalesce (--coalesce): "", "auto" or
// "off"; off says a Run on io_uring handles every answer as it comes.
func ParseCoalesce(s string) (off bool, err error) { return parseAutoOff(s, "a coalesce") }

// parseAutoOff reads a setting of "", "auto" (false) or "off" (true), in
// any case; what names it in the error ("an io_uring").
func parseAutoOff(s, what string) (off bool, err error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "auto":
		return false, nil
	case "off":
		return true, nil
	}
	return false, fmt.Errorf("not %s setting: %q; accepted: auto, off", what, s)
}

// ParseBusyPoll reads placement.busy_poll (--busy-poll): "" or "auto"
// gives -1 (decided per sample: BusyPollAuto beside a pinned target on
// other CPUs, else off), "off" or "0" gives 0, and a duration (20us,
// 50µs, 0.5ms) gives itself, at most driver.MaxBusyPoll (1ms).
func ParseBusyPoll(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "", "auto":
		return -1, nil
	case "off", "0":
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("not a busy poll: %q; accepted: auto, off, or a duration up to 1ms (20us, 50µs, 0.2ms)", s)
	}
	if d < 0 || d > time.Millisecond {
		return 0, fmt.Errorf("must be between 0 (off) and 1ms, got %s", d)
	}
	return d, nil
}
