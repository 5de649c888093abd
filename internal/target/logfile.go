package target

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/benchrig/benchrig/internal/tmpdir"
)

// maxTailBytes bounds how much of a log LogTail reads from its end.
const maxTailBytes = 1 << 20

// MaxLogsPerTarget is how many log files of one target a log directory
// keeps: creating one more removes the oldest, so a suite may run any number
// of samples of a command target.
const MaxLogsPerTarget = 1000

// createLog creates the per-run log file for a target: dir/name.log, then
// dir/name.2.log, … (the number after the highest one there), removing the
// oldest beyond MaxLogsPerTarget. An empty dir means a fresh temporary
// directory.
func createLog(dir, name string) (*os.File, error) {
	return createLogKeep(dir, name, MaxLogsPerTarget)
}

// createLogKeep is createLog keeping at most keep logs of the target.
func createLogKeep(dir, name string, keep int) (*os.File, error) {
	if dir == "" {
		d, err := tmpdir.New("", "target")
		if err != nil {
			return nil, fmt.Errorf("create log dir: %w", err)
		}
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create log dir: %w", err)
	}
	base := safeFileName(name)
	have, err := logIndexes(dir, base)
	if err != nil {
		return nil, fmt.Errorf("create log: %w", err)
	}
	next := 1
	if len(have) > 0 {
		next = have[len(have)-1] + 1
	}
	// Another benchrig may create logs in the same directory: step past
	// the numbers it takes.
	for tries := 0; tries < 1000; tries, next = tries+1, next+1 {
		f, err := os.OpenFile(filepath.Join(dir, logName(base, next)), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("create log: %w", err)
		}
		if extra := len(have) + 1 - keep; extra > 0 {
			for _, i := range have[:extra] {
				_ = os.Remove(filepath.Join(dir, logName(base, i)))
			}
		}
		return f, nil
	}
	return nil, fmt.Errorf("create log: %s: 1000 attempts at a new log name for %q all found the name taken", dir, name)
}

// logName is the name of log number i of a target: base.log, base.2.log, ….
func logName(base string, i int) string {
	if i == 1 {
		return base + ".log"
	}
	return base + "." + strconv.Itoa(i) + ".log"
}

// logIndexes lists, in increasing order, the numbers of the logs of base in
// dir.
func logIndexes(dir, base string) ([]int, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	var out []int
	for _, n := range names {
		if n == base+".log" {
			out = append(out, 1)
			continue
		}
		mid, ok := strings.CutPrefix(n, base+".")
		if !ok {
			continue
		}
		if num, ok := strings.CutSuffix(mid, ".log"); ok {
			if i, err := strconv.Atoi(num); err == nil && i >= 2 && strconv.Itoa(i) == num {
				out = append(out, i)
			}
		}
	}
	sort.Ints(out)
	return out, nil
}

// safeFileName maps a target name to a file name: letters, digits, '.', '_'
// and '-' stay, anything else becomes '_'.
func safeFileName(name string) string {
	b := []byte(name)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-'
		if !ok {
			b[i] = '_'
		}
	}
	s := strings.TrimLeft(string(b), ".")
	if s == "" {
		return "target"
	}
	return s
}

// tailLines returns the last n lines of the file at path (without a final
// newline), reading at most maxTailBytes from its end. A missing or
// unreadable file gives "".
func tailLines(path string, n int) string {
	if n <= 0 || path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	end, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return ""
	}
	const chunk = 8 << 10
	var buf []byte
	pos := end
	for pos > 0 && end-pos < maxTailBytes {
		size := int64(chunk)
		if pos < size {
			size = pos
		}
		pos -= size
		part := make([]byte, size)
		if _, err := f.ReadAt(part, pos); err != nil && !errors.Is(err, io.EOF) {
			return ""
		}
		buf = append(part, buf...)
		// n lines need n newlines before them (plus a possible final one).
		if bytes.Count(buf, []byte{'\n'}) > n {
			break
		}
	}
	buf = bytes.TrimRight(buf, "\n")
	lines := bytes.Split(buf, []byte{'\n'})
	if pos > 0 && len(lines) > 1 {
		lines = lines[1:] // the first line read is probably cut
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte{'\n'}))
}

// tailSummary returns the last lines of a log on one line for error
// messages: lines joined by " | ", blank lines dropped, cut to about 300
// bytes from the end.
func tailSummary(path string) string {
	var kept []string
	for _, l := range strings.Split(tailLines(path, 5), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			kept = append(kept, l)
		}
	}
	s := strings.Join(kept, " | ")
	const max = 300
	if len(s) > max {
		s = "…" + s[len(s)-max:]
	}
	return s
}
