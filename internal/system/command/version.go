package command

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/target"
)

// A command target's runtime version is part of its provenance: the
// Version column of the report says which Node (or Python, or redis-server)
// ran the server, so two variants that differ only in the runtime are told
// apart, and a resumed run whose runtime changed is refused.
//
// Running an arbitrary program with a flag it may not know is not safe: a
// wrapper script (sh -c 'server & wait', npm start) ignores it and starts
// the real server on the real port. So benchrig learns the version only
// from what it knows: the suite's version_command, a Go binary's embedded
// build information (read, never run), or a program known to answer a
// version flag and exit (node, python3, redis-server, postgres, nginx,
// java, ruby, php, dotnet). Every command it runs runs as a target does
// (target.Output: under a watchdog, its whole tree killed when it ends,
// at the timeout, or when benchrig dies). Any other program's version is
// result.VersionUnknown.

// VersionTimeout bounds a version command.
const VersionTimeout = 5 * time.Second

// maxVersionLen bounds the version recorded (its first non-empty line).
const maxVersionLen = 200

// ErrVersionUnknown is returned by Version for a program it will not run:
// neither a Go binary nor one known to answer a version flag.
var ErrVersionUnknown = errors.New("version unknown")

// knownRuntimes are the programs known to print their version and exit
// when given these arguments, by base name (python3.12 counts as python3).
var knownRuntimes = map[string][]string{
	"node":         {"--version"},
	"nodejs":       {"--version"},
	"python":       {"--version"},
	"python3":      {"--version"},
	"redis-server": {"--version"},
	"postgres":     {"--version"},
	"nginx":        {"-v"}, // nginx knows no --version; -v prints to stderr
	"java":         {"-version"},
	"ruby":         {"--version"},
	"php":          {"--version"},
	"dotnet":       {"--version"},
}

// versionArgs returns the arguments a known runtime answers with its
// version, by the base name of its path; false for any other program.
func versionArgs(program string) ([]string, bool) {
	name := filepath.Base(program)
	if rest, ok := strings.CutPrefix(name, "python3."); ok && rest != "" && strings.Trim(rest, "0123456789") == "" {
		name = "python3"
	}
	args, ok := knownRuntimes[name]
	return args, ok
}

// Version returns the runtime version of a command target, the first
// non-empty line (control characters dropped, cut at 200 bytes) of:
//
//   - argv, when set (the target's version_command), run in dir with env
//     added to benchrig's environment;
//   - else, when program is a Go binary, its build information: the Go
//     version, and the main module's path and version when it has one
//     ("go1.26.8", "go1.26.8, example.com/srv v1.4.0"); program is read,
//     not run;
//   - else, when program is a known runtime (see knownRuntimes), what it
//     prints for its version flag (stdout, or stderr when stdout is empty:
//     java and nginx print theirs there).
//
// Any other program is not run: the error is ErrVersionUnknown. A command
// that cannot start, exits non-zero, prints nothing or passes timeout is
// an error naming it; whatever it started is gone when Version returns.
func Version(ctx context.Context, program string, argv []string, dir string, env []string, timeout time.Duration) (string, error) {
	if len(argv) == 0 {
		if program == "" {
			return "", errors.New("version: no program")
		}
		if v, ok := goVersion(program); ok {
			return v, nil
		}
		args, ok := versionArgs(program)
		if !ok {
			return "", fmt.Errorf("%w: %s is neither a Go binary nor a runtime known to answer a version flag (set version_command)", ErrVersionUnknown, program)
		}
		argv = append([]string{program}, args...)
	}
	what := strings.Join(argv, " ")
	stdout, stderr, err := target.Output(ctx, target.Command{Argv: argv, Env: env, Dir: dir, Timeout: timeout})
	if err != nil {
		return "", fmt.Errorf("version: %s: %w", what, err)
	}
	for _, out := range [][]byte{stdout, stderr} {
		if v := firstLine(out); v != "" {
			return v, nil
		}
	}
	return "", fmt.Errorf("version: %s printed nothing", what)
}

// goVersion reads a Go binary's build information: "go1.26.8", with
// ", PATH VERSION" of the main module when it has a version. false when
// program is not a Go binary (or cannot be read).
func goVersion(program string) (string, bool) {
	bi, err := buildinfo.ReadFile(program)
	if err != nil || bi.GoVersion == "" {
		return "", false
	}
	v := bi.GoVersion
	if mv := bi.Main.Version; bi.Main.Path != "" && mv != "" && mv != "(devel)" {
		v += ", " + bi.Main.Path + " " + mv
	}
	return firstLine([]byte(v)), true
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

// runtimeVersion is the version of the variant's runtime for its
// provenance (see Version): "" when there is no command at all,
// result.VersionUnknown when it cannot be learnt (with a note when a
// declared version_command or a known runtime failed). The command gets the
// target's own env entries but those holding credentials (by the suite's
// policy), and not its companions' DSNs: a version needs neither.
func (c *System) runtimeVersion(ctx context.Context, bin string) string {
	v := c.vars()
	argv := make([]string, len(c.t.VersionCommand))
	for i, a := range c.t.VersionCommand {
		argv[i] = suite.Expand(a, v)
	}
	if len(argv) == 0 && bin == "" {
		return ""
	}
	p := c.env.Suite.Policy()
	var env []string
	for k, val := range c.t.Env {
		kv := k + "=" + suite.Expand(val, v)
		if p.Env([]string{kv}, nil)[0] == kv {
			env = append(env, kv)
		}
	}
	sort.Strings(env)
	ver, err := Version(ctx, bin, argv, c.spec().Dir, env, VersionTimeout)
	if err != nil {
		if !errors.Is(err, ErrVersionUnknown) {
			c.env.Note("target %s: runtime version unknown: %v\n", c.env.Name, err)
		}
		return result.VersionUnknown
	}
	return ver
}
