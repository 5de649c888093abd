package sample

import (
	"errors"
	"os"
	"strconv"
	"syscall"

	"github.com/benchrig/benchrig/internal/proc"
)

// procFiles are the open files of one process of the tree, kept from one
// reading to the next.
type procFiles struct {
	pid int
	// start is the start time the process had when its stat file was
	// opened: a file read by path (a fixture) that shows another start
	// time reads a new process with the same PID.
	start uint64
	gen   uint64 // the last reading that found it in the tree
	stat  *proc.File
	smaps *proc.File // opened at the first PSS reading
	// threads holds the files of each thread, by increasing TID; a process
	// with one thread has the leader only (TID = PID), without listing its
	// task directory.
	threads []threadFiles
	// relist says a thread's file vanished: list the task directory again.
	relist bool
}

// threadFiles are the files of one thread, opened at their first use.
type threadFiles struct {
	tid             int
	sched, children *proc.File
}

// errNoChildren says a children file is missing where its thread exists:
// the kernel has no CONFIG_PROC_CHILDREN (the reader falls back to scan
// mode).
var errNoChildren = errors.New("no children file")

// stat returns the stat of process pid at this reading: read once, through
// its held file when the tree had it at the last reading, else from a file
// opened now (kept in r.pending until accept or the end of the reading).
// ok is false when the process has exited (its file vanished) or, with
// err, when its stat could not be read.
func (r *reader) stat(pid int) (st proc.Stat, ok bool, err error) {
	if st, ok := r.stats[pid]; ok {
		return st, true, nil
	}
	if p := r.procs[pid]; p != nil && p.stat != nil {
		st, err := p.stat.ReadStat(r.buf)
		if err == nil && st.StartTime == p.start {
			r.stats[pid] = st
			return st, true, nil
		}
		// Exited (ESRCH through a held descriptor), or the PID names
		// another process now (a file read by path): forget the old one,
		// and read whatever has the PID now.
		r.drop(pid)
		if err != nil && !proc.Vanished(err) {
			return proc.Stat{}, false, err
		}
	}
	f, err := r.open(r.pidPath(pid, "stat"))
	if err != nil {
		if proc.Vanished(err) {
			return proc.Stat{}, false, nil
		}
		return proc.Stat{}, false, err
	}
	st, err = f.ReadStat(r.buf)
	if err != nil {
		r.closeFile(f)
		if proc.Vanished(err) {
			return proc.Stat{}, false, nil
		}
		return proc.Stat{}, false, err
	}
	r.stats[pid] = st
	r.closeFile(r.pending[pid])
	r.pending[pid] = f
	return st, true, nil
}

// accept adds process pid, whose stat this reading has read, to the tree.
func (r *reader) accept(pid int) {
	p := r.procs[pid]
	if p == nil {
		p = &procFiles{pid: pid, start: r.stats[pid].StartTime}
		r.procs[pid] = p
	}
	if p.stat == nil {
		p.stat = r.pending[pid]
		delete(r.pending, pid)
	}
	p.gen = r.gen
	r.members = append(r.members, pid)
}

// inTree reports whether this reading has found process pid in the tree.
func (r *reader) inTree(pid int) bool {
	p := r.procs[pid]
	return p != nil && p.gen == r.gen
}

// children sets r.kids to the children that the children files of the
// threads of tree process pid list. When a thread's file vanished (it
// exited), the task directory is listed again at once and the threads new
// in it read too.
func (r *reader) children(pid int) error {
	r.kids = r.kids[:0]
	st, p := r.stats[pid], r.procs[pid]
	if st.Exited() && st.NumThreads <= 1 {
		return nil // a zombie's children have been re-parented
	}
	_ = r.syncThreads(p, st) // a process that vanished lists no children
	if err := r.threadChildren(p, false); err != nil || !p.relist {
		return err
	}
	if r.relist(p) != nil {
		return nil
	}
	return r.threadChildren(p, true)
}

// threadChildren appends to r.kids the children of p's threads (with
// onlyNew, of those whose children file is not open yet).
func (r *reader) threadChildren(p *procFiles, onlyNew bool) error {
	for i := range p.threads {
		th := &p.threads[i]
		if th.children == nil {
			f, err := r.open(r.threadPath(p.pid, th.tid, "children"))
			if err != nil {
				if r.gone(err, nil, strconv.Itoa(p.pid), "task", strconv.Itoa(th.tid)) {
					p.relist = true
					continue
				}
				return errNoChildren
			}
			th.children = f
		} else if onlyNew {
			continue
		}
		kids, err := th.children.ReadChildren(&r.kbuf, r.kids)
		switch {
		case err == nil:
			r.kids = kids
		case r.gone(err, th.children, strconv.Itoa(p.pid), "task", strconv.Itoa(th.tid)):
			p.relist = true
		default:
			return errNoChildren
		}
	}
	return nil
}

// relist lists p's task directory again.
func (r *reader) relist(p *procFiles) error {
	tids, err := r.fs.Threads(p.pid)
	if err != nil {
		return err
	}
	p.relist = false
	r.setThreads(p, tids)
	return nil
}

// syncThreads makes p's thread list that of its stat reading st: the
// leader alone for one thread, else the task directory's, listed again
// when the thread count changed or a thread's file vanished. Threads that
// stay keep their files.
func (r *reader) syncThreads(p *procFiles, st proc.Stat) error {
	if st.NumThreads <= 1 {
		if len(p.threads) == 1 && p.threads[0].tid == p.pid {
			return nil
		}
		r.setThreads(p, []int{p.pid})
		return nil
	}
	if len(p.threads) == st.NumThreads && !p.relist {
		return nil
	}
	return r.relist(p)
}

