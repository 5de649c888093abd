package proc

import (
	"bytes"
	"os"
	"strings"
)

// Cmdline reads /proc/PID/cmdline: the process's arguments (empty for a
// kernel thread or a zombie, and for a moment during an exec: a parent
// that started a program may read it empty at first).
func (fs FS) Cmdline(pid int) ([]string, error) {
	b, err := os.ReadFile(fs.pidPath(pid, "cmdline"))
	if err != nil {
		return nil, err
	}
	b = bytes.TrimRight(b, "\x00")
	if len(b) == 0 {
		return nil, nil
	}
	return strings.Split(string(b), "\x00"), nil
}

// Exe reads the /proc/PID/exe link: the path of the program the process
// runs (needs the right to ptrace it: the same user, or root).
func (fs FS) Exe(pid int) (string, error) {
	return os.Readlink(fs.pidPath(pid, "exe"))
}
