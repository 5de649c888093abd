package sample

import (
	"fmt"
	"time"

	"github.com/benchrig/benchrig/internal/proc"
)

// secondsPerTick converts the clock ticks of /proc/PID/stat to seconds:
// 1/USER_HZ.
const secondsPerTick = 1.0 / proc.UserHZ

// fullScanEvery is how often a reader without children files (scan mode)
// reads the stat file of every process on the machine, not only of the tree
// and of new PIDs (see reader).
const fullScanEvery = 10 * time.Second

// rescanEvery is how often a reader that walks the children files lists
// every process on the machine all the same, as a safety net (see reader).
const rescanEvery = 30 * time.Second

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
// concurrent use; close releases its descriptors.
//
// It finds the tree in one of two ways, chosen at the first reading:
//
//   - walk mode, where the kernel has /proc/PID/task/TID/children
//     (CONFIG_PROC_CHILDREN): from the roots down, reading each tree
//     process's stat and the children files of its threads. A process the
//     children files list is the tree's when its stat names a tree process
//     as its parent; a process of the last reading that the walk did not
//     reach is read again and kept when its parent is the tree's (the
//     children files are not exact while the tree changes). Every
//     rescanEvery the reader lists and reads every process on the machine
//     instead, as a safety net.
//   - scan mode, the fallback: every process on the machine is listed and
//     the tree found from the PPIDs in stat. A process outside the tree
//     never joins it (a process's parent changes only when the parent
//     exits, and the new parent, a subreaper or init, is an ancestor, so it
//     was in the tree only if the process already was), so the reader
//     remembers the PIDs it found outside and reads their stat again only
//     every fullScanEvery; it reads every tick the tree's processes and
//     PIDs it has not seen. A PID reused within that time by a new child of
//     the tree is found at the next full scan; its CPU is not lost
//     meanwhile, since a process new to the tree brings all its counters
//     (and if it exits first, its parent's cutime does).
//
// In both, the files of the tree's processes (stat, and per thread
// schedstat and children, smaps_rollup once PSS is read) stay open from one
// reading to the next and are read with pread (see procFiles), up to
// maxHeld descriptors; a held descriptor names one process, so a PID reused
// by another never reads as the old process.
type reader struct {
	fs   proc.FS
	root string // the mount point
	buf  []byte // for stat, schedstat and smaps_rollup files
	kbuf []byte // for children files; grows
	// hold says descriptors are kept: root is a procfs (a fixture tree of
	// plain files is read by path, so that tests can rewrite it).
	hold    bool
	held    int // descriptors held
	maxHeld int
	mode    readMode

	// procs holds the files of the tree's processes, by PID; gen is the
	// reading that last found each in the tree.
	procs map[int]*procFiles
	gen   uint64

	// Per reading, reused: every stat read, the files opened for processes
	// not yet in procs, the tree's PIDs in the order found, children lists.
	stats   map[int]proc.Stat
	pending map[int]*proc.File
	members []int
	kids    []int

	// scan mode
	outside  map[int]uint64
	lastFull time.Time
	ppidKids map[int][]int
}

// readMode is how the reader finds the tree.
type readMode int

const (
	modeUnknown readMode = iota
	modeWalk
	modeScan
)

func (m readMode) String() string {
	switch m {
	case modeWalk:
		return "walk"
	case modeScan:
		return "scan"
	}
	return "unknown"
}

// defaultMaxHeld bounds the descriptors a reader holds: benchrig's load
// generators need theirs (thousands of connections).
const defaultMaxHeld = 4096

