package proc

import (
	"bytes"
	"fmt"
	"strconv"
	"time"
)

// Schedstat is the first field of /proc/PID/schedstat (or of a thread's
// /proc/PID/task/TID/schedstat): the time the task has spent running on a
// CPU, in nanoseconds, which is finer than the clock ticks of stat.
type Schedstat uint64

// Duration is the run time as a time.Duration.
func (s Schedstat) Duration() time.Duration { return time.Duration(s) }

// ReadSchedstat reads /proc/PID/schedstat into buf without allocating (a
// process with one thread: its only thread is the leader).
func (fs FS) ReadSchedstat(pid int, buf []byte) (Schedstat, error) {
	return ReadSchedstatFile(fs.pidPath(pid, "schedstat"), buf)
}

// ReadThreadSchedstat reads /proc/PID/task/TID/schedstat into buf.
func (fs FS) ReadThreadSchedstat(pid, tid int, buf []byte) (Schedstat, error) {
	return ReadSchedstatFile(fs.Root()+"/"+strconv.Itoa(pid)+"/task/"+strconv.Itoa(tid)+"/schedstat", buf)
}

// ReadSchedstatFile reads a schedstat file given by path.
func ReadSchedstatFile(path string, buf []byte) (Schedstat, error) {
	data, err := readSmall(path, buf)
	if err != nil {
		return 0, err
	}
	ns, err := ParseSchedstat(data)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return ns, nil
}

// ParseSchedstat parses "run_ns wait_ns timeslices\n" and returns run_ns.
// Errors wrap ErrFormat.
func ParseSchedstat(data []byte) (Schedstat, error) {
	sp := bytes.IndexByte(data, ' ')
	if sp <= 0 || data[0] == '-' {
		return 0, fmt.Errorf("%w: schedstat %q", ErrFormat, data)
	}
	ns, err := atou(data[:sp])
	if err != nil {
		return 0, fmt.Errorf("%w: schedstat %q: %w", ErrFormat, data, err)
	}
	return Schedstat(ns), nil
}
