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
func GitRevision(dir string) (rev string, dirty bool) {
	if dir == "" {
		dir = "."
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false
	}
	rev = strings.TrimSpace(string(out))
	st, err := exec.CommandContext(ctx, "git", "-C", dir, "status", "--porcelain", "--untracked-files=no").Output()
	return rev, err == nil && len(strings.TrimSpace(string(st))) > 0
}
