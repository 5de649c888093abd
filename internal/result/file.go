package result

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"strings"
	"time"
)

// ResultsSchema names the results-file format: JSON Lines, one header line,
// one line per finished sample, one footer line carrying a SHA-256 of every
// byte before it. Each sample line is written and synced when the sample
// finishes, so a crash, Ctrl-C or power loss loses at most the sample in
// flight.
const ResultsSchema = "benchrig.results/v1"

// Header is the first line of a results file: what ran, where, and the plan.
type Header struct {
	Type    string    `json:"type"` // "header"
	Schema  string    `json:"schema"`
	Tool    Tool      `json:"tool"`
	Host    *Host     `json:"host,omitempty"`
	Started time.Time `json:"started"`
	Args    []string  `json:"args,omitempty"`
	Smoke   bool      `json:"smoke,omitempty"`
	Suite   SuiteInfo `json:"suite"`
	// Plan lists every sample to run, in the order they run; a capacity
	// search's steps are decided as it runs (Search).
	Plan []PlanEntry `json:"plan"`
	// Search is a capacity search's configuration and the cells it
	// searches, in order; nil for a run of set rates.
	Search *SearchPlan `json:"search,omitempty"`
	// Targets records each target's provenance (binary hash, git
	// revision, server version and settings, query plans).
	Targets map[string]Provenance `json:"targets,omitempty"`
	// Floor is benchrig's own latency and CPU per operation against a
	// null peer, measured once before the first sample.
	Floor *Floor `json:"floor,omitempty"`
}

// SuiteInfo records the suite file and what it resolved to.
type SuiteInfo struct {
	Name   string `json:"name"`
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
	// Resolved is the suite after environment and --set overrides, as
	// canonical JSON: what actually ran.
	Resolved  json.RawMessage `json:"resolved"`
	Overrides []string        `json:"overrides,omitempty"`
}

// PlanEntry is one planned sample.
type PlanEntry struct {
	Index  int    `json:"index"`
	Key    string `json:"key"`
	Cell   string `json:"cell"`
	Repeat int    `json:"repeat"`
}

// Provenance of one target.
type Provenance struct {
	Kind     string            `json:"kind"`
	Binary   string            `json:"binary,omitempty"`
	SHA256   string            `json:"sha256,omitempty"`
	GitRev   string            `json:"git_revision,omitempty"`
	GitDirty bool              `json:"git_dirty,omitempty"`
	Version  string            `json:"version,omitempty"`
	Settings map[string]string `json:"settings,omitempty"`
	Plans    map[string]string `json:"query_plans,omitempty"`
}

// Footer is the last line of a complete results file.
type Footer struct {
	Type     string    `json:"type"` // "footer"
	Finished time.Time `json:"finished"`
	Samples  int       `json:"samples"`
	Failed   int       `json:"failed"`
	// Interrupted is true when the run was stopped before the plan was
	// done; such a file can be resumed.
	Interrupted bool `json:"interrupted,omitempty"`
	// SHA256 is the hex SHA-256 of every byte of the file before this line.
	SHA256 string `json:"sha256"`
}

type sampleLine struct {
	Type string `json:"type"` // "sample"
	Sample
}

// Writer appends to a results file.
type Writer struct {
	f    *os.File
	h    hash.Hash
	done map[string]bool
	n    int
	fail int
}

// ErrExists is returned when Create would replace a results file without
// force.
var ErrExists = errors.New("already exists: refusing to overwrite results")

// ErrComplete is returned when a results file is already complete.
var ErrComplete = errors.New("results file is complete")

// ErrNoHeader is Resume's error for a file that holds no complete header
// line: the run that wrote it stopped before its header was whole (a full
// disk, a kill), so it holds no sample either. Such a file is as good as
// absent: Create replaces it without force, and a resumed run starts
// afresh (see Headerless).
var ErrNoHeader = errors.New("no complete header line: the run that wrote it stopped before its header was whole (a full disk? a kill?), so it holds no sample")

// headerStart is how every header line benchrig writes begins (Header's
// first field is its type).
const headerStart = `{"type":"header"`

