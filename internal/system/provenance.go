package system

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/target"
)

// FileSHA256 returns the hex SHA-256 of a file.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// ResolveCommand finds argv0 as exec would from dir: a path with a slash is
// relative to dir, a bare name is looked up in $PATH.
func ResolveCommand(argv0, dir string) (string, error) {
	if strings.Contains(argv0, "/") {
		p := argv0
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		return filepath.Abs(p)
	}
	p, err := exec.LookPath(argv0)
	if err != nil {
		return "", err
	}
	return filepath.Abs(p)
}

// GitRevision returns the HEAD commit of the git work tree holding dir, and
// whether the tree has uncommitted changes; empty when dir is not in one.
// git runs as every program benchrig starts (target.Output: watched,
// without benchrig's withheld environment), within 5 s in all.
func GitRevision(dir string) (rev string, dirty bool) {
	if dir == "" {
		dir = "."
	}
	if !inWorkTree(dir) {
		return "", false
	}
	if _, err := exec.LookPath("git"); err != nil {
		return "", false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	git := func(args ...string) (string, error) {
		out, _, err := target.Output(ctx, target.Command{Argv: append([]string{"git", "-C", dir}, args...), Timeout: 5 * time.Second})
		return strings.TrimSpace(string(out)), err
	}
	rev, err := git("rev-parse", "HEAD")
	if err != nil {
		return "", false
	}
	st, err := git("status", "--porcelain", "--untracked-files=no")
	return rev, err == nil && st != ""
}

// inWorkTree reports whether dir or a directory above it holds .git (a
// directory, or the file of a linked work tree), or $GIT_DIR names one:
// only then is git run.
func inWorkTree(dir string) bool {
	if os.Getenv("GIT_DIR") != "" {
		return true
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return true // let git decide
	}
	for {
		if _, err := os.Stat(filepath.Join(abs, ".git")); err == nil {
			return true
		}
		up := filepath.Dir(abs)
		if up == abs {
			return false
		}
		abs = up
	}
}
