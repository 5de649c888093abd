package sample

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// secondsPerTick converts the clock ticks of /proc/PID/stat to seconds. It is
// 1/USER_HZ as procfs defines it (USER_HZ is 100 on every Linux platform Go
// supports); taking it from procfs keeps the two in agreement.
var secondsPerTick = procfs.ProcStat{UTime: 1}.CPUTime()

// fullScanEvery is how often the reader reads the stat file of every process
// on the machine, not only of the tree and of new PIDs (see reader).
const fullScanEvery = 10 * time.Second

// procInfo is what one reading holds of one process of the tree.
type procInfo struct {
	ppid int
	// start is the process's start time in clock ticks after boot. With
	// the PID it identifies one process across PID reuse.
	start  uint64
	zombie bool
	// user is utime+cutime and system is stime+cstime, in clock ticks: the
	// process's own CPU plus that of the children it has reaped.
	user   uint64
	system uint64
}

// tree is one reading of the process tree rooted at the sampled PID.
type tree struct {
	// rootGone says the root process has exited (no longer listed, a
	// zombie, or its PID now belongs to another process). The other fields
	// are then empty.
	rootGone bool
	// procs holds the tree's processes by PID, zombies included (their CPU
	// still counts until they are reaped).
	procs map[int]procInfo
	// alive maps the PIDs of the processes read outside the tree to their
	// start times, so the accounting can tell a process that left the tree
	// from one that exited.
	alive map[int]uint64

	rss, pss         uint64
	pssRead          bool // PSS was read at this reading
	pssUnavailable   bool
	threads          int
	processes        int
	sched            map[int]uint64 // TID → scheduler run time, ns
	schedUnavailable bool
}

// reader reads process trees from one procfs mount. It is not safe for
// concurrent use.
//
// Finding the tree takes the PPID of every process on the machine, and
// reading the stat file of hundreds of processes at every tick would be most
// of the sampler's cost. But a process outside the tree never joins it: a
// process's parent changes only when the parent exits, and the new parent (a
// subreaper or init) is an ancestor, so it was in the tree only if the
// process already was. The reader therefore remembers the PIDs it found
// outside the tree and reads their stat again only every fullScanEvery; it
// reads every tick the tree's processes and PIDs it has not seen. A PID
// reused within that time by a new child of the tree is found at the next
// full scan; its CPU is not lost meanwhile, since a process new to the tree
// brings all its counters (and if it exits first, its parent's cutime
// does).
type reader struct {
	fs       procfs.FS
	root     string // the mount point
	buf      []byte // for stat and schedstat files
	page     uint64 // bytes per page, for RSS
	outside  map[int]uint64
	lastFull time.Time
}

// newReader opens the procfs mounted at root.
func newReader(root string) (*reader, error) {
	pfs, err := procfs.NewFS(root)
	if err != nil {
		return nil, fmt.Errorf("open procfs at %q: %w", root, err)
	}
	return &reader{fs: pfs, root: root, buf: make([]byte, 4096), page: uint64(os.Getpagesize())}, nil
}

// path returns the path of a file under /proc/PID.
func (r *reader) path(pid int, name string) string {
	return r.root + "/" + strconv.Itoa(pid) + "/" + name
}

// rootStart returns the start time of process pid, to identify it later, or
// an error when it does not exist or has already exited.
func (r *reader) rootStart(pid int) (uint64, error) {
	st, err := readStat(r.path(pid, "stat"), r.buf)
	if err != nil {
		return 0, fmt.Errorf("root process %d: %w", pid, err)
	}
	if isZombie(st.state) {
		return 0, fmt.Errorf("root process %d has already exited (state %c)", pid, st.state)
	}
	return st.start, nil
}