// newReader opens the procfs mounted at root.
func newReader(root string) (*reader, error) {
	pfs, err := proc.NewFS(root)
	if err != nil {
		return nil, fmt.Errorf("open procfs at %q: %w", root, err)
	}
	return &reader{
		fs:       pfs,
		root:     root,
		buf:      make([]byte, 4096),
		kbuf:     make([]byte, 1024),
		hold:     proc.IsProcfs(root),
		maxHeld:  defaultMaxHeld,
		procs:    make(map[int]*procFiles),
		stats:    make(map[int]proc.Stat),
		pending:  make(map[int]*proc.File),
		ppidKids: make(map[int][]int),
	}, nil
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
// run, at time now; it reads PSS only when withPSS. Processes that vanish
// while it reads are skipped; an error is returned only when the process
// list cannot be read or the root's stat is unreadable for another reason
// than its exit.
func (r *reader) read(root int, rootStart uint64, also map[int]uint64, withPSS bool, now time.Time) (tree, error) {
	if r.mode == modeUnknown {
		r.mode = modeScan
		if f, err := proc.OpenFile(r.threadPath(root, root, "children"), false); err == nil {
			f.Close()
			r.mode, r.lastFull = modeWalk, now
		}
	}
	r.gen++
	clear(r.stats)
	r.members = r.members[:0]
	defer r.endReading()

	var gone bool
	var err error
	switch {
	case r.mode == modeWalk && now.Sub(r.lastFull) < rescanEvery:
		gone, err = r.walk(root, rootStart, also)
		if err == errNoChildren {
			r.mode = modeScan
			return r.read(root, rootStart, also, withPSS, now)
		}
	case r.mode == modeWalk:
		r.lastFull = now
		gone, err = r.scan(root, rootStart, also, true)
	default:
		full := now.Sub(r.lastFull) >= fullScanEvery
		if full {
			r.lastFull = now
		}
		gone, err = r.scan(root, rootStart, also, full)
	}
	if err != nil || gone {
		return tree{rootGone: gone}, err
	}
	return r.sum(withPSS), nil
}

// sum reads the threads (and PSS when withPSS) of the tree's processes
// found by walk or scan and adds up the reading.
func (r *reader) sum(withPSS bool) tree {
	t := tree{
		procs:   make(map[int]procInfo, len(r.members)),
		sched:   make(map[int]uint64, len(r.members)),
		alive:   make(map[int]uint64, len(r.stats)-len(r.members)+len(r.outside)),
		pssRead: withPSS,
	}
	for _, pid := range r.members {
		st := r.stats[pid]
		user, system := st.TreeCPUTicks()
		info := procInfo{ppid: st.PPID, start: st.StartTime, zombie: st.Exited(), user: user, system: system}
		t.procs[pid] = info
		if info.zombie {
			continue // no memory or threads left; CPU counted above
		}
		t.processes++
		t.threads += st.NumThreads
		t.rss += st.ResidentMemory()
		p := r.procs[pid]
		if withPSS {
			r.readPSS(&t, p)
		}
		r.readSched(&t, p, st)
	}
	for pid, st := range r.stats {
		if !r.inTree(pid) {
			t.alive[pid] = st.StartTime
		}
	}
	if r.mode == modeScan {
		for pid, start := range r.outside {
			t.alive[pid] = start
		}
	}
	return t
}

// walk finds the tree from its roots down through the children files (walk
// mode). It returns errNoChildren when a children file is missing.
func (r *reader) walk(root int, rootStart uint64, also map[int]uint64) (rootGone bool, err error) {
	st, ok, err := r.stat(root)
	if err != nil {
		return false, fmt.Errorf("read stat of root process %d: %w", root, err)
	}
	if !ok || st.StartTime != rootStart || st.Exited() {
		return true, nil
	}
	r.accept(root)
	for pid, start := range also {
		if st, ok, _ := r.stat(pid); ok && st.StartTime == start && !st.Exited() && !r.inTree(pid) {
			r.accept(pid)
		}
	}
	for done := 0; ; {
		for ; done < len(r.members); done++ {
			pid := r.members[done]
			if err := r.children(pid); err != nil {
				return false, err
			}
			for _, c := range r.kids {
				if r.inTree(c) {
					continue
				}
				if st, ok, _ := r.stat(c); ok && r.inTree(st.PPID) {
					r.accept(c)
				}
			}
		}
		// Processes of the last reading the walk did not reach.
		for pid, p := range r.procs {
			if p.gen == r.gen {
				continue
			}
			if st, ok, _ := r.stat(pid); ok && r.inTree(st.PPID) {
				r.accept(pid)
			}
		}
		if done == len(r.members) {
			return false, nil
		}
	}
}

// scan finds the tree from the PPIDs of every process listed (scan mode,
// and walk mode's safety net); without full it skips the PIDs it found
// outside the tree before.
func (r *reader) scan(root int, rootStart uint64, also map[int]uint64, full bool) (rootGone bool, err error) {
	all, err := r.fs.PIDs()
	if err != nil {
		return false, fmt.Errorf("list processes in %q: %w", r.root, err)
	}
	for k, v := range r.ppidKids {
		r.ppidKids[k] = v[:0]
	}
	outside := make(map[int]uint64, len(r.outside))
	for _, pid := range all {
		if start, ok := r.outside[pid]; ok && !full {
			outside[pid] = start
			continue
		}
		st, ok, err := r.stat(pid)
		if err != nil && pid == root {
			return false, fmt.Errorf("read stat of root process %d: %w", root, err)
		}
		if ok {
			r.ppidKids[st.PPID] = append(r.ppidKids[st.PPID], pid)
		}
	}
	rs, ok := r.stats[root]
	if !ok || rs.StartTime != rootStart || rs.Exited() {
		return true, nil
	}
	r.accept(root)
	for pid, start := range also {
		if st, ok := r.stats[pid]; ok && st.StartTime == start && !st.Exited() && !r.inTree(pid) {
			r.accept(pid)
		}
	}
	for i := 0; i < len(r.members); i++ {
		for _, c := range r.ppidKids[r.members[i]] {
			if !r.inTree(c) { // also guards against a PPID cycle in a corrupt fixture
				r.accept(c)
			}
		}
	}
	if r.mode == modeScan {
		for pid, st := range r.stats {
			if !r.inTree(pid) {
				outside[pid] = st.StartTime
			}
		}
		r.outside = outside
	}
	return false, nil
}
