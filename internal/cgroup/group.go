package cgroup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// namePrefix begins the name of every group benchrig makes.
const namePrefix = "benchrig-"

// MaxNameLen is the longest name Create accepts.
const MaxNameLen = 64

// validName reports whether name is 1–MaxNameLen of a–z, 0–9 and -.
func validName(name string) bool {
	if len(name) == 0 || len(name) > MaxNameLen {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; !(c == '-' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// Group is a cgroup made by Create for one target: one directory on v2, one
// per controller hierarchy on v1 (cpu and cpuacct share one when mounted
// together). Its methods are safe for concurrent use.
type Group struct {
	h        *Hierarchy
	name     string            // the directory name: benchrig-<owner pid>-<owner start>-<name>
	dirs     map[string]string // controller (v1) or "" (v2) to directory
	order    []string          // the distinct directories, in the order made
	warnings []string

	mu      sync.Mutex
	removed bool
}

// testHookMkdir, when set, runs after Create makes each directory: the v2
// fixture tests fill it with the files the kernel would.
var testHookMkdir func(dir string) error

// Create makes the group benchrig-<owner pid>-<owner start time>-<name>
// under benchrig's own group (name: 1–64 of a–z, 0–9 and -), and writes l
// into it. v1 writes cpu.cfs_period_us (100000) and cpu.cfs_quota_us,
// memory.limit_in_bytes, memory.memsw.limit_in_bytes (Memory+Swap) when
// Swap is set and the kernel accounts swap, and pids.max; v2 writes cpu.max
// ("quota period"), memory.max, memory.swap.max and pids.max. A limit the
// kernel cannot apply is reported by Warnings, not an error. An error names
// the file and the value written; whatever Create made is removed again.
func (h *Hierarchy) Create(name string, l Limits) (*Group, error) {
	if !validName(name) {
		return nil, fmt.Errorf("cgroup: group name %q: want 1–%d of a–z, 0–9 and -", name, MaxNameLen)
	}
	if err := l.Validate(); err != nil {
		return nil, err
	}
	g := &Group{h: h, name: fmt.Sprintf("%s%d-%d-%s", namePrefix, h.owner, h.ownerStart, name), dirs: map[string]string{}}
	keys := v1Controllers
	if h.version == V2 {
		keys = []string{""}
	}
	for _, c := range keys {
		dir := filepath.Join(h.parents[c], g.name)
		g.dirs[c] = dir
		if slices.Contains(g.order, dir) {
			continue // cpu and cpuacct mounted together
		}
		if err := h.mkdir(dir); err != nil {
			g.cleanup()
			return nil, err
		}
		g.order = append(g.order, dir)
	}
	var err error
	if h.version == V1 {
		err = g.limitV1(l)
	} else {
		err = g.limitV2(l)
	}
	if err != nil {
		g.cleanup()
		return nil, err
	}
	return g, nil
}

// mkdir makes a group's directory, and its shared parent when that is
// missing (or was removed by another run's Remove in between).
func (h *Hierarchy) mkdir(dir string) error {
	parent := filepath.Dir(dir)
	for try := 0; ; try++ {
		if h.shared[parent] {
			err := os.Mkdir(parent, 0o755)
			if err == nil && testHookMkdir != nil {
				err = testHookMkdir(parent)
			}
			if err != nil && !errors.Is(err, os.ErrExist) {
				return fmt.Errorf("cgroup: make %s: %w", parent, err)
			}
			if h.version == V2 {
				if err := enableControllers(parent, false); err != nil {
					return fmt.Errorf("cgroup: %w", err)
				}
			}
		}
		err := os.Mkdir(dir, 0o755)
		if errors.Is(err, os.ErrNotExist) && h.shared[parent] && try < 10 {
			continue
		}
		if err != nil {
			return fmt.Errorf("cgroup: make %s: %w", dir, err)
		}
		if testHookMkdir != nil {
			return testHookMkdir(dir)
		}
		return nil
	}
}

func (g *Group) cleanup() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = g.Remove(ctx)
}

func (g *Group) limitV1(l Limits) error {
	if l.CPUs > 0 {
		if err := write(g.dirs["cpu"], "cpu.cfs_period_us", strconv.Itoa(cpuPeriodUS)); err != nil {
			return err
		}
		if err := write(g.dirs["cpu"], "cpu.cfs_quota_us", strconv.FormatInt(quotaUS(l.CPUs), 10)); err != nil {
			return err
		}
	}
	mem := g.dirs["memory"]
	if l.Memory > 0 {
		if err := write(mem, "memory.limit_in_bytes", strconv.FormatInt(l.Memory, 10)); err != nil {
			return err
		}
	}
	if l.Swap != nil {
		if exists(mem, "memory.memsw.limit_in_bytes") {
			if err := write(mem, "memory.memsw.limit_in_bytes", strconv.FormatInt(l.Memory+*l.Swap, 10)); err != nil {
				return err
			}
		} else {
			g.warnings = append(g.warnings, "swap is not limited: the kernel has no swap accounting (no memory.memsw.limit_in_bytes; boot with swapaccount=1)")
		}
	}
	if l.Pids > 0 {
		return write(g.dirs["pids"], "pids.max", strconv.FormatInt(l.Pids, 10))
	}
	return nil
}

func (g *Group) limitV2(l Limits) error {
	dir := g.dirs[""]
	if l.CPUs > 0 {
		if err := write(dir, "cpu.max", fmt.Sprintf("%d %d", quotaUS(l.CPUs), cpuPeriodUS)); err != nil {
			return err
		}
	}
	if l.Memory > 0 {
		if err := write(dir, "memory.max", strconv.FormatInt(l.Memory, 10)); err != nil {
			return err
		}
	}
	if l.Swap != nil {
		if exists(dir, "memory.swap.max") {
			if err := write(dir, "memory.swap.max", strconv.FormatInt(*l.Swap, 10)); err != nil {
				return err
			}
		} else {
			g.warnings = append(g.warnings, "swap is not limited: the kernel has no swap accounting (no memory.swap.max)")
		}
	}
	if l.Pids > 0 {
		return write(dir, "pids.max", strconv.FormatInt(l.Pids, 10))
	}
	return nil
}

// Name returns the group's directory name.
func (g *Group) Name() string { return g.name }

// Version returns the version of the group's hierarchy.
func (g *Group) Version() Version { return g.h.version }

// Path returns the group's directory for controller (cpu, cpuacct, memory
// or pids); on v2, the one directory whatever controller is.
func (g *Group) Path(controller string) string {
	if g.h.version == V2 {
		return g.dirs[""]
	}
	return g.dirs[controller]
}

// Dirs returns the group's distinct directories: one on v2, one per
// mounted v1 hierarchy.
func (g *Group) Dirs() []string { return slices.Clone(g.order) }

// Warnings returns what Create could not apply, one sentence each.
func (g *Group) Warnings() []string { return slices.Clone(g.warnings) }

// AddPID moves process pid, with all its threads, into the group. Its
// children forked afterwards are born in the group.
func (g *Group) AddPID(pid int) error {
	return addPID(g.order, pid)
}

func addPID(dirs []string, pid int) error {
	for _, dir := range dirs {
		if err := write(dir, "cgroup.procs", strconv.Itoa(pid)); err != nil {
			return err
		}
	}
	return nil
}

// PIDs returns the processes in the group, over all its directories.
func (g *Group) PIDs() ([]int, error) {
	var pids []int
	for _, dir := range g.order {
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("cgroup: %w", err)
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 0 && !slices.Contains(pids, pid) {
				pids = append(pids, pid)
			}
		}
	}
	return pids, nil
}

// Remove kills every process in the group with SIGKILL (v2 through
// cgroup.kill when the kernel has it), reading cgroup.procs again until it
// is empty, then removes the group's directories (retrying while the kernel
// still reports them busy), and the shared benchrig parent group when that
// is left empty. It gives up with an error when ctx ends first. Removing a
// removed group does nothing.
func (g *Group) Remove(ctx context.Context) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.removed {
		return nil
	}
	if g.h.version == V2 && exists(g.dirs[""], "cgroup.kill") {
		_ = write(g.dirs[""], "cgroup.kill", "1")
	}
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		pids, err := g.PIDs()
		if err != nil {
			return err
		}
		if len(pids) == 0 {
			break
		}
		for _, pid := range pids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if err := sleep(ctx, wait); err != nil {
			return fmt.Errorf("cgroup: remove %s: processes %v still in it: %w", g.name, pids, err)
		}
	}
	for i := len(g.order) - 1; i >= 0; i-- {
		if err := rmdir(ctx, g.order[i]); err != nil {
			return err
		}
	}
	for _, dir := range g.order {
		if parent := filepath.Dir(dir); g.h.shared[parent] {
			_ = syscall.Rmdir(parent) // busy while other groups are in it
		}
	}
	g.removed = true
	return nil
}

// rmdir removes a group's directory, retrying while the kernel reports it
// busy (the last processes are still exiting), until ctx ends.
func rmdir(ctx context.Context, dir string) error {
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		err := syscall.Rmdir(dir)
		if err == nil || errors.Is(err, syscall.ENOENT) {
			return nil
		}
		if !errors.Is(err, syscall.EBUSY) {
			return fmt.Errorf("cgroup: remove %s: %w", dir, err)
		}
		if err := sleep(ctx, wait); err != nil {
			return fmt.Errorf("cgroup: remove %s: still busy: %w", dir, err)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// write writes value to a control file, the way the kernel wants it: one
// write, no newline. The error names the file and the value.
func write(dir, file, value string) error {
	path := filepath.Join(dir, file)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err == nil {
		_, err = f.WriteString(value)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return fmt.Errorf("cgroup: write %q to %s: %w", value, path, err)
	}
	return nil
}

func exists(dir, file string) bool {
	_, err := os.Stat(filepath.Join(dir, file))
	return err == nil
}
