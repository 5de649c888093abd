package cgroup

import (
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
)

func TestParseMemory(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		err  string // in the error; "" for none
	}{
		{"536870912", 512 << 20, ""},
		{"512MiB", 512 << 20, ""},
		{"512m", 512 << 20, ""},
		{"512mb", 512 << 20, ""},
		{"64M", 64 << 20, ""},
		{"2GiB", 2 << 30, ""},
		{"2g", 2 << 30, ""},
		{"2Gi", 2 << 30, ""},
		{"4k", 4096, ""},
		{"16TiB", 16 << 40, ""},
		{"100b", 100, ""},
		{" 1 KiB ", 1024, ""},
		{"0", 0, ""},
		{"8388607t", 8388607 << 40, ""},
		{"8388608t", 0, "too large"},
		{"9223372036854775807", math.MaxInt64, ""},
		{"9223372036854775808", 0, "too large"},
		{"-1", 0, "negative"},
		{"-512m", 0, "negative"},
		{"1.5g", 0, "not a size"},
		{"", 0, "no number"},
		{"MiB", 0, "no number"},
		{"12x", 0, "not a size"},
		{"0x10", 0, "not a size"},
		{"+5", 0, "not a size"},
		{"5 5", 0, "not a size"},
	}
	for _, c := range cases {
		got, err := ParseMemory(c.in)
		if c.err == "" {
			if err != nil || got != c.want {
				t.Errorf("ParseMemory(%q) = %d, %v; want %d", c.in, got, err, c.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), strconv.Quote(c.in)) {
			t.Errorf("ParseMemory(%q) = %d, %v; want an error naming the input and %q", c.in, got, err, c.err)
		}
	}
}

func TestFormatMemory(t *testing.T) {
	for n, want := range map[int64]string{0: "0B", 1: "1B", 1024: "1KiB", 1536: "1536B", 4 << 20: "4MiB", 3 << 30: "3GiB", 16 << 40: "16TiB", (4 << 20) - 1: "4194303B"} {
		if got := FormatMemory(n); got != want {
			t.Errorf("FormatMemory(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	i64 := func(v int64) *int64 { return &v }
	cases := []struct {
		l    Limits
		want []string // in the error; nil for none
	}{
		{Limits{}, nil},
		{Limits{CPUs: 1.5, Memory: 512 << 20, Swap: i64(0), Pids: 256}, nil},
		{Limits{CPUs: MinCPUs, Memory: MinMemory, Swap: i64(MaxSwap), Pids: MinPids}, nil},
		{Limits{CPUs: MaxCPUs, Memory: MaxMemory, Pids: MaxPids}, nil},
		{Limits{CPUs: 0.009}, []string{"CPUs 0.009", "below the minimum 0.01", "0.01–1024"}},
		{Limits{CPUs: -1}, []string{"CPUs -1", "minimum"}},
		{Limits{CPUs: math.NaN()}, []string{"CPUs NaN"}},
		{Limits{CPUs: 1024.5}, []string{"CPUs 1024.5", "above the maximum 1024"}},
		{Limits{Memory: MinMemory - 1}, []string{"Memory 4194303B", "below the minimum 4MiB", "4MiB–16TiB"}},
		{Limits{Memory: -5}, []string{"Memory -5B", "minimum"}},
		{Limits{Memory: MaxMemory + 1}, []string{"Memory", "above the maximum 16TiB"}},
		{Limits{Memory: 64 << 20, Swap: i64(-1)}, []string{"Swap -1B", "below the minimum 0"}},
		{Limits{Memory: 64 << 20, Swap: i64(MaxSwap + 1024)}, []string{"Swap", "above the maximum 16TiB"}},
		{Limits{Swap: i64(0)}, []string{"Swap is set but Memory is not"}},
		{Limits{Pids: -1}, []string{"Pids -1", "below the minimum 1", "1–4194304"}},
		{Limits{Pids: MaxPids + 1}, []string{"Pids 4194305", "above the maximum 4194304"}},
	}
	for _, c := range cases {
		err := c.l.Validate()
		if c.want == nil {
			if err != nil {
				t.Errorf("%+v: %v", c.l, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("%+v: no error, want %q", c.l, c.want)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %v; want %q in it", c.l, err, w)
			}
		}
	}
}

func TestQuota(t *testing.T) {
	for cpus, want := range map[float64]int64{0.01: 1000, 0.005: 1000, 0.5: 50000, 1.5: 150000, 1024: 102400000} {
		if got := quotaUS(cpus); got != want {
			t.Errorf("quotaUS(%g) = %d, want %d", cpus, got, want)
		}
	}
}

func FuzzParseMemory(f *testing.F) {
	for _, s := range []string{"512MiB", "2GiB", "2g", "512m", "64M", "4194304", "16TiB", "4MiB", "-1", "1.5g", "", "9223372036854775807", "8388608t", "kib"} {
		f.Add(s)
	}
	fuzzcheck.Limit()
	f.Fuzz(func(t *testing.T, s string) {
		var n int64
		var err error
		fuzzcheck.Bound(t, len(s), func() { n, err = ParseMemory(s) })
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("ParseMemory(%q): empty error", s)
			}
			return
		}
		if n < 0 {
			t.Fatalf("ParseMemory(%q) = %d, negative", s, n)
		}
		// Formatting and parsing again gives the same size, and Validate
		// agrees with the bounds on it.
		again, err := ParseMemory(FormatMemory(n))
		if err != nil || again != n {
			t.Fatalf("round trip of %q: %d → %q → %d, %v", s, n, FormatMemory(n), again, err)
		}
		inBounds := n == 0 || (n >= MinMemory && n <= MaxMemory)
		if err := (Limits{Memory: n}).Validate(); (err == nil) != inBounds {
			t.Fatalf("Memory %d (from %q): Validate says %v, in bounds %v", n, s, err, inBounds)
		}
	})
}

// TestValidName: the group names Create accepts, at their bounds.
func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		s  string
		ok bool
	}{
		{"fix", true}, {"a", true}, {"a-b-0", true}, {"-", true}, {strings.Repeat("a", MaxNameLen), true},
		{"", false}, {strings.Repeat("a", MaxNameLen+1), false}, {"Bad_Name", false}, {"a/b", false}, {"..", false}, {"é", false}, {"a b", false},
	} {
		if got := validName(tc.s); got != tc.ok {
			t.Errorf("validName(%q) = %v, want %v", tc.s, got, tc.ok)
		}
	}
}
