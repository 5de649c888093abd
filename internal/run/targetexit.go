package run

import (
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/system"
	"github.com/benchrig/benchrig/internal/target"
)

// A target that dies or does not start: its exit status and the end of
// its log go into the sample, because the log itself is removed with the
// run's temp dir.

// diedIn is the phase the target was seen to die in: the watcher's, else
// the current one.
func (m *measurement) diedIn() string {
	m.pmu.Lock()
	defer m.pmu.Unlock()
	if m.exitPhase != "" {
		return m.exitPhase
	}
	return m.phase
}

// noteExit records a target that died during the sample: UNHEALTHY, with
// its exit status and log tail. It reports whether the target is gone.
func (m *measurement) noteExit() bool {
	if m.tgt == nil || m.tgt.Alive() {
		return false
	}
	status := "exited"
	if x, ok := m.tgt.(system.Exiter); ok {
		select {
		case <-x.Exited():
			status = x.ExitStatus()
		case <-time.After(2 * time.Second):
		}
	}
	m.exitStatus = status
	if m.s.Target != nil {
		m.s.Target.ExitStatus = status
		if l, ok := m.tgt.(system.Logger); ok {
			m.s.Target.LogPath, m.s.Target.LogTail = l.LogPath(), l.LogTail(20)
		}
	}
	m.s.Verdict.Add("target exited during %s: %s", m.diedIn(), status)
	return true
}

// logHint quotes the end of the target's log for an error message, and
// keeps it in the sample: the log's path would point to nothing once the
// run removes its temp dir.
func (m *measurement) logHint() string {
	l, ok := m.tgt.(system.Logger)
	if !ok || l.LogPath() == "" {
		return ""
	}
	tail := readLogTail(l.LogPath())
	if m.s.Target != nil {
		m.s.Target.LogPath, m.s.Target.LogTail = l.LogPath(), tail
	}
	if tail == "" {
		return " (the target's log is empty)"
	}
	return "; the target's log ends: " + strconv.Quote(tail)
}

// quoteStartLog puts the end of the log of a target that did not start into
// its error, in place of the log's path (the run removes the file), and
// returns it; logged is false for an error that named no log.
func quoteStartLog(err error) (tail string, logged bool) {
	var se *target.StartError
	if !errors.As(err, &se) || se.LogPath == "" {
		return "", false
	}
	if se.Tail == "" {
		se.Tail = readLogTail(se.LogPath)
	}
	se.LogPath = ""
	return se.Tail, true
}

// Bounds of a log tail quoted in an error.
const (
	tailLines = 5
	tailBytes = 600
)

// readLogTail is the last lines of a log, joined by " | ", at most
// tailBytes (the end kept); "" if it cannot be read.
func readLogTail(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const window = 8 << 10
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	off := max(st.Size()-window, 0)
	b := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(b, off); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	lines = lines[max(len(lines)-tailLines, 0):]
	out := strings.Join(lines, " | ")
	if len(out) > tailBytes {
		out = "…" + strings.ToValidUTF8(out[len(out)-tailBytes:], "")
	}
	return out
}

// exitedChan is the started target's exit channel (nil when the target is
// not one benchrig started): when it closes, the phase the target died in
// is noted for diedIn.
func (m *measurement) exitedChan() <-chan struct{} {
	if x, ok := m.tgt.(system.Exiter); ok && m.spec.Start != nil {
		exited := x.Exited()
		m.pmu.Lock()
		m.exited = exited
		m.pmu.Unlock()
		go func() {
			<-exited // the target is stopped at the latest when Measure returns
			m.pmu.Lock()
			if m.exitPhase == "" {
				m.exitPhase = m.phase
			}
			m.pmu.Unlock()
		}()
		return exited
	}
	return nil
}

// interrupted records why a phase ended early: the target died, or ctx
// was cancelled.
func (m *measurement) interrupted(ctx context.Context) {
	if m.noteExit() {
		return
	}
	if ctx.Err() != nil {
		m.fail("interrupted during %s", m.phase)
	}
}
