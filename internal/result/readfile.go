package result

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
)

// MaxLine bounds one line of a results file, in bytes. A sample line is a
// few KiB to a few hundred KiB (its timeline and histograms); a longer line
// is refused with its number rather than read without end.
const MaxLine = 64 << 20

// maxLine is MaxLine; tests lower it.
var maxLine = MaxLine

// lineTooLong is the error for line n of path past maxLine.
func lineTooLong(path string, n int) error {
	return fmt.Errorf("%s:%d: line longer than %d bytes (%d MiB), the bound of a results line: not a benchrig results file, or a damaged one", path, n, maxLine, maxLine>>20)
}

// ReadFile reads a whole results file: header, samples, footer (nil when
// the file is partial). It stops at the first line that does not parse and
// returns it as an error with its line number; a torn last line is a
// *TornLineError after what came before it. Reading commands use Check,
// which reads past damaged lines and verifies.
func ReadFile(path string) (*Header, []Sample, *Footer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	defer f.Close()
	c := &Checked{Path: path}
	err = c.read(f, true)
	return c.Header, c.Samples, c.Footer, err
}

// scanLine is a bufio.SplitFunc for results files: each line with its
// newline, so that the bytes hashed are the file's, and a last line without
// one is seen as such (torn).
func scanLine(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i+1], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// maxLineProblems bounds the damaged lines a check lists one by one.
const maxLineProblems = 20

// read reads the lines of r into c: the header, the samples and the
// footer, the SHA-256 of every byte before the footer, and every line that
// does not parse. strict stops at the first such line and returns it (as
// ReadFile does); otherwise it is listed in c.lineProblems and reading goes
// on, and the returned error is the first one seen. A line past maxLine
// ends the reading in either mode.
func (c *Checked) read(r io.Reader, strict bool) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(64<<10, maxLine+1)), maxLine+1)
	sc.Split(scanLine)
	h := sha256.New()
	var first error
	fail := func(err error) {
		if first == nil {
			first = err
		}
		if len(c.lineProblems) < maxLineProblems {
			c.lineProblems = append(c.lineProblems, err.Error())
		} else {
			c.moreLineProblems++
		}
	}
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		if len(line) > maxLine {
			err := lineTooLong(c.Path, n)
			fail(err)
			return first
		}
		if line[len(line)-1] != '\n' {
			// the line being written when the run stopped (a crash, a
			// full disk): torn, never a sample.
			c.Torn = &TornLineError{Path: c.Path, Line: n}
			if first == nil {
				first = c.Torn
			}
			return first
		}
		if err := c.line(n, line[:len(line)-1], h); err != nil {
			if fail(err); strict {
				return first
			}
		}
		h.Write(line)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			fail(lineTooLong(c.Path, n+1))
		} else {
			fail(fmt.Errorf("%s: %w", c.Path, err))
		}
	}
	c.lines = n
	return first
}

// line decodes line n of a results file into the header, a sample or the
// footer; h holds the SHA-256 of every line before it.
func (c *Checked) line(n int, line []byte, h hash.Hash) error {
	var probe struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return fmt.Errorf("%s:%d: not JSON: %v", c.Path, n, err)
	}
	if c.Footer != nil {
		return fmt.Errorf("%s:%d: a %q line after the footer (line %d): the file was added to after its run ended", c.Path, n, probe.Type, c.footerLine)
	}
	switch probe.Type {
	case "header":
		if c.Header != nil || n != 1 {
			return fmt.Errorf("%s:%d: a header that is not the first line", c.Path, n)
		}
		hdr := &Header{}
		if err := json.Unmarshal(line, hdr); err != nil {
			return fmt.Errorf("%s:%d: header: %v", c.Path, n, err)
		}
		c.Header = hdr
	case "sample":
		var s sampleLine
		if err := json.Unmarshal(line, &s); err != nil {
			return fmt.Errorf("%s:%d: sample: %v", c.Path, n, err)
		}
		if c.Header == nil {
			return fmt.Errorf("%s:%d: a sample before the header", c.Path, n)
		}
		c.Samples = append(c.Samples, s.Sample)
	case "footer":
		ft := &Footer{}
		if err := json.Unmarshal(line, ft); err != nil {
			return fmt.Errorf("%s:%d: footer: %v", c.Path, n, err)
		}
		c.Footer, c.footerLine, c.before = ft, n, hex.EncodeToString(h.Sum(nil))
	default:
		return fmt.Errorf("%s:%d: unknown line type %q", c.Path, n, probe.Type)
	}
	return nil
}

// TornLineError is ReadFile's error for a last line without its newline:
// the line being written when the run stopped (a crash, a full disk). What
// comes before it is intact, and --resume drops the torn line.
type TornLineError struct {
	Path string
	Line int
}

func (e *TornLineError) Error() string {
	return fmt.Sprintf("%s:%d: torn last line (it was being written when the run stopped: a crash or a full disk); the lines before it are intact and --resume drops it", e.Path, e.Line)
}
