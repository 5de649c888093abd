package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"syscall"
)

// File is one /proc file read again and again: stat, schedstat, children,
// smaps_rollup of one process or thread. A held File keeps its descriptor
// open and reads with pread at offset 0, which makes the kernel generate the
// text afresh: one system call per reading instead of open, read and close.
// A File that is not held opens, reads and closes its path at every reading
// (the fallback when descriptors run short, and the only way for a fixture
// tree of plain files, which tests rewrite between readings).
//
// The descriptor of a held File names one process, not a PID: once that
// process has exited and been reaped, reading fails with ESRCH (Vanished
// reports true) even if the PID now belongs to another process. A File
// read by path has no such guard: the caller must compare the start time
// in stat with the one it recorded.
type File struct {
	path string
	fd   int // -1 when not held
}

// OpenFile opens the file at path. With hold it keeps the descriptor;
// without, it only checks that the file can be opened now. The error is an
// *os.PathError that Vanished can judge.
func OpenFile(path string, hold bool) (*File, error) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	if !hold {
		_ = syscall.Close(fd)
		fd = -1
	}
	return &File{path: path, fd: fd}, nil
}

// Path is the file's path.
func (f *File) Path() string { return f.path }

// Held reports whether the File keeps an open descriptor.
func (f *File) Held() bool { return f.fd >= 0 }

// Read reads the whole file into buf, which must be longer than the text,
// without allocating. A text that fills buf is an error wrapping ErrFormat
// ("longer than"): read again with a larger buf.
func (f *File) Read(buf []byte) ([]byte, error) {
	if f.fd < 0 {
		return readSmall(f.path, buf)
	}
	n, err := syscall.Pread(f.fd, buf, 0)
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: f.path, Err: err}
	}
	if n >= len(buf) {
		return nil, &longError{path: f.path, size: len(buf)}
	}
	return buf[:n], nil
}

// longError says a file's text filled the buffer given to read it.
type longError struct {
	path string
	size int
}

func (e *longError) Error() string {
	return fmt.Sprintf("%s: %v: longer than %d bytes", e.path, ErrFormat, e.size)
}

func (e *longError) Unwrap() error { return ErrFormat }

// Close closes a held descriptor; a File may be closed more than once.
func (f *File) Close() {
	if f != nil && f.fd >= 0 {
		_ = syscall.Close(f.fd)
		f.fd = -1
	}
}

// ReadStat reads a stat file like FS.ReadStat: without the command name.
func (f *File) ReadStat(buf []byte) (Stat, error) {
	b, err := f.Read(buf)
	if err != nil {
		return Stat{}, err
	}
	st, err := parseStat(b, false)
	if err != nil {
		return Stat{}, fmt.Errorf("%s: %w", f.path, err)
	}
	return st, nil
}

// ReadSchedstat reads a schedstat file like ReadSchedstatFile.
func (f *File) ReadSchedstat(buf []byte) (Schedstat, error) {
	b, err := f.Read(buf)
	if err != nil {
		return 0, err
	}
	ns, err := ParseSchedstat(b)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", f.path, err)
	}
	return ns, nil
}

// ReadPss reads a smaps_rollup file and returns its Pss line in bytes.
func (f *File) ReadPss(buf []byte) (uint64, error) {
	b, err := f.Read(buf)
	if err != nil {
		return 0, err
	}
	pss, err := ParsePss(b)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", f.path, err)
	}
	return pss, nil
}

// ReadChildren reads a /proc/PID/task/TID/children file and appends the
// PIDs it lists to dst. *buf grows when the list does not fit. A thread
// that has exited lists no children.
func (f *File) ReadChildren(buf *[]byte, dst []int) ([]int, error) {
	for {
		b, err := f.Read(*buf)
		if err == nil {
			out, err := ParseChildren(b, dst)
			if err != nil {
				return dst, fmt.Errorf("%s: %w", f.path, err)
			}
			return out, nil
		}
		var long *longError
		if len(*buf) >= 64<<20 || !errors.As(err, &long) {
			return dst, err
		}
		*buf = make([]byte, 2*len(*buf))
	}
}

// ParseChildren parses the text of a children file ("PID PID … ", each
// followed by a space) and appends the PIDs to dst. Errors wrap ErrFormat.
func ParseChildren(b []byte, dst []int) ([]int, error) {
	for len(b) > 0 {
		if b[0] == ' ' || b[0] == '\n' {
			b = b[1:]
			continue
		}
		end := 0
		for end < len(b) && b[end] != ' ' && b[end] != '\n' {
			end++
		}
		pid, err := atoi(b[:end])
		if err != nil || pid <= 0 {
			return dst, fmt.Errorf("%w: children: %q is not a PID", ErrFormat, b[:end])
		}
		dst = append(dst, pid)
		b = b[end:]
	}
	return dst, nil
}

// ParsePss returns the Pss line of a smaps_rollup text in bytes, as
// ParseSmapsRollup would, without reading the other lines. Errors wrap
// ErrFormat.
func ParsePss(b []byte) (uint64, error) {
	for len(b) > 0 {
		line := b
		if nl := bytes.IndexByte(b, '\n'); nl >= 0 {
			line, b = b[:nl], b[nl+1:]
		} else {
			b = nil
		}
		val, ok := bytes.CutPrefix(line, []byte("Pss:"))
		if !ok {
			continue
		}
		val = bytes.TrimSpace(val)
		num, unit, _ := bytes.Cut(val, []byte(" "))
		n, err := atou(num)
		if err != nil || num[0] == '-' {
			return 0, fmt.Errorf("%w: smaps_rollup: Pss %q", ErrFormat, val)
		}
		if unit = bytes.TrimSpace(unit); len(unit) != 0 && string(unit) != "kB" {
			return 0, fmt.Errorf("%w: smaps_rollup: Pss %q: unit %q, want kB", ErrFormat, val, unit)
		}
		if n > (1<<64-1)/1024 {
			return 0, fmt.Errorf("%w: smaps_rollup: Pss %q is out of range", ErrFormat, val)
		}
		return n * 1024, nil
	}
	return 0, fmt.Errorf("%w: smaps_rollup: no Pss line", ErrFormat)
}

// IsProcfs reports whether dir is the root of a mounted process
// filesystem (not a fixture tree of plain files).
func IsProcfs(dir string) bool {
	var st syscall.Statfs_t
	const procSuperMagic = 0x9fa0
	return syscall.Statfs(dir, &st) == nil && st.Type == procSuperMagic
}
