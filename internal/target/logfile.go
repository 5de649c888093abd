package target

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/benchrig/benchrig/internal/tmpdir"
)

// maxTailBytes bounds how much of a log LogTail reads from its end.
const maxTailBytes = 1 << 20

// createLog creates the per-run log file for a target: dir/name.log, or
// dir/name.2.log, … when an earlier run left one. An empty dir means a fresh
// temporary directory.
func createLog(dir, name string) (*os.File, error) {
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
	for i := 1; i <= 1000; i++ {
		file := base + ".log"
		if i > 1 {
			file = base + "." + strconv.Itoa(i) + ".log"
		}
		f, err := os.OpenFile(filepath.Join(dir, file), os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("create log: %w", err)
		}
		return f, nil
	}
	return nil, fmt.Errorf("create log: %s already holds 1000 logs of %q", dir, name)
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
