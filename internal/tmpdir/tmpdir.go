// Package tmpdir makes benchrig's temporary directories (target logs,
// ephemeral PostgreSQL and redis-server data, a suite run's logs) and
// removes the ones a killed benchrig left behind. Each directory's name
// carries the PID of the process that made it, so a later run can tell a
// live run's directory from an orphan:
//
//	dir, err := tmpdir.New("", "pg")   // /tmp/benchrig-pg-4242-123456
//	removed, err := tmpdir.Sweep("")   // orphans of dead processes
package tmpdir

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// New creates a directory benchrig-KIND-PID-* in dir (os.TempDir when
// empty). kind is a short lower-case word.
func New(dir, kind string) (string, error) {
	return os.MkdirTemp(dir, fmt.Sprintf("benchrig-%s-%d-", kind, os.Getpid()))
}

var nameRE = regexp.MustCompile(`^benchrig-[a-z]+-([0-9]+)-[0-9]+$`)

// Sweep removes the directories New made in dir (os.TempDir when empty)
// for processes that no longer run: what a benchrig killed with SIGKILL
// could not remove itself. A directory whose process is alive, or whose
// name New did not make, is left alone. It returns the paths removed.
func Sweep(dir string) ([]string, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, e := range entries {
		m := nameRE.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			continue
		}
		pid, err := strconv.Atoi(m[1])
		if err != nil || pid == os.Getpid() || alive(pid) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if err := os.RemoveAll(p); err == nil {
			removed = append(removed, p)
		}
	}
	return removed, nil
}

// alive reports whether a process with this PID exists (zombies count as
// gone).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == ')' {
			return i+2 >= len(b) || b[i+2] != 'Z'
		}
	}
	return true
}
