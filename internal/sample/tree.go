package sample

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/benchrig/benchrig/internal/proc"
)

// secondsPerTick converts the clock ticks of /proc/PID/stat to seconds:
// 1/USER_HZ.
const secondsPerTick = 1.0 / proc.UserHZ

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
	fs       proc.FS
	root     string // the mount point
	buf      []byte // for stat and schedstat files
	outside  map[int]uint64
	lastFull time.Time
}

// newReader opens the procfs mounted at root.
func newReader(root string) (*reader, error) {
	pfs, err := proc.NewFS(root)
	if err != nil {
		return nil, fmt.Errorf("open procfs at %q: %w", root, err)
	}
	return &reader{fs: pfs, root: root, buf: make([]byte, 4096)}, nil
}

// rootStart returns the start time of process pid, to identify it later, or
// an error when it does not exist or has already exited.
func (r *reader) rootStart(pid int) (uint64, error) {
	st, err := r.fs.ReadStat(pid, r.buf)
	if err != nil {
		return 0, fmt.Errorf("root process %d: %w", pid, err)
	}
	if st.Exited() {
		return 0, fmt.Errorf("root process %d has already exited (state %c)", pid, st.State)
	}
	return st.StartTime, nil
}

// read reads the tree rooted at process root, which started at rootStart,
// with the trees of the further roots also (PID → start time) that still
// run, at time now; it reads PSS only when withPSS. Processes that vanish while it
// reads are skipped; an error is returned only when the process list cannot
// be read or the root's stat is unreadable for another reason than its
// exit.
func (r *reader) read(root int, rootStart uint64, also map[int]uint64, withPSS bool, now time.Time) (tree, error) {
	all, err := r.fs.PIDs()
	if err != nil {
		return tree{}, fmt.Errorf("list processes in %q: %w", r.root, err)
	}
	full := now.Sub(r.lastFull) >= fullScanEvery
	if full {
		r.lastFull = now
	}
	stats := make(map[int]proc.Stat)
	children := make(map[int][]int)
	outside := make(map[int]uint64, len(r.outside))
	for _, pid := range all {
		if start, ok := r.outside[pid]; ok && !full {
			outside[pid] = start
			continue
		}
		st, err := r.fs.ReadStat(pid, r.buf)
		if err != nil {
			if pid == root && !proc.Vanished(err) {
				return tree{}, fmt.Errorf("read stat of root process %d: %w", root, err)
			}
			continue // exited since the listing, or unreadable: not ours to judge
		}
		stats[pid] = st
		children[st.PPID] = append(children[st.PPID], pid)
	}

	rs, ok := stats[root]
	if !ok || rs.StartTime != rootStart || rs.Exited() {
		return tree{rootGone: true}, nil
	}

	t := tree{procs: make(map[int]procInfo), sched: make(map[int]uint64), pssRead: withPSS}
	queue := []int{root}
	for pid, start := range also {
		if st, ok := stats[pid]; ok && st.StartTime == start && !st.Exited() {
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
		user, system := st.TreeCPUTicks()
		info := procInfo{
			ppid:   st.PPID,
			start:  st.StartTime,
			zombie: st.Exited(),
			user:   user,
			system: system,
		}
		t.procs[pid] = info
		if info.zombie {
			continue // no memory or threads left; CPU counted above
		}
		t.processes++
		t.threads += st.NumThreads
		t.rss += st.ResidentMemory()
		if withPSS {
			r.readPSS(&t, pid)
		}
		r.readSched(&t, pid, st.NumThreads)
	}
	for pid, st := range stats {
		if _, in := t.procs[pid]; !in {
			outside[pid] = st.StartTime
		}
	}
	r.outside = outside
	t.alive = outside
	return t, nil
}

// readPSS adds the PSS of process pid to t, or flags PSS as unavailable.
func (r *reader) readPSS(t *tree, pid int) {
	sm, err := r.fs.SmapsRollup(pid)
	switch {
	case err == nil:
		t.pss += sm.Pss
	case proc.Vanished(err) && !r.exists(strconv.Itoa(pid)):
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
		ns, err := r.fs.ReadSchedstat(pid, r.buf)
		switch {
		case err == nil:
			t.sched[pid] = uint64(ns)
		case !proc.Vanished(err) || r.exists(strconv.Itoa(pid)):
			t.schedUnavailable = true
		}
		return
	}
	tids, err := r.fs.Threads(pid)
	if err != nil {
		if !proc.Vanished(err) || r.exists(strconv.Itoa(pid)) {
			t.schedUnavailable = true
		}
		return
	}
	for _, tid := range tids {
		ns, err := r.fs.ReadThreadSchedstat(pid, tid, r.buf)
		switch {
		case err == nil:
			t.sched[tid] = uint64(ns)
		case !proc.Vanished(err) || r.exists(strconv.Itoa(pid), "task", strconv.Itoa(tid)):
			t.schedUnavailable = true
		}
	}
}

// exists reports whether a path under the procfs mount exists.
func (r *reader) exists(elem ...string) bool {
	_, err := os.Stat(r.fs.Path(elem...))
	return err == nil
}
