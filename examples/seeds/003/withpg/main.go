// Command withpg starts one ephemeral PostgreSQL server (initdb in a temp
// dir, loopback, a free port; run as the postgres user when started as
// root), runs an SQL file on it, then runs a command with the server's DSN
// in an environment variable, and stops and removes the server when the
// command ends (or on Ctrl-C / SIGTERM, passed on to the command). It is
// seed 003's database: benchrig's suite model has no way yet to give a
// command target another target's DSN, so the database is started once
// around the whole run.
//
//	withpg -sql data.sql -env SEED003_PG -- benchrig run suite.yaml -o seed003.json
//
// The DSN has no password (the superuser connects over loopback without
// one); it is passed by environment, never on a command line.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"regexp"
	"syscall"
	"time"

	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/pgephemeral"
)

// envName is what -env accepts.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// maxSQL bounds the SQL file.
const maxSQL = 16 << 20

func main() {
	code, err := run(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "withpg:", err)
	}
	os.Exit(code)
}

func run(args []string) (int, error) {
	fs := flag.NewFlagSet("withpg", flag.ContinueOnError)
	sqlFile := fs.String("sql", "", "SQL file run once on the new server (required)")
	env := fs.String("env", "BENCHRIG_DSN", "environment variable the command finds the DSN in")
	conns := fs.Int("max-connections", 50, "max_connections of the server (1–10000)")
	if err := fs.Parse(args); err != nil {
		return 2, err
	}
	cmdArgs := fs.Args()
	switch {
	case *sqlFile == "":
		return 2, errors.New("-sql: required (the file that creates the data)")
	case !envName.MatchString(*env):
		return 2, fmt.Errorf("-env %q: a variable name: letters, digits and _, not starting with a digit", *env)
	case *conns < 1 || *conns > 10000:
		return 2, fmt.Errorf("-max-connections %d: accepted 1–10000", *conns)
	case len(cmdArgs) == 0:
		return 2, errors.New("no command: withpg -sql FILE [-env NAME] -- COMMAND [ARGS…]")
	}
	st, err := os.Stat(*sqlFile)
	if err != nil {
		return 2, fmt.Errorf("-sql: %w", err)
	}
	if st.Size() > maxSQL {
		return 2, fmt.Errorf("-sql %s: %d bytes, at most %d", *sqlFile, st.Size(), maxSQL)
	}
	sql, err := os.ReadFile(*sqlFile)
	if err != nil {
		return 2, fmt.Errorf("-sql: %w", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := pgephemeral.StartEphemeral(ctx, pgephemeral.Options{MaxConnections: *conns})
	if err != nil {
		return 1, err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := srv.Stop(sctx); err != nil {
			fmt.Fprintln(os.Stderr, "withpg: stop the server:", err)
		}
	}()
	if err := load(ctx, srv.DSN(), string(sql)); err != nil {
		return 1, fmt.Errorf("-sql %s: %w", *sqlFile, err)
	}
	fmt.Fprintf(os.Stderr, "withpg: PostgreSQL %s on 127.0.0.1:%d (pid %d), %s loaded; $%s holds the DSN\n",
		srv.Version(), srv.Port(), srv.PID(), *sqlFile, *env)

	cmd := exec.Command(cmdArgs[0], cmdArgs[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), *env+"="+srv.DSN())
	if err := cmd.Start(); err != nil {
		return 1, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-ctx.Done():
		// Pass the signal on and wait for the command to finish its own
		// clean-up (benchrig writes its footer) before the server stops.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		err = <-done
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), nil
	}
	if err != nil {
		return 1, err
	}
	return 0, nil
}

// load runs the SQL file's statements (one simple-protocol batch).
func load(ctx context.Context, dsn, sql string) error {
	conn, err := pgclient.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}
