package sample

// cpuAccount keeps the tree's cumulative CPU figures monotonic while its
// processes come and go.
//
// Each process contributes utime+stime+cutime+cstime: its own CPU plus that
// of the children it has reaped. Summed over the live tree, that total does
// not drop when a child exits and its parent (also in the tree) reaps it: the
// child's time moves into the parent's cutime/cstime. The account follows the
// sum through per-PID deltas from one reading to the next:
//
//   - a process seen in both readings adds the growth of its counters
//     (negative growth is ignored);
//   - a process new to the tree adds all of its counters (it was forked in
//     the tree since the last reading, so all its CPU was spent there);
//   - a process that exited (gone from /proc, or its PID reused) subtracts
//     its last counters, because its reaper's cutime/cstime now include
//     them: without the subtraction they would be counted twice;
//   - a process that left the tree but still runs (re-parented outside)
//     neither adds nor subtracts: what it used in the tree stays counted,
//     what it uses afterwards is not the tree's.
//
// The running sum can still dip: when the reaper's counters are read just
// before the reaping and the child's stat just after (the reads of one
// sample are not atomic), or when an exited process was reaped outside the
// tree (it left the tree and exited between two readings). The reported
// figure is therefore the running sum's high-water mark: a transient dip is
// absorbed when the reaper's counters catch up at the next reading, and the
// figure never decreases. After a permanent dip (the second case, rare) the
// figure undercounts the CPU that follows by at most the exited process's
// last counters.
type cpuAccount struct {
	prev    map[int]procInfo
	runUser int64 // running sums in clock ticks; may dip
	runSys  int64
	cumUser int64 // high-water marks of the running sums: the reported figures
	cumSys  int64
}

// update folds the reading t into the account.
func (a *cpuAccount) update(t tree) {
	var dUser, dSys int64
	for pid, old := range a.prev {
		cur, inTree := t.procs[pid]
		start, alive := t.alive[pid]
		switch {
		case inTree && cur.start == old.start:
			dUser += growth(old.user, cur.user)
			dSys += growth(old.system, cur.system)
		case alive && start == old.start:
			// left the tree and still runs: keep what it used here
		default:
			// exited: its reaper now carries its counters
			dUser -= int64(old.user)
			dSys -= int64(old.system)
		}
	}
	for pid, cur := range t.procs {
		if old, ok := a.prev[pid]; !ok || old.start != cur.start {
			dUser += int64(cur.user)
			dSys += int64(cur.system)
		}
	}
	a.prev = t.procs
	a.runUser += dUser
	a.runSys += dSys
	a.cumUser = max(a.cumUser, a.runUser)
	a.cumSys = max(a.cumSys, a.runSys)
}

// seconds returns the cumulative user and system CPU seconds.
func (a *cpuAccount) seconds() (user, system float64) {
	return float64(a.cumUser) * secondsPerTick, float64(a.cumSys) * secondsPerTick
}

// growth returns cur-old, or 0 when the counter went backwards.
func growth(old, cur uint64) int64 {
	if cur < old {
		return 0
	}
	return int64(cur - old)
}

// schedAccount accumulates the scheduler run time of the tree's threads. A
// thread's schedstat holds only its own run time and nothing moves into the
// parent when it exits, so plain per-thread deltas are right here: a thread
// seen before adds its growth, a new thread adds all of its run time, and a
// thread that exited adds nothing more. A counter that went backwards means
// the TID was reused by a new thread, which then counts as new.
type schedAccount struct {
	prev map[int]uint64
	cum  uint64
}

// update folds one reading (TID → run time in ns) into the account.
func (a *schedAccount) update(cur map[int]uint64) {
	for tid, v := range cur {
		if old, ok := a.prev[tid]; ok && v >= old {
			a.cum += v - old
		} else {
			a.cum += v
		}
	}
	a.prev = cur
}