// read reads the tree rooted at process root, which started at rootStart,
// with the trees of the further roots also (PID → start time) that still
// run, at time now; it reads PSS only when withPSS. Processes that vanish while it
// reads are skipped; an error is returned only when the process list cannot
// be read or the root's stat is unreadable for another reason than its
// exit.
func (r *reader) read(root int, rootStart uint64, also map[int]uint64, withPSS bool, now time.Time) (tree, error) {
	all, err := r.fs.AllProcs()
	if err != nil {
		return tree{}, fmt.Errorf("list processes in %q: %w", r.root, err)
	}
	full := now.Sub(r.lastFull) >= fullScanEvery
	if full {
		r.lastFull = now
	}
	type entry struct {
		statFields
		proc procfs.Proc
	}
	stats := make(map[int]entry)
	children := make(map[int][]int)
	outside := make(map[int]uint64, len(r.outside))
	for _, p := range all {
		if start, ok := r.outside[p.PID]; ok && !full {
			outside[p.PID] = start
			continue
		}
		st, err := readStat(r.path(p.PID, "stat"), r.buf)
		if err != nil {
			if p.PID == root && !vanished(err) {
				return tree{}, fmt.Errorf("read stat of root process %d: %w", root, err)
			}
			continue // exited since the listing, or unreadable: not ours to judge
		}
		stats[p.PID] = entry{st, p}
		children[st.ppid] = append(children[st.ppid], p.PID)
	}

	rs, ok := stats[root]
	if !ok || rs.start != rootStart || isZombie(rs.state) {
		return tree{rootGone: true}, nil
	}

	t := tree{procs: make(map[int]procInfo), sched: make(map[int]uint64), pssRead: withPSS}
	queue := []int{root}
	for pid, start := range also {
		if st, ok := stats[pid]; ok && st.start == start && !isZombie(st.state) {
			queue = append(queue, pid)
		}
	}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if _, seen := t.procs[pid]; seen {
			continue // guards against a PPID cycle in a corrupt fixture
		}
		queue = append(queue, children[pid]...)
		st := stats[pid]
		info := procInfo{
			ppid:   st.ppid,
			start:  st.start,
			zombie: isZombie(st.state),
			user:   st.utime + st.cutime,
			system: st.stime + st.cstime,
		}
		t.procs[pid] = info
		if info.zombie {
			continue // no memory or threads left; CPU counted above
		}
		t.processes++
		t.threads += st.threads
		t.rss += st.rssPages * r.page
		if withPSS {
			r.readPSS(&t, st.proc)
		}
		r.readSched(&t, pid, st.threads)
	}
	for pid, e := range stats {
		if _, in := t.procs[pid]; !in {
			outside[pid] = e.start
		}
	}
	r.outside = outside
	t.alive = outside
	return t, nil
}

// readPSS adds the PSS of process p to t, or flags PSS as unavailable.
func (r *reader) readPSS(t *tree, p procfs.Proc) {
	sm, err := p.ProcSMapsRollup()
	switch {
	case err == nil:
		t.pss += sm.Pss
	case vanished(err) && !r.exists(strconv.Itoa(p.PID)):
		// exited while being read: it holds no memory any more
	default:
		t.pssUnavailable = true
	}
}

// readSched adds the scheduler run time of each thread of process pid to t,
// or flags schedstat as unavailable. A process with one thread is read from
// /proc/PID/schedstat (its only thread is the leader, TID = PID), which
// saves listing its task directory.
func (r *reader) readSched(t *tree, pid, threads int) {
	if threads == 1 {
		ns, err := readSchedstat(r.path(pid, "schedstat"), r.buf)
		switch {
		case err == nil:
			t.sched[pid] = ns
		case !vanished(err) || r.exists(strconv.Itoa(pid)):
			t.schedUnavailable = true
		}
		return
	}
	tasks, err := r.fs.AllThreads(pid)
	if err != nil {
		if !vanished(err) || r.exists(strconv.Itoa(pid)) {
			t.schedUnavailable = true
		}
		return
	}
	for _, th := range tasks {
		task := filepath.Join(strconv.Itoa(pid), "task", strconv.Itoa(th.PID))
		ns, err := readSchedstat(filepath.Join(r.root, task, "schedstat"), r.buf)
		switch {
		case err == nil:
			t.sched[th.PID] = ns
		case !vanished(err) || r.exists(task):
			t.schedUnavailable = true
		}
	}
}

// exists reports whether a path under the procfs mount exists.
func (r *reader) exists(elem ...string) bool {
	_, err := os.Stat(filepath.Join(append([]string{r.root}, elem...)...))
	return err == nil
}

// vanished reports whether err says the process (or thread) is gone.
func vanished(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// isZombie reports whether a /proc state letter is that of an exited
// process not yet reaped (Z) or being reaped (X, x).
func isZombie(state byte) bool { return state == 'Z' || state == 'X' || state == 'x' }
