package command

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/benchrig/benchrig/internal/suite"
)

// A command target's runtime version is part of its provenance: the
// Version column of the report says which Node (or Python, or redis-server)
// ran the server, so two variants that differ only in the runtime are told
// apart, and a resumed run whose runtime changed is refused.

// VersionTimeout bounds the version command: a binary that does not know
// --version and starts serving instead is killed (with its process group)
// when it passes.
const VersionTimeout = 5 * time.Second

// maxVersionOutput bounds what is read of the version command's output, and
// maxVersionLen the version recorded (its first non-empty line).
const (
	maxVersionOutput = 64 << 10
	maxVersionLen    = 200
)

// Version runs argv (the target's version_command, or its program with
// --version when argv is nil and program is set) in dir with env added to
// the environment, bounded by timeout, and returns the first non-empty line
// of its standard output (or, if that is empty, of its standard error:
// some runtimes print their version there), with control characters
// dropped and cut at 200 bytes. It fails when the command cannot start,
// exits non-zero, passes the timeout or prints nothing.
func Version(ctx context.Context, program string, argv []string, dir string, env []string, timeout time.Duration) (string, error) {
	if len(argv) == 0 {
		if program == "" {
			return "", errors.New("version: no program")
		}
		argv = []string{program, "--version"}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = nil
	// Its own process group, so that a timeout kills what it started too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var stdout, stderr cappedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	what := strings.Join(argv, " ")
	err := cmd.Run()
	if cmd.Process != nil {
		// Whatever it left running in its group (a daemon it forked) goes too.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		return "", fmt.Errorf("version: %s: no answer within %s", what, timeout)
	case err != nil:
		return "", fmt.Errorf("version: %s: %w", what, err)
	}
	for _, out := range [][]byte{stdout.Bytes(), stderr.Bytes()} {
		if v := firstLine(out); v != "" {
			return v, nil
		}
	}
	return "", fmt.Errorf("version: %s printed nothing", what)
}

// firstLine is the first non-empty line of b, printable characters only,
// at most maxVersionLen bytes (cut at a rune boundary).
func firstLine(b []byte) string {
	for _, line := range bytes.Split(b, []byte("\n")) {
		s := strings.Map(func(r rune) rune {
			if r == utf8.RuneError || (unicode.IsControl(r) && r != '\t') {
				return -1
			}
			return r
		}, string(line))
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if len(s) > maxVersionLen {
			s = s[:maxVersionLen]
			for !utf8.ValidString(s) {
				s = s[:len(s)-1]
			}
		}
		return s
	}
	return ""
}

// cappedBuffer keeps the first maxVersionOutput bytes written to it and
// drops the rest (the writer never fails, so the command is not killed by
// a full pipe).
type cappedBuffer struct{ buf bytes.Buffer }

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := maxVersionOutput - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// Bytes returns what was kept.
func (c *cappedBuffer) Bytes() []byte { return c.buf.Bytes() }

// runtimeVersion is the version of the variant's runtime for its
// provenance: its version_command's answer, else that of the program it
// runs (bin) with --version; "" when there is none (with a note when the
// declared version_command failed).
func (c *System) runtimeVersion(ctx context.Context, bin string) string {
	s := c.spec()
	argv := make([]string, len(c.t.VersionCommand))
	for i, a := range c.t.VersionCommand {
		argv[i] = suite.Expand(a, c.vars())
	}
	if len(argv) == 0 && bin == "" {
		return ""
	}
	v, err := Version(ctx, bin, argv, s.Dir, s.Env, VersionTimeout)
	if err != nil {
		// Many programs know no --version (a Go server's flag package
		// refuses it): only a declared version_command's failure is news.
		if len(argv) > 0 {
			c.env.Note("target %s: no runtime version: %v\n", c.env.Name, err)
		}
		return ""
	}
	return v
}
