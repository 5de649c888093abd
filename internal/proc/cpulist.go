package proc

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// maxCPU is one past the largest CPU number a list may name: the size of the
// kernel affinity mask that unix.CPUSet holds.
const maxCPU = len(unix.CPUSet{}) * 64

// ParseCPUList parses a CPU list in the kernel's notation ("0", "0-2,5",
// "1,3-4") into sorted, distinct CPU numbers. Blanks around items are allowed.
// An empty list, a reversed range, a negative or too large number, or any
// other text is an error naming the list and the accepted form.
func ParseCPUList(s string) ([]int, error) {
	bad := func(why string) error {
		return fmt.Errorf("cpu list %q: %s; want CPU numbers and ranges like \"0\" or \"0-1,3\"", s, why)
	}
	if strings.TrimSpace(s) == "" {
		return nil, bad("empty")
	}
	seen := make(map[int]bool)
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, bad("empty item")
		}
		lo, hi, isRange := strings.Cut(item, "-")
		first, err := parseCPU(lo)
		if err != nil {
			return nil, bad(err.Error())
		}
		last := first
		if isRange {
			if last, err = parseCPU(hi); err != nil {
				return nil, bad(err.Error())
			}
			if last < first {
				return nil, bad(fmt.Sprintf("range %q is reversed", item))
			}
		}
		for c := first; c <= last; c++ {
			seen[c] = true
		}
	}
	cpus := make([]int, 0, len(seen))
	for c := range seen {
		cpus = append(cpus, c)
	}
	sort.Ints(cpus)
	return cpus, nil
}

// parseCPU parses one CPU number of a list.
func parseCPU(s string) (int, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("missing CPU number")
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("%q is not a CPU number", s)
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n >= maxCPU {
		return 0, fmt.Errorf("CPU %s is out of range 0-%d", s, maxCPU-1)
	}
	return n, nil
}

// FormatCPUList formats CPU numbers in the kernel's compact notation, the
// inverse of ParseCPUList: FormatCPUList([]int{0, 1, 2, 5}) is "0-2,5". The
// input need not be sorted; duplicates and negative numbers are dropped.
func FormatCPUList(cpus []int) string {
	sorted := make([]int, 0, len(cpus))
	for _, c := range cpus {
		if c >= 0 {
			sorted = append(sorted, c)
		}
	}
	sort.Ints(sorted)
	var b strings.Builder
	for i := 0; i < len(sorted); {
		j := i
		for j+1 < len(sorted) && sorted[j+1] <= sorted[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(sorted[i]))
		if sorted[j] != sorted[i] {
			b.WriteByte('-')
			b.WriteString(strconv.Itoa(sorted[j]))
		}
		i = j + 1
	}
	return b.String()
}

// MaxCPU is one past the largest CPU number a list may name: the size of
// the kernel affinity mask that unix.CPUSet holds.
const MaxCPU = maxCPU

// CPUSet converts CPU numbers (as returned by ParseCPUList) to a kernel
// affinity mask; numbers outside 0 to MaxCPU-1 are ignored.
func CPUSet(cpus []int) unix.CPUSet {
	var set unix.CPUSet
	for _, c := range cpus {
		if c >= 0 && c < maxCPU {
			set.Set(c)
		}
	}
	return set
}

// CPUsOf lists the CPUs in an affinity mask, in increasing order.
func CPUsOf(set *unix.CPUSet) []int {
	var cpus []int
	for c := 0; c < maxCPU; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}
