package cgroup

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Bounds of Limits, checked by Validate. A zero CPUs, Memory or Pids, and a
// nil Swap, mean no limit of that kind.
const (
	MinCPUs   = 0.01
	MaxCPUs   = 1024
	MinMemory = 4 << 20  // 4 MiB
	MaxMemory = 16 << 40 // 16 TiB
	MaxSwap   = 16 << 40 // 16 TiB
	MinPids   = 1
	MaxPids   = 4194304 // the kernel's PID_MAX_LIMIT
)

// Limits are what a target may use, as a container runtime's --cpus,
// --memory, --memory-swap and --pids-limit give them. Its JSON form
// (cpus, memory and swap in bytes, pids) is how a target's spec carries it.
type Limits struct {
	// CPUs is the CPU time allowed per wall-clock second, in cores
	// (1.5: one and a half cores), enforced by the CFS quota over a
	// 100 ms period. 0: no limit.
	CPUs float64 `json:"cpus,omitempty"`
	// Memory is the most memory the group may use, in bytes. 0: no limit.
	Memory int64 `json:"memory,omitempty"`
	// Swap is the swap the group may use beyond Memory, in bytes: nil
	// leaves the kernel's default, 0 allows none. Docker's --memory 512m
	// --memory-swap 512m is Memory 512 MiB and Swap 0. Swap needs Memory.
	Swap *int64 `json:"swap,omitempty"`
	// Pids is the most processes and threads the group may hold. 0: no
	// limit.
	Pids int64 `json:"pids,omitempty"`
}

// None reports whether l limits nothing.
func (l Limits) None() bool {
	return l.CPUs == 0 && l.Memory == 0 && l.Swap == nil && l.Pids == 0
}

// Validate reports the first limit out of its bounds, naming the field, the
// bound and what is accepted.
func (l Limits) Validate() error {
	switch {
	case math.IsNaN(l.CPUs) || l.CPUs < 0 || (l.CPUs > 0 && l.CPUs < MinCPUs):
		return fmt.Errorf("cgroup: CPUs %g is below the minimum %g; give 0 for no limit or %g–%d cores", l.CPUs, MinCPUs, MinCPUs, MaxCPUs)
	case l.CPUs > MaxCPUs:
		return fmt.Errorf("cgroup: CPUs %g is above the maximum %d; give 0 for no limit or %g–%d cores", l.CPUs, MaxCPUs, MinCPUs, MaxCPUs)
	case l.Memory < 0 || (l.Memory > 0 && l.Memory < MinMemory):
		return fmt.Errorf("cgroup: Memory %s is below the minimum %s; give 0 for no limit or %s–%s", FormatMemory(l.Memory), FormatMemory(MinMemory), FormatMemory(MinMemory), FormatMemory(MaxMemory))
	case l.Memory > MaxMemory:
		return fmt.Errorf("cgroup: Memory %s is above the maximum %s; give 0 for no limit or %s–%s", FormatMemory(l.Memory), FormatMemory(MaxMemory), FormatMemory(MinMemory), FormatMemory(MaxMemory))
	case l.Swap != nil && *l.Swap < 0:
		return fmt.Errorf("cgroup: Swap %s is below the minimum 0; give 0 for no swap or up to %s beyond Memory", FormatMemory(*l.Swap), FormatMemory(MaxSwap))
	case l.Swap != nil && *l.Swap > MaxSwap:
		return fmt.Errorf("cgroup: Swap %s is above the maximum %s; give 0 for no swap or up to %s beyond Memory", FormatMemory(*l.Swap), FormatMemory(MaxSwap), FormatMemory(MaxSwap))
	case l.Swap != nil && l.Memory == 0:
		return errors.New("cgroup: Swap is set but Memory is not; swap is limited beyond a memory limit, so give Memory too")
	case l.Pids < 0 || (l.Pids > 0 && l.Pids < MinPids):
		return fmt.Errorf("cgroup: Pids %d is below the minimum %d; give 0 for no limit or %d–%d", l.Pids, MinPids, MinPids, MaxPids)
	case l.Pids > MaxPids:
		return fmt.Errorf("cgroup: Pids %d is above the maximum %d; give 0 for no limit or %d–%d", l.Pids, MaxPids, MinPids, MaxPids)
	}
	return nil
}

// cpuPeriodUS is the CFS period written with every CPU limit.
const cpuPeriodUS = 100000

// quotaUS is the CFS quota for cpus cores per cpuPeriodUS, at least the
// kernel's minimum of 1 ms.
func quotaUS(cpus float64) int64 {
	q := int64(math.Round(cpus * cpuPeriodUS))
	return max(q, 1000)
}

// memUnits are ParseMemory's suffixes, longest first, all 1024-based.
var memUnits = []struct {
	suffix string
	shift  uint
}{
	{"kib", 10}, {"mib", 20}, {"gib", 30}, {"tib", 40},
	{"kb", 10}, {"mb", 20}, {"gb", 30}, {"tb", 40},
	{"ki", 10}, {"mi", 20}, {"gi", 30}, {"ti", 40},
	{"k", 10}, {"m", 20}, {"g", 30}, {"t", 40}, {"b", 0},
}

// ParseMemory reads a size in bytes: a whole number with an optional unit,
// case-insensitive. Every unit is 1024-based, as in docker's --memory:
// k, kb, ki, kib are KiB (1024); m, mb, mi, mib are MiB (1024²); g, gb, gi,
// gib are GiB (1024³); t, tb, ti, tib are TiB (1024⁴); b or no unit is
// bytes. So "512m", "512MiB" and "536870912" are the same. Negative
// numbers, fractions, values beyond an int64 and anything else are
// rejected with a message saying what is accepted.
func ParseMemory(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	shift := uint(0)
	for _, u := range memUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, shift = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.shift
			break
		}
	}
	const accepted = "want a whole number of bytes with an optional unit: 536870912, 512m, 512MiB, 2g, 2GiB"
	if t == "" {
		return 0, fmt.Errorf("cgroup: memory size %q has no number; %s", s, accepted)
	}
	if t[0] == '-' {
		return 0, fmt.Errorf("cgroup: memory size %q is negative; %s", s, accepted)
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return 0, fmt.Errorf("cgroup: memory size %q is not a size; %s", s, accepted)
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n > math.MaxInt64>>shift {
		return 0, fmt.Errorf("cgroup: memory size %q is too large: the most is %d bytes (8 EiB)", s, int64(math.MaxInt64))
	}
	return n << shift, nil
}

// FormatMemory writes n bytes in the largest unit that divides it exactly
// (B, KiB, MiB, GiB, TiB), in a form ParseMemory reads back; a negative n
// is written in bytes.
func FormatMemory(n int64) string {
	if n > 0 {
		for _, u := range []struct {
			name  string
			shift uint
		}{{"TiB", 40}, {"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
			if n&(1<<u.shift-1) == 0 {
				return strconv.FormatInt(n>>u.shift, 10) + u.name
			}
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}
