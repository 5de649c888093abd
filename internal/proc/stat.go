package proc

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"strconv"
)

// UserHZ is the kernel's USER_HZ: the clock ticks per second of the CPU
// times and start time in /proc/PID/stat. It is 100 on every Linux
// platform Go supports (procfs assumes the same).
const UserHZ = 100

// pageSize is the size of a memory page, for RSS in pages.
var pageSize = uint64(os.Getpagesize())

// Stat is the part of /proc/PID/stat benchrig uses (proc(5) field numbers
// in brackets).
type Stat struct {
	PID int // [1]
	// Comm is the command name [2], at most 15 bytes. ReadStat leaves it
	// empty (it would allocate).
	Comm  string
	State byte // [3] R, S, D, T, t, Z, X, x, I, …
	PPID  int  // [4]
	PGRP  int  // [5] process group
	// Session is the session ID [6].
	Session int
	// UTime and STime are the user and system CPU of the process in clock
	// ticks [14, 15]; CUTime and CSTime those of the children it has
	// reaped [16, 17] (signed in the kernel's format; never negative, a
	// negative value reads as 0).
	UTime, STime, CUTime, CSTime uint64
	// NumThreads is the thread count [20].
	NumThreads int
	// StartTime is when the process started, in clock ticks after boot
	// [22]. With the PID it identifies one process across PID reuse.
	StartTime uint64
	// RSSPages is the resident set in pages [24].
	RSSPages uint64
}

// Exited reports whether the reading shows a process that has exited: a
// zombie (Z) or one being torn down (X, x). See the package doc.
func (s Stat) Exited() bool { return s.State == 'Z' || s.State == 'X' || s.State == 'x' }

// CPUTime is the process's own user+system CPU in seconds.
func (s Stat) CPUTime() float64 { return float64(s.UTime+s.STime) / UserHZ }

// TreeCPUTicks is the process's own CPU plus that of the children it has
// reaped, in clock ticks: user and system.
func (s Stat) TreeCPUTicks() (user, system uint64) { return s.UTime + s.CUTime, s.STime + s.CSTime }

// ResidentMemory is the resident set in bytes.
func (s Stat) ResidentMemory() uint64 { return s.RSSPages * pageSize }

// Stat reads and parses /proc/PID/stat, command name included.
func (fs FS) Stat(pid int) (Stat, error) {
	path := fs.pidPath(pid, "stat")
	b, err := readSmall(path, make([]byte, 4096))
	if err != nil {
		return Stat{}, err
	}
	st, err := ParseStat(b)
	if err != nil {
		return Stat{}, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

// ReadStat reads and parses /proc/PID/stat into buf (4 KiB is plenty: the
// line is a few hundred bytes) without allocating; Comm stays empty. It is
// the sampler's hot path: one open-read-close per process per tick.
func (fs FS) ReadStat(pid int, buf []byte) (Stat, error) {
	return ReadStatFile(fs.pidPath(pid, "stat"), buf)
}

// ReadStatFile is ReadStat of a stat file given by path (a process's or a
// thread's: /proc/PID/task/TID/stat).
func ReadStatFile(path string, buf []byte) (Stat, error) {
	b, err := readSmall(path, buf)
	if err != nil {
		return Stat{}, err
	}
	st, err := parseStat(b, false)
	if err != nil {
		return Stat{}, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

// ParseStat parses the text of a /proc/PID/stat file. The command name is
// in parentheses and may itself hold spaces and parentheses, so the fields
// are read after the last ')'. Errors wrap ErrFormat.
func ParseStat(b []byte) (Stat, error) { return parseStat(b, true) }

func parseStat(data []byte, withComm bool) (Stat, error) {
	open := bytes.IndexByte(data, '(')
	r := bytes.LastIndexByte(data, ')')
	if open < 1 || r < open || r+2 > len(data) {
		return Stat{}, fmt.Errorf("%w: stat: no (comm)", ErrFormat)
	}
	var st Stat
	pid, err := atoi(bytes.TrimSpace(data[:open]))
	if err != nil || pid < 0 {
		return Stat{}, fmt.Errorf("%w: stat: pid %q", ErrFormat, bytes.TrimSpace(data[:open]))
	}
	st.PID = pid
	if withComm {
		st.Comm = string(data[open+1 : r])
	}
	rest := data[r+2:]
	// Field k of the rest is field k+3 of proc(5).
	for k := 0; k <= 21; k++ {
		sp := bytes.IndexByte(rest, ' ')
		if sp < 0 {
			sp = len(rest)
			if k < 21 {
				return Stat{}, fmt.Errorf("%w: stat: only %d fields after comm", ErrFormat, k+1)
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
			if len(f) != 1 || f[0] < 'A' || f[0] > 'z' || (f[0] > 'Z' && f[0] < 'a') {
				return Stat{}, fmt.Errorf("%w: stat: state %q, want one letter", ErrFormat, f)
			}
			st.State = f[0]
		case 1:
			st.PPID, err = atoi(f)
		case 2:
			st.PGRP, err = atoi(f)
		case 3:
			st.Session, err = atoi(f)
		case 11:
			st.UTime, err = atou(f)
		case 12:
			st.STime, err = atou(f)
		case 13:
			st.CUTime, err = atou(f)
		case 14:
			st.CSTime, err = atou(f)
		case 17:
			st.NumThreads, err = atoi(f)
		case 19:
			st.StartTime, err = atou(f)
		case 21:
			st.RSSPages, err = atou(bytes.TrimRight(f, "\n"))
		}
		if err != nil {
			return Stat{}, fmt.Errorf("%w: stat field %d: %w", ErrFormat, k+3, err)
		}
	}
	return st, nil
}

// Exited reports whether process pid has exited by the package's one
// definition: no stat file (or ESRCH reading it), or state Z, X or x. Any
// other read error counts as not exited.
func (fs FS) Exited(pid int) bool {
	var buf [512]byte
	st, err := fs.ReadStat(pid, buf[:])
	if err != nil {
		return Vanished(err)
	}
	return st.Exited()
}

// Alive is the negation of Exited for a positive pid; a pid ≤ 0 is never
// alive.
func (fs FS) Alive(pid int) bool { return pid > 0 && !fs.Exited(pid) }

// SameProcess reports whether pid is alive and is still the process that
// started at start (clock ticks after boot), not another that reused the
// PID.
func (fs FS) SameProcess(pid int, start uint64) bool {
	var buf [512]byte
	st, err := fs.ReadStat(pid, buf[:])
	return err == nil && !st.Exited() && st.StartTime == start
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
