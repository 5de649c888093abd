package proc

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseCPUList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
		err  string
	}{
		{"0", []int{0}, ""},
		{"0-2,5", []int{0, 1, 2, 5}, ""},
		{" 3 , 1-1 ,1", []int{1, 3}, ""},
		{"", nil, "empty"},
		{"1,", nil, "empty item"},
		{"2-1", nil, "reversed"},
		{"-1", nil, "missing CPU number"},
		{"a", nil, "not a CPU number"},
		{"99999", nil, "out of range"},
	} {
		got, err := ParseCPUList(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !strings.Contains(err.Error(), `"0-1,3"`) {
				t.Errorf("ParseCPUList(%q) error %v, want %q and the accepted form", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseCPUList(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
		if back, _ := ParseCPUList(FormatCPUList(got)); !reflect.DeepEqual(back, got) {
			t.Errorf("round trip of %v via %q gave %v", got, FormatCPUList(got), back)
		}
	}
	if s := FormatCPUList([]int{5, 0, 2, 1, 1, -3}); s != "0-2,5" {
		t.Errorf("FormatCPUList = %q", s)
	}
	set := CPUSet([]int{0, 3, -1, MaxCPU})
	if got := CPUsOf(&set); !reflect.DeepEqual(got, []int{0, 3}) {
		t.Errorf("CPUsOf(CPUSet) = %v", got)
	}
}
