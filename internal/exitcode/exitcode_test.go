package exitcode

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/secret"
)

// TestOf maps each kind of error to its code and prints it on one line.
func TestOf(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("setup failed"), Failed},
		{Usagef("--rate %d: want > 0", -1), BadUsage},
		{fmt.Errorf("wrapped: %w", Usage(errors.New("bad flag"))), BadUsage},
		{fmt.Errorf("%w: 1 of 2 samples", ErrUnhealthy), Unhealthy},
	} {
		var b strings.Builder
		if got := Of(tc.err, &b); got != tc.want {
			t.Errorf("Of(%v) = %d, want %d", tc.err, got, tc.want)
		}
		if tc.err != nil && b.String() != "benchrig: "+tc.err.Error()+"\n" {
			t.Errorf("Of(%v) printed %q", tc.err, b.String())
		}
	}
}

// TestIsCobraUsage: cobra's argument errors are usage, a usage error
// already made and any other error are not.
func TestIsCobraUsage(t *testing.T) {
	for msg, want := range map[string]bool{
		`unknown command "x" for "benchrig"`: true,
		"accepts 1 arg(s), received 2":       true,
		"unknown flag: --nope":               true,
		"connection refused":                 false,
	} {
		if got := IsCobraUsage(errors.New(msg)); got != want {
			t.Errorf("IsCobraUsage(%q) = %v, want %v", msg, got, want)
		}
	}
	if IsCobraUsage(Usage(errors.New("unknown flag: --nope"))) {
		t.Error("a UsageError is taken for cobra's own")
	}
}

// TestOneLine: a multi-line error is joined, duplicates dropped, the
// set's secrets replaced, and a usage error stays one.
func TestOneLine(t *testing.T) {
	var set secret.Set
	set.Add("hunter2")
	err := OneLine(Usage(errors.New("connect failed:\nhost a: password hunter2 rejected\nhost a: password hunter2 rejected\nhost b: refused")), &set)
	want := "connect failed: host a: password " + secret.Placeholder + " rejected; host b: refused"
	var u UsageError
	if err.Error() != want || !errors.As(err, &u) {
		t.Errorf("OneLine: %q (usage %v), want the usage error %q", err, errors.As(err, &u), want)
	}
	plain := errors.New("one line")
	if OneLine(plain, &set) != plain {
		t.Error("an error that needs no change is not returned as it is")
	}
}
