package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/benchrig/benchrig/internal/proc"
)

// Version is a cgroup hierarchy's version.
type Version int

// The two cgroup versions.
const (
	V1 Version = 1 // one hierarchy per controller (or per set of them)
	V2 Version = 2 // the unified hierarchy
)

// v1Controllers are the v1 hierarchies a group is made in.
var v1Controllers = []string{"cpu", "cpuacct", "memory", "pids"}

// v2Controllers are the controllers a v2 group needs enabled.
var v2Controllers = []string{"cpu", "memory", "pids"}

// sharedParent is the group made under a hierarchy's root when benchrig
// itself runs at the root, so that its groups are not made there directly.
const sharedParent = "benchrig"

// Hierarchy is a usable cgroup hierarchy, v1 or v2, and benchrig's own
// group in it, under which Create makes groups. Make one with Detect. It is
// safe for concurrent use.
type Hierarchy struct {
	version Version
	// parents maps each controller (v1) or "" (v2) to the directory under
	// which groups are made: benchrig's own group, or sharedParent under
	// the root when benchrig runs at the root.
	parents map[string]string
	// shared holds the parents that are sharedParent directories, made by
	// Create when missing and removed by Remove when empty.
	shared map[string]bool
	// owner and ownerStart name the process whose groups these are.
	owner      int
	ownerStart uint64
	procFS     proc.FS
}

// Version returns the hierarchy's version.
func (h *Hierarchy) Version() Version { return h.version }

// Parent returns the directory under which groups are made for controller
// (one of cpu, cpuacct, memory, pids; ignored on v2), or "" when there is
// none.
func (h *Hierarchy) Parent(controller string) string {
	if h.version == V2 {
		controller = ""
	}
	return h.parents[controller]
}

// Detect finds the cgroup hierarchy benchrig can limit a target with, from
// /proc/self/cgroup and /proc/self/mountinfo: v1 when the cpu, cpuacct,
// memory and pids controllers are mounted and benchrig's group in each is
// writable, else v2 when a cgroup2 mount offers the cpu, memory and pids
// controllers in benchrig's group and they are, or may be, enabled for its
// children in cgroup.subtree_control (Detect enables them when the kernel
// allows). When neither is usable, the error says why for each version:
// not root, not delegated, a controller missing or not enabled.
func Detect() (*Hierarchy, error) {
	return DetectAt("/proc/self/cgroup", "/proc/self/mountinfo", "")
}

// DetectAt is Detect reading the given files in place of
// /proc/self/cgroup and /proc/self/mountinfo, with root prepended to every
// mount point they name: tests point it at a fixture tree.
func DetectAt(procSelfCgroup, mountinfo, root string) (*Hierarchy, error) {
	own, err := readProcCgroup(procSelfCgroup)
	if err != nil {
		return nil, err
	}
	mounts, err := readMountinfo(mountinfo)
	if err != nil {
		return nil, err
	}
	h1, err1 := detectV1(own, mounts, root)
	if err1 == nil {
		return h1, nil
	}
	h2, err2 := detectV2(own, mounts, root)
	if err2 == nil {
		return h2, nil
	}
	why := fmt.Sprintf("cgroup: no usable cgroup hierarchy to limit the target with: v1: %v; v2: %v", err1, err2)
	if uid := os.Geteuid(); uid != 0 {
		why += fmt.Sprintf(" (benchrig runs as uid %d, not root: run it as root, or in a cgroup delegated to this user)", uid)
	}
	return nil, errors.New(why)
}

// newHierarchy starts a Hierarchy owned by this process, named by its PID
// and start time so that RemoveStale can tell a live owner from a reused
// PID.
func newHierarchy(v Version) (*Hierarchy, error) {
	h := &Hierarchy{version: v, parents: map[string]string{}, shared: map[string]bool{}, owner: os.Getpid(), procFS: proc.Default()}
	st, err := h.procFS.Stat(h.owner)
	if err != nil {
		return nil, fmt.Errorf("read benchrig's own start time: %w", err)
	}
	h.ownerStart = st.StartTime
	return h, nil
}

func detectV1(own map[string]string, mounts []mount, root string) (*Hierarchy, error) {
	h, err := newHierarchy(V1)
	if err != nil {
		return nil, err
	}
	for _, c := range v1Controllers {
		m, ok := findMount(mounts, "cgroup", c)
		if !ok {
			return nil, fmt.Errorf("controller %s is not mounted as a v1 hierarchy", c)
		}
		if !m.rw {
			return nil, fmt.Errorf("the %s hierarchy at %s is mounted read-only", c, m.point)
		}
		path, ok := own[c]
		if !ok {
			return nil, fmt.Errorf("/proc/self/cgroup has no line for controller %s", c)
		}
		dir, atRoot, err := ownDir(root, m, path)
		if err != nil {
			return nil, err
		}
		if err := writable(dir); err != nil {
			return nil, err
		}
		if atRoot {
			dir = filepath.Join(dir, sharedParent)
			h.shared[dir] = true
		}
		h.parents[c] = dir
	}
	return h, nil
}

