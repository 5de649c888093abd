package cliflag

import (
	"slices"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// TestIntList: the first value replaces the default, a repeated flag adds
// to it, and what is not a list of integers is refused.
func TestIntList(t *testing.T) {
	conns := []int{10}
	f := pflag.NewFlagSet("t", pflag.ContinueOnError)
	f.VarP(Ints(&conns), "connections", "c", "")
	if err := f.Parse([]string{"-c", "4, 64", "-c", "128"}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(conns, []int{4, 64, 128}) {
		t.Errorf("-c 4,64 -c 128: %v", conns)
	}
	for _, bad := range []string{"x", ","} {
		if err := Ints(&conns).Set(bad); err == nil {
			t.Errorf("Set(%q): no error", bad)
		}
	}
}

// TestDuration: a duration flag takes Go durations and bare seconds.
func TestDuration(t *testing.T) {
	var d time.Duration
	f := pflag.NewFlagSet("t", pflag.ContinueOnError)
	DurationVarP(f, &d, "duration", "d", 10*time.Second, "")
	if d != 10*time.Second {
		t.Errorf("default %s", d)
	}
	for in, want := range map[string]time.Duration{"1.5": 1500 * time.Millisecond, "250ms": 250 * time.Millisecond} {
		if err := f.Set("duration", in); err != nil || d != want {
			t.Errorf("-d %s: %s, %v; want %s", in, d, err, want)
		}
	}
}