// headerless reports whether data, a results file's first bytes, is what
// a run leaves when it stops before its header line is whole: nothing, or
// a beginning of a header line with no newline. eof says data is the whole
// file. Anything else (a complete line, other text) is not: a file that
// is not benchrig's is never replaced.
func headerless(data []byte, eof bool) bool {
	if bytes.IndexByte(data, '\n') >= 0 {
		return false
	}
	if len(data) < len(headerStart) {
		return eof && strings.HasPrefix(headerStart, string(data))
	}
	return bytes.HasPrefix(data, []byte(headerStart)) && (eof || len(data) <= maxLine)
}

// Headerless reports whether the file at path exists and holds no complete
// header line: empty, or a header line cut before its newline (a full disk
// or a kill while the header was written). Such a file holds no sample
// and is treated as absent: Create replaces it without force, and Resume
// refuses it with ErrNoHeader so that the run starts afresh. Only a
// regular file can be one (a FIFO or a device is never opened to look),
// and at most one line's bound of it is read.
func Headerless(path string) (bool, error) {
	st, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	if !st.Mode().IsRegular() {
		return false, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	return headerlessFile(f)
}

// headerlessFile is Headerless of an open file, read from its start.
func headerlessFile(f *os.File) (bool, error) {
	buf := make([]byte, 0, 64<<10)
	for {
		if len(buf) == cap(buf) {
			if len(buf) > maxLine {
				return false, nil
			}
			buf = append(buf, 0)[:len(buf)] // grow
		}
		n, err := f.ReadAt(buf[len(buf):cap(buf)], int64(len(buf)))
		buf = buf[:len(buf)+n]
		switch {
		case err == io.EOF:
			return headerless(buf, true), nil
		case err != nil:
			return false, fmt.Errorf("read %s: %w", f.Name(), err)
		case !headerless(buf, false):
			return false, nil
		}
	}
}

// Create starts a new results file. It refuses to replace an existing file
// unless force is set or the file holds no complete header line (see
// Headerless: it holds no sample, so it is as good as absent), and refuses,
// with a *LockedError naming the PID, a file another writer holds: the
// writer keeps an exclusive lock on the file until Close or Abandon (or its
// death).
func Create(path string, h Header, force bool) (*Writer, error) {
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flags = os.O_WRONLY | os.O_CREATE // truncated once locked
	}
	f, err := os.OpenFile(path, flags, 0o644)
	replace := false
	if err != nil && errors.Is(err, os.ErrExist) {
		// a file with no complete header is replaced: it is checked
		// again once locked, when no writer can be adding to it.
		if absent, herr := Headerless(path); herr != nil || !absent {
			return nil, fmt.Errorf("%s: %w", path, ErrExists)
		}
		if f, err = os.OpenFile(path, os.O_RDWR, 0); err != nil {
			return nil, err
		}
		replace = true
	}
	if err != nil {
		return nil, err
	}
	if err := lockWriter(f); err != nil {
		f.Close()
		return nil, err
	}
	if replace {
		if absent, err := headerlessFile(f); err != nil || !absent {
			f.Close()
			if err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("%s: %w", path, ErrExists)
		}
	}
	if force || replace {
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, fmt.Errorf("truncate %s: %w", path, err)
		}
	}
	w := &Writer{f: f, h: sha256.New(), done: map[string]bool{}}
	h.Type, h.Schema = "header", ResultsSchema
	if err := w.writeLine(h); err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// Resume reopens a partial results file: it checks every line, drops a
// torn last line (a sample that was being written when the run died), and
// returns the header and the keys of the samples already done. A file that
// has a footer is complete: ErrComplete. A file another writer holds is
// refused with a *LockedError naming the PID, before anything is read.
func Resume(path string) (w *Writer, hdr *Header, err error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
		}
	}()
	if err := lockWriter(f); err != nil {
		return nil, nil, err
	}
	if absent, err := headerlessFile(f); err != nil {
		return nil, nil, err
	} else if absent {
		return nil, nil, fmt.Errorf("%s: %w", path, ErrNoHeader)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", path, err)
	}
	st, err := resumeState(path, data)
	if err != nil {
		return nil, nil, err
	}
	keep, hdr := st.keep, st.hdr
	w = &Writer{h: sha256.New(), done: st.done, n: st.n, fail: st.fail}
	if err := f.Truncate(int64(len(keep))); err != nil {
		return nil, nil, err
	}
	if _, err := f.Seek(int64(len(keep)), io.SeekStart); err != nil {
		return nil, nil, err
	}
	w.f = f
	w.h.Write(keep)
	return w, hdr, nil
}

