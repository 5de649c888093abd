package target

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	cases := []struct {
		in   string
		want []int
	}{
		{"0", []int{0}},
		{"0-2,5", []int{0, 1, 2, 5}},
		{"5,0-2", []int{0, 1, 2, 5}},
		{" 1 , 3-4 ", []int{1, 3, 4}},
		{"2-2", []int{2}},
		{"0-1,1-2", []int{0, 1, 2}},
		{"1023", []int{1023}},
	}
	for _, c := range cases {
		got, err := ParseCPUList(c.in)
		if err != nil {
			t.Errorf("ParseCPUList(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseCPUList(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestParseCPUListErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{"", "empty"},
		{"  ", "empty"},
		{"0,", "empty item"},
		{"3-1", `range "3-1" is reversed`},
		{"-1", "missing CPU number"},
		{"a", `"a" is not a CPU number`},
		{"0-x", `"x" is not a CPU number`},
		{"1.5", `"1.5" is not a CPU number`},
		{"1024", "out of range 0-1023"},
		{"99999999999999999999", "out of range"},
		{"1-2-3", `"2-3" is not a CPU number`},
	}
	for _, c := range cases {
		_, err := ParseCPUList(c.in)
		if err == nil {
			t.Errorf("ParseCPUList(%q): no error", c.in)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, c.want) || !strings.Contains(msg, `like "0" or "0-1,3"`) || !strings.Contains(msg, "cpu list") {
			t.Errorf("ParseCPUList(%q) error %q, want it to contain %q and the accepted form", c.in, msg, c.want)
		}
	}
}

func TestFormatCPUList(t *testing.T) {
	cases := []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{0}, "0"},
		{[]int{0, 1, 2, 5}, "0-2,5"},
		{[]int{5, 2, 1, 0, 1}, "0-2,5"},
		{[]int{1, 3, 5}, "1,3,5"},
		{[]int{0, 1, 3, 4, 6}, "0-1,3-4,6"},
		{[]int{-1, 2}, "2"},
	}
	for _, c := range cases {
		if got := FormatCPUList(c.in); got != c.want {
			t.Errorf("FormatCPUList(%v) = %q, want %q", c.in, got, c.want)
		}
	}
}

func FuzzParseCPUList(f *testing.F) {
	for _, s := range []string{"0", "0-2,5", "1,3-4", "", "3-1", "a-b", "0-1023"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		cpus, err := ParseCPUList(s)
		if err != nil {
			return
		}
		if len(cpus) == 0 {
			t.Fatalf("ParseCPUList(%q) returned no CPUs and no error", s)
		}
		// Formatting and parsing again gives the same set.
		again, err := ParseCPUList(FormatCPUList(cpus))
		if err != nil || !reflect.DeepEqual(again, cpus) {
			t.Fatalf("round trip of %q: %v → %q → %v, %v", s, cpus, FormatCPUList(cpus), again, err)
		}
	})
}
