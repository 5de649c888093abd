package pgephemeral

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/target"
)

// ErrNoBinaries is returned (wrapped) when no PostgreSQL server binaries can
// be found. Tests skip on it outside CI.
var ErrNoBinaries = errors.New("no PostgreSQL server binaries (initdb, postgres) found")

// binaryGlobs are the well-known install locations searched after PATH, in
// order; within a glob the highest version wins.
var binaryGlobs = []string{
	"/usr/lib/postgresql/*/bin", // Debian, Ubuntu
	"/usr/pgsql-*/bin",          // PGDG RPMs
	"/usr/local/pgsql/bin",      // source installs
}

// Binaries locates one PostgreSQL installation.
type Binaries struct {
	// Dir holds initdb and postgres.
	Dir string `json:"dir"`
	// Version is the version postgres --version reports ("15.18 (Debian …)").
	Version string `json:"version"`
	// Major is the major version (15).
	Major int `json:"major"`
}

// Initdb is the path of initdb.
func (b Binaries) Initdb() string { return filepath.Join(b.Dir, "initdb") }

// Postgres is the path of the server binary.
func (b Binaries) Postgres() string { return filepath.Join(b.Dir, "postgres") }

// FindBinaries locates initdb and postgres: in dir when it is not empty
// (and only there), else on PATH, else in the highest version under
// /usr/lib/postgresql/*/bin, /usr/pgsql-*/bin and /usr/local/pgsql/bin.
func FindBinaries(ctx context.Context, dir string) (Binaries, error) {
	if dir != "" {
		if !hasServer(dir) {
			return Binaries{}, fmt.Errorf("postgres: bin %q: %w there (it must hold both)", dir, ErrNoBinaries)
		}
		return describe(ctx, dir)
	}
	if p, err := exec.LookPath("postgres"); err == nil {
		// A symlink on PATH (/usr/local/bin/postgres) stands for the
		// installation it points into; record that one.
		if real, err := filepath.EvalSymlinks(p); err == nil && hasServer(filepath.Dir(real)) {
			return describe(ctx, filepath.Dir(real))
		}
		if d := filepath.Dir(p); hasServer(d) {
			return describe(ctx, d)
		}
	}
	for _, g := range binaryGlobs {
		dirs, _ := filepath.Glob(g)
		sort.SliceStable(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
		for _, d := range dirs {
			if hasServer(d) {
				return describe(ctx, d)
			}
		}
	}
	return Binaries{}, fmt.Errorf("postgres: %w on PATH or in %s; install PostgreSQL or set the bin directory",
		ErrNoBinaries, strings.Join(binaryGlobs, ", "))
}

// hasServer reports whether dir holds executable initdb and postgres.
func hasServer(dir string) bool {
	for _, name := range []string{"initdb", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
			return false
		}
	}
	return true
}

// versionOf extracts the number from a path like /usr/lib/postgresql/15/bin
// or /usr/pgsql-16/bin, for sorting; 0 when there is none.
func versionOf(dir string) float64 {
	for _, part := range strings.Split(dir, "/") {
		part = strings.TrimPrefix(part, "pgsql-")
		if v, err := strconv.ParseFloat(part, 64); err == nil {
			return v
		}
	}
	return 0
}

// describe runs postgres --version in dir, as a target is run
// (target.Output: under a watchdog, without benchrig's withheld
// environment, nothing of it left once it returns).
func describe(ctx context.Context, dir string) (Binaries, error) {
	b := Binaries{Dir: dir}
	out, _, err := target.Output(ctx, target.Command{Argv: []string{b.Postgres(), "--version"}, Timeout: 10 * time.Second})
	if err != nil && ctx.Err() != nil {
		return b, fmt.Errorf("postgres: run %s --version: %w", b.Postgres(), context.Cause(ctx))
	}
	if err != nil {
		return b, fmt.Errorf("postgres: run %s --version: %w", b.Postgres(), err)
	}
	b.Version, b.Major = pgclient.ParseVersion(string(out))
	if b.Major == 0 {
		return b, fmt.Errorf("postgres: %s --version printed %q, not a PostgreSQL version", b.Postgres(), strings.TrimSpace(string(out)))
	}
	return b, nil
}
