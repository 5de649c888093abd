package pgephemeral

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/benchrig/benchrig/internal/secret"
)

// DefaultUser is the unprivileged system user the server runs as when
// benchrig runs as root (PostgreSQL refuses to run as root).
const DefaultUser = "postgres"

// runAs is who the server's processes run as.
type runAs struct {
	name string
	uid  int
	gid  int
	cred *syscall.Credential // nil: as benchrig itself
}

// chown gives path to the server's user; a no-op when not switching users.
func (r runAs) chown(path string) error {
	if r.cred == nil {
		return nil
	}
	return os.Lchown(path, r.uid, r.gid)
}

// attr returns the process attributes that start a command as the server's
// user, in its own process group.
func (r runAs) attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: r.cred}
}

// resolveUser decides who runs the server. Not root: benchrig's own user.
// Root: the named unprivileged user, created as a system user with useradd
// when it does not exist.
func resolveUser(ctx context.Context, name string) (runAs, error) {
	if os.Geteuid() != 0 {
		return runAs{name: "", uid: os.Geteuid(), gid: os.Getegid()}, nil
	}
	if name == "" {
		name = DefaultUser
	}
	u, err := user.Lookup(name)
	if err != nil {
		if cerr := createUser(ctx, name); cerr != nil {
			return runAs{}, fmt.Errorf("postgres: benchrig runs as root and PostgreSQL refuses to: user %q does not exist and could not be created (%v); create an unprivileged user and name it in the postgres user option", name, cerr)
		}
		if u, err = user.Lookup(name); err != nil {
			return runAs{}, fmt.Errorf("postgres: look up user %q after creating it: %w", name, err)
		}
	}
	uid, err1 := strconv.Atoi(u.Uid)
	gid, err2 := strconv.Atoi(u.Gid)
	if err1 != nil || err2 != nil {
		return runAs{}, fmt.Errorf("postgres: user %q has non-numeric uid %q or gid %q", name, u.Uid, u.Gid)
	}
	if uid == 0 {
		return runAs{}, fmt.Errorf("postgres: user %q is root (uid 0); PostgreSQL needs an unprivileged user", name)
	}
	return runAs{
		name: name, uid: uid, gid: gid,
		cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}},
	}, nil
}

// createUser adds a system user without home or login shell.
func createUser(ctx context.Context, name string) error {
	if strings.ContainsAny(name, " :/\n\t") || strings.HasPrefix(name, "-") || name == "" {
		return fmt.Errorf("%q is not a valid user name", name)
	}
	path, err := exec.LookPath("useradd")
	if err != nil {
		return fmt.Errorf("useradd not found")
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--system", "--no-create-home", "--user-group",
		"--shell", "/usr/sbin/nologin", "--", name)
	cmd.Env = secret.Environ()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("useradd %s: %v: %s", name, err, strings.TrimSpace(string(out)))
	}
	return nil
}
