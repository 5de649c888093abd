package target

import (
	"errors"
	"io/fs"
	"os/exec"
	"strconv"
	"strings"
)

// StartError is the error Start returns when a target cannot be started or
// does not become ready. Its message is one line naming the target, what
// failed and the log file, for example
//
//	target "node-http": not ready after 10s: dial tcp 127.0.0.1:3000: connect: connection refused (log: /tmp/benchrig-target-1/node-http.log)
type StartError struct {
	// Target is the target's name.
	Target string
	// Op says what failed: `start "cmd"`, "not ready after 10s",
	// "exited before ready", "spec", ….
	Op string
	// LogPath is the target's log file, or "" when none was kept.
	LogPath string
	// Tail is the end of the log, lines joined by " | ", when the process
	// exited before it was ready.
	Tail string
	// Listening lists the addresses the target's processes listened on
	// when it was given up as not ready ("127.0.0.1:3001"): where it went
	// instead of the port it was asked to use.
	Listening []string
	// LogHints quotes the log lines that show where the target listened,
	// when it was not ready in time.
	LogHints []string
	// Err is the cause: the last probe error, the exit status, ….
	Err error
}

// Error formats the error on one line.
func (e *StartError) Error() string {
	var b strings.Builder
	b.WriteString("target ")
	b.WriteString(strconv.Quote(e.Target))
	b.WriteString(": ")
	b.WriteString(e.Op)
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(oneLine(e.Err.Error()))
	}
	if len(e.Listening) > 0 {
		b.WriteString("; the target listens on ")
		b.WriteString(strings.Join(e.Listening, ", "))
		b.WriteString(" instead (does it ignore $PORT or its port flag?)")
	}
	if len(e.LogHints) > 0 {
		b.WriteString("; its log says: ")
		for i, h := range e.LogHints {
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(strconv.Quote(h))
		}
	}
	if e.Tail != "" {
		b.WriteString("; last output: ")
		b.WriteString(strconv.Quote(e.Tail))
	}
	if e.LogPath != "" {
		b.WriteString(" (log: ")
		b.WriteString(e.LogPath)
		b.WriteString(")")
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *StartError) Unwrap() error { return e.Err }

// startCause strips the layers exec and os put around a failed start, so the
// message reads `start "cmd": executable file not found in $PATH` rather than
// repeating the command name.
func startCause(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Op == "fork/exec" {
		return pe.Err
	}
	return err
}

// oneLine folds a multi-line message onto one line.
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(strings.NewReplacer("\r", " ", "\n", " | ").Replace(s)), " ")
}
