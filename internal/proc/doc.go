// Package proc is benchrig's one reader of the Linux process filesystem:
// /proc/PID/stat, status, smaps_rollup, schedstat, the task and fd
// directories, the parent links that make a process tree, the listening
// sockets of /proc/net/tcp and tcp6 (asked of the kernel's netlink socket
// diagnostics instead when the FS is the machine's /proc), and /proc/locks.
// It also holds the CPU-list notation and thread pinning
// (sched_setaffinity), which read the same tables.
//
// Like prometheus/procfs, every reader hangs off an FS made with NewFS, so
// tests point it at a fixture tree:
//
//	fs, err := proc.NewFS("/proc") // or a testdata directory
//	st, err := fs.Stat(pid)
//	if proc.Vanished(err) || st.Exited() { … }
//
// A reader that reads the same files at every tick (the sampler) keeps them
// open as Files and reads them with pread: one system call per reading, and
// a descriptor that names one process, so a reused PID is never misread.
//
// # What counts as exited
//
// A process has exited when its stat file is missing (ENOENT, or ESRCH
// while reading it: the process went away between open and read), or when
// its state is Z (zombie: exited, waiting for its parent to reap it), X or
// x (dead: being torn down). Any other error reading stat does not count as
// exited: the process may be there and only unreadable. FS.Exited and
// FS.Alive apply this one definition; Stat.Exited applies it to a reading.
package proc
