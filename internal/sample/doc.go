// Package sample measures the resources of a server under test from /proc:
// the CPU, memory, threads and processes of a process tree, sampled at a
// fixed interval through the whole run, and the figures derived from those
// samples (server CPU seconds, cores, % of machine, µs per request, RSS and
// PSS per phase).
//
// The sampler takes a PID, not a target: the tree is that process and all
// its descendants, found again at every sample (through the children files
// of the tree's threads, /proc/PID/task/TID/children, or from the PPIDs in
// /proc/*/stat where the kernel has no such files), so children that come
// and go (a PostgreSQL backend per connection) are counted while they live. Processes that vanish while a
// sample is read are skipped. Only /proc is read (cgroups are not assumed to
// be delegated); Config.Root points the sampler at a fixture tree in tests.
//
// # Cost
//
// The sampler runs on the machine it measures, so it keeps its own cost
// small (bench/sampler-overhead.sh measures it): it keeps the files of the
// tree's processes open and reads each with one pread per sample (stat, and
// per thread schedstat and children), parsing without allocating; it finds
// new children in the children files rather than by listing every process
// on the machine (which it still does every 30 s, as a safety net); and it
// reads PSS, for which the kernel walks every mapped page, only every
// Config.PSSInterval (5 s by default) and at every Mark. A held descriptor
// names one process: once that process is reaped, reading it fails with
// ESRCH, so a reused PID is never taken for the old process. The reader
// holds at most 4096 descriptors and reads the files of further processes
// by path.
//
// # CPU accounting
//
// A process contributes utime+stime+cutime+cstime: its own CPU and that of the
// children it has reaped, so the tree's sum does not drop when a backend
// exits and its parent reaps it. The sampler follows that sum with per-PID
// deltas (a PID is identified with its start time, against reuse): growth of
// known processes and the whole counters of new ones are added, the last
// counters of exited processes are subtracted (their reaper's cutime now
// holds them), and processes that left the tree alive are dropped without
// either. The reported figure is the high-water mark of that running sum, so
// it never decreases, and a momentary dip (a child's exit seen before its
// parent's cutime grows) is absorbed at the next sample. Clock ticks are
// converted with USER_HZ as procfs defines it (100 on Linux).
//
// The schedstat run time (Sample.SchedRunNS) is summed per thread with
// plain deltas, at nanosecond resolution; it misses reaped children and
// threads that lived between two samples, so it is a cross-check only.
//
// # Phases and windows
//
// Every sample carries the phase current when it was taken. Mark switches
// phase and samples at once, so a phase runs from its own first sample to the
// first sample of the next phase. Derive measures CPU between those two edge
// samples and takes memory medians per phase:
//
//	s, err := sample.Start(ctx, sample.Config{PID: pid})
//	if err != nil {
//		return err
//	}
//	s.Mark(sample.PhaseBaseline)
//	// … baseline, warm-up …
//	s.Mark(sample.PhaseLoad)
//	// … load …
//	s.Mark(sample.PhaseRecovery)
//	// … recovery …
//	samples := s.Stop()
//	fig := sample.Derive(samples, sample.Window{Phase: sample.PhaseLoad}, completed, proc.OnlineCount())
//
// If the root process exits, the sampler stops and says so in Status; the
// samples taken until then are kept.
package sample
