// Package tmpdir makes benchrig's temporary directories (target logs,
// ephemeral PostgreSQL and redis-server data, a suite run's logs) and
// removes the ones a killed benchrig left behind.
//
// A directory is owned by a live run while that run holds an exclusive
// lock (flock) on its lock file, beside it (NAME.lock), made and locked
// before the directory itself: the kernel drops the lock when the process
// dies, however it dies, and no moment of a directory's life leaves it
// without a lock file for Sweep to judge it by. (A directory made by an
// older benchrig has its lock file inside, LockFile.) A PID alone cannot tell: a run in
// another PID namespace sharing /tmp (a container, unshare -p) has a PID
// that looks dead from here. The name still carries the maker's PID, so
// that a directory made before locks (or before its lock file existed) can
// be judged the old way:
//
//	dir, err := tmpdir.New("", "pg")   // /tmp/benchrig-pg-4242-123456, locked
//	defer tmpdir.Remove(dir)           // unlock and remove
//	removed, err := tmpdir.Sweep("")   // unlocked orphans of dead runs
package tmpdir

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/benchrig/benchrig/internal/proc"
)

// LockFile is the name of the lock file an older benchrig made inside its
// directories; New's is the directory's name plus LockSuffix, beside it.
const LockFile = ".benchrig-owner.lock"

// LockSuffix makes the name of a directory's lock file from its own.
const LockSuffix = ".lock"

// legacyAge is how old a directory without a lock file must be before Sweep
// judges it by its PID alone: younger, it may be one New is still making
// (the lock file follows the directory by microseconds).
const legacyAge = time.Minute

// held maps the directories this process made to their locked files. The
// lock lives as long as the descriptor, so it must stay open; Remove closes
// it, and New drops the entries of directories removed by other means.
var held = struct {
	sync.Mutex
	m map[string]*os.File
}{m: map[string]*os.File{}}

// New creates a directory benchrig-KIND-PID-* in dir (os.TempDir when
// empty), locked for the life of this process or until Remove. kind is a
// short lower-case word.
func New(dir, kind string) (string, error) {
	return newDir(dir, kind, os.Getpid())
}

// newDir is New with the PID to put in the name (tests fake another
// namespace's).
func newDir(dir, kind string, pid int) (string, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	for range 100 {
		path := filepath.Join(dir, fmt.Sprintf("benchrig-%s-%d-%d", kind, pid, rand.Uint32()))
		f, err := os.OpenFile(path+LockSuffix, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_CLOEXEC, 0o644)
		if errors.Is(err, os.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("lock %s: %w", path, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			os.Remove(path + LockSuffix)
			return "", fmt.Errorf("lock %s: %w", path, err)
		}
		if err := os.Mkdir(path, 0o700); err != nil {
			os.Remove(path + LockSuffix)
			f.Close()
			if errors.Is(err, os.ErrExist) {
				continue
			}
			return "", err
		}
		fmt.Fprintf(f, "%d\n", os.Getpid())
		held.Lock()
		defer held.Unlock()
		for p, lf := range held.m {
			if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
				lf.Close()
				os.Remove(p + LockSuffix)
				delete(held.m, p)
			}
		}
		held.m[path] = f
		return path, nil
	}
	return "", fmt.Errorf("make a directory benchrig-%s-%d-* in %s: 100 names taken", kind, pid, dir)
}

// Remove unlocks a directory New made and removes it with its contents.
func Remove(path string) error {
	err := os.RemoveAll(path)
	held.Lock()
	if f, ok := held.m[path]; ok {
		os.Remove(path + LockSuffix) // still locked: no Sweep takes it meanwhile
		f.Close()
		delete(held.m, path)
	}
	held.Unlock()
	return err
}

var nameRE = regexp.MustCompile(`^benchrig-[a-z]+-([0-9]+)-[0-9]+(\.lock)?$`)

// Sweep removes the directories New made in dir (os.TempDir when empty)
// that no live run owns: what a benchrig killed with SIGKILL could not
// remove itself. A directory is removed only when nobody holds its lock
// and the PID in its name is not alive here; one without a lock file
// (made by an older benchrig) only when, in addition, it is over a minute
// old. A directory whose name New did not make is left alone. It returns
// the paths removed.
func Sweep(dir string) ([]string, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	fs := proc.Default()
	var removed []string
	for _, e := range entries {
		m := nameRE.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() == (m[2] != "") {
			continue // not ours: a directory, or a lock file beside one
		}
		pid, err := strconv.Atoi(m[1])
		if err != nil || pid == os.Getpid() || fs.Alive(pid) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if m[2] != "" {
			sweepLoneLock(p)
			continue
		}
		if sweepLocked(p) {
			removed = append(removed, p)
		}
	}
	return removed, nil
}

// sweepLoneLock removes lock file p of a dead run when no directory goes
// with it (the run died between the two) and nobody holds it.
func sweepLoneLock(p string) {
	if _, err := os.Stat(strings.TrimSuffix(p, LockSuffix)); !errors.Is(err, os.ErrNotExist) {
		return // its directory's sweep takes it
	}
	f, err := os.OpenFile(p, os.O_RDWR|syscall.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
		os.Remove(p)
	}
}

// sweepLocked takes the lock of directory p and, holding it, removes p
// (and its lock file). It reports whether p was removed: not when another
// process holds the lock, nor for a young directory without a lock file.
func sweepLocked(p string) bool {
	if f, err := os.OpenFile(p+LockSuffix, os.O_RDWR|syscall.O_CLOEXEC, 0); err == nil {
		defer f.Close()
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
			return false // a live run owns it
		}
		err := os.RemoveAll(p)
		os.Remove(p + LockSuffix)
		return err == nil
	}
	f, err := os.OpenFile(filepath.Join(p, LockFile), os.O_RDWR|syscall.O_CLOEXEC, 0)
	if errors.Is(err, os.ErrNotExist) {
		fi, serr := os.Stat(p)
		if serr != nil || time.Since(fi.ModTime()) < legacyAge {
			return false
		}
		return os.RemoveAll(p) == nil
	}
	if err != nil {
		return false
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false // a live run owns it
	}
	return os.RemoveAll(p) == nil
}
