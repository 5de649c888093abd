package sample

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"syscall"
)

// The sampler reads the stat file of every new process on the machine and,
// at every tick, the stat and schedstat files of every process of the tree.
// It reads them itself, in one open-read-close with a reused buffer and
// without allocation, rather than through procfs (os.File with poller
// registration, a second read for EOF, fmt.Fscan or a regular expression),
// which made up half of its cost. procfile_test.go checks these parsers
// against procfs's ProcStat and ProcSchedstat.

// statFields are the fields of /proc/PID/stat that the sampler uses.
type statFields struct {
	state  byte // R, S, D, Z, X, …
	ppid   int
	utime  uint64 // clock ticks
	stime  uint64
	cutime uint64
	cstime uint64
	// threads is num_threads.
	threads int
	// start is starttime: clock ticks after boot.
	start uint64
	// rssPages is the resident set in pages.
	rssPages uint64
}

// errFormat says a /proc file does not have the documented layout.
var errFormat = errors.New("unexpected format")

// readSmall reads the file at path, which must be shorter than buf, in one
// read. It returns the error of the open or read as is (in an
// *os.PathError), so that callers can tell a vanished process (ENOENT,
// ESRCH) from other failures.
func readSmall(path string, buf []byte) ([]byte, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	n, err := syscall.Read(fd, buf)
	_ = syscall.Close(fd)
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	if n >= len(buf) {
		return nil, fmt.Errorf("%s: %w: longer than %d bytes", path, errFormat, len(buf))
	}
	return buf[:n], nil
}

// readStat reads and parses a /proc/PID/stat file using buf (4 KiB is
// plenty: the line is a few hundred bytes).
func readStat(path string, buf []byte) (statFields, error) {
	data, err := readSmall(path, buf)
	if err != nil {
		return statFields{}, err
	}
	st, err := parseStat(data)
	if err != nil {
		return statFields{}, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

// readSchedstat reads a /proc/PID/schedstat or /proc/PID/task/TID/schedstat
// file and returns its first field: the time spent running, in ns.
func readSchedstat(path string, buf []byte) (uint64, error) {
	data, err := readSmall(path, buf)
	if err != nil {
		return 0, err
	}
	ns, err := parseSchedstat(data)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return ns, nil
}

// parseSchedstat parses "run_ns wait_ns timeslices\n" and returns run_ns.
func parseSchedstat(data []byte) (uint64, error) {
	sp := bytes.IndexByte(data, ' ')
	if sp <= 0 || data[0] == '-' {
		return 0, fmt.Errorf("%w: schedstat %q", errFormat, data)
	}
	ns, err := atou(data[:sp])
	if err != nil {
		return 0, fmt.Errorf("%w: schedstat %q: %w", errFormat, data, err)
	}
	return ns, nil
}

// parseStat parses the content of /proc/PID/stat: "pid (comm) state ppid …".
// comm may hold spaces and parentheses, so the fields start after the last
// ')'.
func parseStat(data []byte) (statFields, error) {
	r := bytes.LastIndexByte(data, ')')
	if r < 0 || bytes.IndexByte(data, '(') < 0 || r+2 > len(data) {
		return statFields{}, fmt.Errorf("%w: stat: no (comm)", errFormat)
	}
	rest := data[r+2:]
	// Field k of the rest is field k+3 of proc(5): 0 state, 1 ppid,
	// 11 utime, 12 stime, 13 cutime, 14 cstime, 17 num_threads,
	// 19 starttime, 21 rss.
	var st statFields
	for k := 0; k <= 21; k++ {
		sp := bytes.IndexByte(rest, ' ')
		if sp < 0 {
			sp = len(rest)
			if k < 21 {
				return statFields{}, fmt.Errorf("%w: stat: only %d fields after comm", errFormat, k+1)
			}
		}
		f := rest[:sp]
		if sp < len(rest) {
			rest = rest[sp+1:]
		} else {
			rest = nil
		}
		var err error
		switch k {
		case 0:
			if len(f) != 1 {
				return statFields{}, fmt.Errorf("%w: stat: state %q", errFormat, f)
			}
			st.state = f[0]
		case 1:
			st.ppid, err = atoi(f)
		case 11:
			st.utime, err = atou(f)
		case 12:
			st.stime, err = atou(f)
		case 13:
			st.cutime, err = atou(f)
		case 14:
			st.cstime, err = atou(f)
		case 17:
			st.threads, err = atoi(f)
		case 19:
			st.start, err = atou(f)
		case 21:
			st.rssPages, err = atou(bytes.TrimRight(f, "\n"))
		}
		if err != nil {
			return statFields{}, fmt.Errorf("%w: stat field %d: %w", errFormat, k+3, err)
		}
	}
	return st, nil
}

// atou parses a decimal without allocating. A negative value (cutime and
// rss are signed in the kernel's format but never negative) reads as 0.
func atou(b []byte) (uint64, error) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, strconv.ErrSyntax
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, strconv.ErrSyntax
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, strconv.ErrRange
		}
		v = v*10 + d
	}
	if neg {
		return 0, nil
	}
	return v, nil
}

// atoi parses a decimal int without allocating.
func atoi(b []byte) (int, error) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) > 0 && b[0] == '-' {
		return 0, strconv.ErrSyntax
	}
	v, err := atou(b)
	if err != nil {
		return 0, err
	}
	if v > math.MaxInt {
		return 0, strconv.ErrRange
	}
	if neg {
		return -int(v), nil
	}
	return int(v), nil
}
