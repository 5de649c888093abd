//go:build linux

package sample

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/benchrig/benchrig/internal/proc"
)

// legacyReader is the reader as it was before it kept descriptors open and
// walked the children files (commit 2a7ffe4): it lists /proc at every
// reading, opens, reads and closes every file, and finds the tree from the
// PPIDs in stat. It stays here as the reference the reader must agree with
// (TestReaderAgreesWithLegacy).
type legacyReader struct {
	fs       proc.FS
	root     string
	buf      []byte
	outside  map[int]uint64
	lastFull time.Time
}

func newLegacyReader(root string) (*legacyReader, error) {
	pfs, err := proc.NewFS(root)
	if err != nil {
		return nil, err
	}
	return &legacyReader{fs: pfs, root: root, buf: make([]byte, 4096)}, nil
}

// read reads the tree rooted at process root, which started at rootStart,
// with the trees of the further roots also (PID → start time) that still
// run, at time now; it reads PSS only when withPSS. Processes that vanish while it
// reads are skipped; an error is returned only when the process list cannot
// be read or the root's stat is unreadable for another reason than its
// exit.
func (r *legacyReader) read(root int, rootStart uint64, also map[int]uint64, withPSS bool, now time.Time) (tree, error) {
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
func (r *legacyReader) readPSS(t *tree, pid int) {
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
func (r *legacyReader) readSched(t *tree, pid, threads int) {
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
func (r *legacyReader) exists(elem ...string) bool {
	_, err := os.Stat(r.fs.Path(elem...))
	return err == nil
}