// setThreads replaces p's threads with tids (increasing), keeping the files
// of the threads in both and closing those of the others.
func (r *reader) setThreads(p *procFiles, tids []int) {
	old := p.threads
	next := make([]threadFiles, 0, len(tids))
	i := 0
	for _, tid := range tids {
		for i < len(old) && old[i].tid < tid {
			r.closeThread(&old[i])
			i++
		}
		if i < len(old) && old[i].tid == tid {
			next = append(next, old[i])
			i++
			continue
		}
		next = append(next, threadFiles{tid: tid})
	}
	for ; i < len(old); i++ {
		r.closeThread(&old[i])
	}
	p.threads = next
}

// readSched adds the scheduler run time of each thread of p to t, or flags
// schedstat as unavailable. When a thread's file vanished (it exited), the
// task directory is listed again at once and the threads new in it read
// too.
func (r *reader) readSched(t *tree, p *procFiles, st proc.Stat) {
	if err := r.syncThreads(p, st); err != nil {
		if !r.gone(err, nil, strconv.Itoa(p.pid)) {
			t.schedUnavailable = true
		}
		return
	}
	r.threadSched(t, p)
	if p.relist && st.NumThreads > 1 && r.relist(p) == nil {
		r.threadSched(t, p)
	}
}

// threadSched reads the schedstat of p's threads not read yet at this
// reading.
func (r *reader) threadSched(t *tree, p *procFiles) {
	for i := range p.threads {
		th := &p.threads[i]
		if _, done := t.sched[th.tid]; done {
			continue
		}
		if th.sched == nil {
			f, err := r.open(r.threadPath(p.pid, th.tid, "schedstat"))
			if err != nil {
				if r.gone(err, nil, strconv.Itoa(p.pid), "task", strconv.Itoa(th.tid)) {
					p.relist = true
				} else {
					t.schedUnavailable = true
				}
				continue
			}
			th.sched = f
		}
		ns, err := th.sched.ReadSchedstat(r.buf)
		switch {
		case err == nil:
			t.sched[th.tid] = uint64(ns)
		case r.gone(err, th.sched, strconv.Itoa(p.pid), "task", strconv.Itoa(th.tid)):
			p.relist = true
		default:
			t.schedUnavailable = true
		}
	}
}

// readPSS adds the PSS of p to t, or flags PSS as unavailable.
func (r *reader) readPSS(t *tree, p *procFiles) {
	if p.smaps == nil {
		f, err := r.open(r.pidPath(p.pid, "smaps_rollup"))
		if err != nil {
			if !r.gone(err, nil, strconv.Itoa(p.pid)) {
				t.pssUnavailable = true
			}
			return
		}
		p.smaps = f
	}
	pss, err := p.smaps.ReadPss(r.buf)
	switch {
	case err == nil:
		t.pss += pss
	case r.gone(err, p.smaps, strconv.Itoa(p.pid)):
		// exited while being read: it holds no memory any more
	default:
		t.pssUnavailable = true
	}
}

// gone reports whether err, from opening or reading f (nil: opening) of
// the process or thread at path elem, says that process or thread has
// exited: ESRCH through a held descriptor, or a vanished file whose
// directory is gone too.
func (r *reader) gone(err error, f *proc.File, elem ...string) bool {
	if !proc.Vanished(err) {
		return false
	}
	if f != nil && f.Held() && errors.Is(err, syscall.ESRCH) {
		return true
	}
	return !r.exists(elem...)
}

// exists reports whether a path under the procfs mount exists.
func (r *reader) exists(elem ...string) bool {
	_, err := os.Stat(r.fs.Path(elem...))
	return err == nil
}

func (r *reader) pidPath(pid int, name string) string {
	return r.fs.Root() + "/" + strconv.Itoa(pid) + "/" + name
}

func (r *reader) threadPath(pid, tid int, name string) string {
	return r.fs.Root() + "/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(tid) + "/" + name
}

// open opens a file of the procfs, held while the reader may hold more.
func (r *reader) open(path string) (*proc.File, error) {
	f, err := proc.OpenFile(path, r.hold && r.held < r.maxHeld)
	if err == nil && f.Held() {
		r.held++
	}
	return f, err
}

func (r *reader) closeFile(f *proc.File) {
	if f != nil && f.Held() {
		r.held--
	}
	f.Close()
}

func (r *reader) closeThread(th *threadFiles) {
	r.closeFile(th.sched)
	r.closeFile(th.children)
	th.sched, th.children = nil, nil
}

// drop closes the files of process pid and forgets it.
func (r *reader) drop(pid int) {
	p := r.procs[pid]
	if p == nil {
		return
	}
	r.closeFile(p.stat)
	r.closeFile(p.smaps)
	for i := range p.threads {
		r.closeThread(&p.threads[i])
	}
	delete(r.procs, pid)
}

// endReading closes the files opened for processes this reading did not
// find in the tree, and those of the processes that left it.
func (r *reader) endReading() {
	for pid, f := range r.pending {
		r.closeFile(f)
		delete(r.pending, pid)
	}
	for pid, p := range r.procs {
		if p.gen != r.gen {
			r.drop(pid)
		}
	}
}

// close closes every file the reader holds.
func (r *reader) close() {
	r.gen++ // no process is in the tree of a reading yet to come
	r.endReading()
}