// resumed is what Resume keeps of a partial results file.
type resumed struct {
	// keep is the bytes the resumed file starts with: every whole line
	// up to an interrupted run's footer.
	keep []byte
	hdr  *Header
	done map[string]bool
	n    int
	fail int
}

// resumeState reads the bytes of a partial results file for Resume: every
// line up to a torn last line (dropped) and an interrupted run's footer
// (dropped), the header and the keys of the samples done. A complete file
// is ErrComplete; any other damage is refused with its line number. It
// reads nothing but data.
func resumeState(path string, data []byte) (*resumed, error) {
	keep := data
	if i := bytes.LastIndexByte(data, '\n'); i < len(data)-1 {
		keep = data[:i+1] // torn final line
	}
	st := &resumed{done: map[string]bool{}}
	footer := 0 // the line of an interrupted run's footer
	lines := bytes.SplitAfter(keep, []byte("\n"))
	for i, line := range lines {
		if len(line) > maxLine {
			return nil, lineTooLong(path, i+1)
		}
		if len(line) == 0 {
			continue
		}
		if footer > 0 {
			return nil, fmt.Errorf("%s:%d: a line after the footer (line %d)", path, i+1, footer)
		}
		var probe struct {
			Type string `json:"type"`
			Key  string `json:"key"`
			Err  string `json:"error"`
		}
		if err := json.Unmarshal(line, &probe); err != nil {
			return nil, fmt.Errorf("%s:%d: not a results line: %v", path, i+1, err)
		}
		switch probe.Type {
		case "header":
			if i != 0 {
				return nil, fmt.Errorf("%s:%d: a second header", path, i+1)
			}
			st.hdr = &Header{}
			if err := json.Unmarshal(line, st.hdr); err != nil {
				return nil, fmt.Errorf("%s:1: header: %v", path, err)
			}
			if st.hdr.Schema != ResultsSchema {
				return nil, fmt.Errorf("%s:1: schema %q, this benchrig writes %q", path, st.hdr.Schema, ResultsSchema)
			}
		case "sample":
			if st.hdr == nil {
				return nil, fmt.Errorf("%s:%d: sample before the header", path, i+1)
			}
			st.done[probe.Key] = true
			st.n++
			if probe.Err != "" {
				st.fail++
			}
		case "footer":
			var ft Footer
			_ = json.Unmarshal(line, &ft)
			if !ft.Interrupted {
				return nil, fmt.Errorf("%s: %w", path, ErrComplete)
			}
			// an interrupted run's footer: drop it and go on.
			footer = i + 1
			keep = keep[:len(keep)-len(line)]
		default:
			return nil, fmt.Errorf("%s:%d: unknown line type %q", path, i+1, probe.Type)
		}
	}
	if st.hdr == nil {
		return nil, fmt.Errorf("%s: no header line: not a benchrig results file", path)
	}
	st.keep = keep
	return st, nil
}

// Done reports whether the sample with this key is already in the file.
func (w *Writer) Done(key string) bool { return w.done[key] }

// Append writes one finished sample and syncs it to disk.
func (w *Writer) Append(s *Sample) error {
	if err := w.writeLine(sampleLine{Type: "sample", Sample: *s}); err != nil {
		return err
	}
	w.done[s.Key] = true
	w.n++
	if s.Error != "" {
		w.fail++
	}
	return nil
}

// Close writes the footer (with the checksum) and closes the file.
// interrupted marks a run stopped before its plan was done.
func (w *Writer) Close(interrupted bool) error {
	ft := Footer{Type: "footer", Finished: time.Now().UTC(), Samples: w.n, Failed: w.fail,
		Interrupted: interrupted, SHA256: hex.EncodeToString(w.h.Sum(nil))}
	err := w.writeLine(ft)
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Abandon closes the file without a footer (it stays resumable).
func (w *Writer) Abandon() error { return w.f.Close() }

func (w *Writer) writeLine(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, err := w.f.Write(b); err != nil {
		return fmt.Errorf("write %s: %w", w.f.Name(), err)
	}
	w.h.Write(b)
	if err := w.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", w.f.Name(), err)
	}
	return nil
}
