package proc

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Status is the part of /proc/PID/status benchrig uses. Memory figures are
// in bytes (the file gives kB).
type Status struct {
	Name  string
	State byte
	TGID  int
	PID   int
	PPID  int
	// UID holds the real, effective, saved and filesystem user IDs.
	UID [4]int
	// Threads is the thread count.
	Threads int
	// VmRSS is the resident set and VmHWM its peak ("high water mark"),
	// in bytes; both are 0 for a kernel thread or a zombie.
	VmRSS, VmHWM uint64
}

// Exited reports whether the status shows an exited process (see the
// package doc).
func (s Status) Exited() bool { return Stat{State: s.State}.Exited() }

// ResidentMemory is the resident set in bytes.
func (s Status) ResidentMemory() uint64 { return s.VmRSS }

// Status reads and parses /proc/PID/status.
func (fs FS) Status(pid int) (Status, error) {
	path := fs.pidPath(pid, "status")
	b, err := os.ReadFile(path)
	if err != nil {
		return Status{}, err
	}
	st, err := ParseStatus(b)
	if err != nil {
		return Status{}, fmt.Errorf("%s: %w", path, err)
	}
	return st, nil
}

// ParseStatus parses the text of a /proc/PID/status file ("Key:\tvalue"
// lines; unknown keys are skipped). Errors wrap ErrFormat.
func ParseStatus(b []byte) (Status, error) {
	var s Status
	sc := bufio.NewScanner(bytes.NewReader(b))
	seen := false
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		val = strings.TrimSpace(val)
		var err error
		switch key {
		case "Name":
			s.Name, seen = val, true
		case "State":
			if val == "" {
				return Status{}, fmt.Errorf("%w: status: empty State", ErrFormat)
			}
			s.State = val[0]
		case "Tgid":
			s.TGID, err = strconv.Atoi(val)
		case "Pid":
			s.PID, err = strconv.Atoi(val)
		case "PPid":
			s.PPID, err = strconv.Atoi(val)
		case "Uid":
			f := strings.Fields(val)
			if len(f) != 4 {
				return Status{}, fmt.Errorf("%w: status: Uid %q: want 4 IDs", ErrFormat, val)
			}
			for i := range f {
				if s.UID[i], err = strconv.Atoi(f[i]); err != nil {
					break
				}
			}
		case "Threads":
			s.Threads, err = strconv.Atoi(val)
		case "VmRSS":
			s.VmRSS, err = parseKB(val)
		case "VmHWM":
			s.VmHWM, err = parseKB(val)
		}
		if err != nil {
			return Status{}, fmt.Errorf("%w: status: %s %q: %w", ErrFormat, key, val, err)
		}
	}
	if !seen {
		return Status{}, fmt.Errorf("%w: status: no Name line", ErrFormat)
	}
	return s, nil
}

// parseKB parses "1234 kB" into bytes.
func parseKB(v string) (uint64, error) {
	num, unit, _ := strings.Cut(v, " ")
	n, err := strconv.ParseUint(num, 10, 64)
	if err != nil {
		return 0, err
	}
	if unit = strings.TrimSpace(unit); unit != "" && unit != "kB" {
		return 0, fmt.Errorf("unit %q, want kB", unit)
	}
	if n > (1<<64-1)/1024 {
		return 0, strconv.ErrRange
	}
	return n * 1024, nil
}
