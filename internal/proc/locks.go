package proc

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// FileLock is one lock of /proc/locks.
type FileLock struct {
	// Kind is FLOCK, POSIX or OFDLCK.
	Kind string
	// Write is true for an exclusive (write) lock.
	Write bool
	// PID is the process that took the lock (0 or -1 when it is in
	// another PID namespace, or for an OFD lock).
	PID int
	// Major, Minor and Inode identify the locked file.
	Major, Minor uint32
	Inode        uint64
}

// Locks reads /proc/locks: the file locks held on the machine (waiters,
// the "->" lines, are left out).
func (fs FS) Locks() ([]FileLock, error) {
	b, err := os.ReadFile(fs.Path("locks"))
	if err != nil {
		return nil, err
	}
	return ParseLocks(b)
}

// ParseLocks parses the text of /proc/locks, e.g.
//
//	1: FLOCK  ADVISORY  WRITE 4242 08:01:1311 0 EOF
//
// Lines that are waiters or do not parse are skipped.
func ParseLocks(b []byte) ([]FileLock, error) {
	var out []FileLock
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || f[1] == "->" {
			continue
		}
		l := FileLock{Kind: f[1], Write: f[3] == "WRITE"}
		pid, err := strconv.Atoi(f[4])
		if err != nil {
			continue
		}
		l.PID = pid
		id := strings.Split(f[5], ":")
		if len(id) != 3 {
			continue
		}
		maj, err1 := strconv.ParseUint(id[0], 16, 32)
		min, err2 := strconv.ParseUint(id[1], 16, 32)
		ino, err3 := strconv.ParseUint(id[2], 10, 64)
		if err1 != nil || err2 != nil || err3 != nil {
			continue
		}
		l.Major, l.Minor, l.Inode = uint32(maj), uint32(min), ino
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("locks: %w", err)
	}
	return out, nil
}

// LockHolders returns the PIDs (> 0) holding a lock on the file with this
// device and inode.
func (fs FS) LockHolders(major, minor uint32, inode uint64) ([]int, error) {
	ls, err := fs.Locks()
	if err != nil {
		return nil, err
	}
	var out []int
	for _, l := range ls {
		if l.Major == major && l.Minor == minor && l.Inode == inode && l.PID > 0 {
			out = append(out, l.PID)
		}
	}
	return out, nil
}