func detectV2(own map[string]string, mounts []mount, root string) (*Hierarchy, error) {
	m, ok := findMount(mounts, "cgroup2", "")
	if !ok {
		return nil, errors.New("no cgroup2 file system is mounted")
	}
	if !m.rw {
		return nil, fmt.Errorf("the cgroup2 file system at %s is mounted read-only", m.point)
	}
	path, ok := own[""]
	if !ok {
		return nil, errors.New(`/proc/self/cgroup has no "0::" line for the unified hierarchy`)
	}
	dir, atRoot, err := ownDir(root, m, path)
	if err != nil {
		return nil, err
	}
	have, err := readWords(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, c := range v2Controllers {
		if !have[c] {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s lacks controller %s (not delegated to benchrig's group, or bound to a v1 hierarchy)",
			filepath.Join(dir, "cgroup.controllers"), strings.Join(missing, ", "))
	}
	if err := writable(dir); err != nil {
		return nil, err
	}
	if err := enableControllers(dir, atRoot); err != nil {
		return nil, err
	}
	h, err := newHierarchy(V2)
	if err != nil {
		return nil, err
	}
	if atRoot {
		dir = filepath.Join(dir, sharedParent)
		h.shared[dir] = true
	}
	h.parents[""] = dir
	return h, nil
}

// enableControllers enables the v2 controllers for the children of dir
// where they are not already, explaining the kernel's refusal.
func enableControllers(dir string, atRoot bool) error {
	file := filepath.Join(dir, "cgroup.subtree_control")
	on, err := readWords(file)
	if err != nil {
		return err
	}
	var add []string
	for _, c := range v2Controllers {
		if !on[c] {
			add = append(add, "+"+c)
		}
	}
	if len(add) == 0 {
		return nil
	}
	value := strings.Join(add, " ")
	err = os.WriteFile(file, []byte(value), 0)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, syscall.EBUSY) && !atRoot:
		return fmt.Errorf("write %q to %s: %w: benchrig's group holds processes, and v2 enables controllers for the children of a group without any; run benchrig alone in a delegated group (systemd-run --scope -p Delegate=yes)", value, file, err)
	case errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM):
		return fmt.Errorf("write %q to %s: %w: not root, and the group is not delegated to this user", value, file, err)
	}
	return fmt.Errorf("write %q to %s: %w", value, file, err)
}

// writable checks that benchrig may make groups in dir.
func writable(dir string) error {
	if err := syscall.Access(dir, 2 /* W_OK */); err != nil {
		return fmt.Errorf("cannot make groups in %s: %w (not root, or not delegated)", dir, err)
	}
	return nil
}

// ownDir is the directory of benchrig's group path in mount m, and whether
// it is the hierarchy's root.
func ownDir(root string, m mount, path string) (string, bool, error) {
	rel := path
	if m.root != "/" {
		if path != m.root && !strings.HasPrefix(path, m.root+"/") {
			return "", false, fmt.Errorf("benchrig's group %s is outside the mount %s (root %s)", path, m.point, m.root)
		}
		rel = strings.TrimPrefix(path, m.root)
	}
	mp := filepath.Join(root, m.point)
	dir := filepath.Join(mp, rel)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return "", false, fmt.Errorf("benchrig's group %s is not a directory at %s", path, dir)
	}
	return dir, dir == mp, nil
}

// mount is one line of mountinfo.
type mount struct {
	root, point, fstype string
	rw                  bool
	super               map[string]bool // the super options: v1 names its controllers there
}

func findMount(ms []mount, fstype, controller string) (mount, bool) {
	for _, m := range ms {
		if m.fstype == fstype && (controller == "" || m.super[controller]) {
			return m, true
		}
	}
	return mount{}, false
}

// readMountinfo reads the cgroup and cgroup2 mounts of a mountinfo file
// (proc(5)): "id parent major:minor root point options [optional...] -
// fstype source super-options".
func readMountinfo(file string) ([]mount, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cgroup: read mount table: %w", err)
	}
	var ms []mount
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := -1
		for i, x := range f {
			if x == "-" && i >= 6 {
				sep = i
				break
			}
		}
		if sep < 0 || len(f) < sep+4 || (f[sep+1] != "cgroup" && f[sep+1] != "cgroup2") {
			continue
		}
		m := mount{root: unescape(f[3]), point: unescape(f[4]), fstype: f[sep+1], super: map[string]bool{}}
		for _, o := range strings.Split(f[5], ",") {
			m.rw = m.rw || o == "rw"
		}
		for _, o := range strings.Split(f[sep+3], ",") {
			m.super[o] = true
		}
		ms = append(ms, m)
	}
	return ms, sc.Err()
}

// unescape undoes mountinfo's octal escapes (\040 for a space).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// readProcCgroup reads /proc/PID/cgroup (cgroups(7)) into a map from each
// v1 controller, and "" for v2's line "0::path", to the group's path.
func readProcCgroup(file string) (map[string]string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("cgroup: read benchrig's own groups: %w", err)
	}
	own := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			own[""] = parts[2]
			continue
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c != "" {
				own[c] = parts[2]
			}
		}
	}
	return own, nil
}

// readWords reads a file of space-separated words into a set.
func readWords(file string) (map[string]bool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	set := map[string]bool{}
	for _, w := range strings.Fields(string(b)) {
		set[w] = true
	}
	return set, nil
}
