package proc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
)

// DefaultRoot is where the kernel's process filesystem is mounted.
const DefaultRoot = "/proc"

// ErrFormat says a /proc file does not have the documented layout. Parse
// errors wrap it.
var ErrFormat = errors.New("unexpected format")

// FS is a process filesystem mounted at a root directory. The zero FS reads
// DefaultRoot. It is a plain value, safe for concurrent use.
type FS struct {
	root string
}

// NewFS returns the process filesystem mounted at root (DefaultRoot when
// empty). It fails when root is not a readable directory.
func NewFS(root string) (FS, error) {
	if root == "" {
		root = DefaultRoot
	}
	fi, err := os.Stat(root)
	if err != nil {
		return FS{}, fmt.Errorf("proc: open %s: %w", root, err)
	}
	if !fi.IsDir() {
		return FS{}, fmt.Errorf("proc: %s is not a directory: want the mount point of a process filesystem", root)
	}
	return FS{root: root}, nil
}

// Default returns the FS at DefaultRoot, unchecked: reads fail later if
// /proc is not mounted.
func Default() FS { return FS{root: DefaultRoot} }

// Root is the mount point the FS reads.
func (fs FS) Root() string {
	if fs.root == "" {
		return DefaultRoot
	}
	return fs.root
}

// Path joins elem to the mount point.
func (fs FS) Path(elem ...string) string {
	return filepath.Join(append([]string{fs.Root()}, elem...)...)
}

// pidPath returns root/PID/name without filepath.Join's cleaning cost.
func (fs FS) pidPath(pid int, name string) string {
	return fs.Root() + "/" + strconv.Itoa(pid) + "/" + name
}

// PIDs lists the process IDs in the filesystem, in increasing order.
func (fs FS) PIDs() ([]int, error) {
	return listNumeric(fs.Root())
}

// Threads lists the thread IDs of process pid (its task directory), in
// increasing order.
func (fs FS) Threads(pid int) ([]int, error) {
	return listNumeric(fs.pidPath(pid, "task"))
}

// listNumeric lists the names of dir that are positive decimal numbers
// (names only: no per-entry type or stat, which the sampler would pay for
// at every tick).
func listNumeric(dir string) ([]int, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(names))
	for _, name := range names {
		if n, err := strconv.Atoi(name); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	sort.Ints(out)
	return out, nil
}

// Vanished reports whether err from reading a process's file says the
// process (or thread) is gone: ENOENT, or ESRCH (it went away between the
// open and the read).
func Vanished(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ESRCH)
}

// readSmall reads the file at path, which must be shorter than buf, in one
// open-read-close without allocating. The error of the open or read is
// returned as an *os.PathError so that Vanished can judge it.
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
		return nil, &longError{path: path, size: len(buf)}
	}
	return buf[:n], nil
}
