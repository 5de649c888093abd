package pgephemeral

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/benchrig/benchrig/internal/proc"
	"github.com/benchrig/benchrig/internal/tmpdir"
)

// Readiness and shutdown bounds.
const (
	readyPoll      = 50 * time.Millisecond
	readyAttempt   = 2 * time.Second // one connection attempt
	killWait       = 5 * time.Second // for SIGKILLed processes to go
	logTailLines   = 20
	logTailMaxRead = 16 << 10
)

// waitReady polls until the server answers SELECT 1 and reports its
// version, the postmaster exits, or ctx ends.
func (s *Server) waitReady(ctx context.Context) error {
	cfg, err := pgx.ParseConfig(s.DSN())
	if err != nil {
		return fmt.Errorf("postgres: parse own DSN: %w", err)
	}
	cfg.ConnectTimeout = readyAttempt
	var last error
	for {
		select {
		case <-s.exited:
			log := s.logTail()
			if strings.Contains(log, "could not bind") || strings.Contains(log, "already in use") {
				return fmt.Errorf("postgres: server on port %d exited at start: %w:\n%s", s.port, errPortTaken, log)
			}
			return fmt.Errorf("postgres: server exited during start-up (%v):\n%s", s.cmd.ProcessState, log)
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
				return fmt.Errorf("postgres: server on port %d not ready within %v (last attempt: %v):\n%s",
					s.port, s.opts.StartTimeout, last, s.logTail())
			}
			return fmt.Errorf("postgres: start: %w", context.Cause(ctx))
		default:
		}
		last = s.probe(ctx, cfg)
		if last == nil {
			return nil
		}
		t := time.NewTimer(readyPoll)
		select {
		case <-t.C:
		case <-ctx.Done():
		case <-s.exited:
		}
		t.Stop()
	}
}

// probe connects once, runs SELECT 1 and reads the server's version.
func (s *Server) probe(ctx context.Context, cfg *pgx.ConnConfig) error {
	ctx, cancel := context.WithTimeout(ctx, readyAttempt)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var one int
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil {
		return err
	}
	return conn.QueryRow(ctx, "SELECT current_setting('server_version')").Scan(&s.version)
}

// Stop shuts the server down and removes its directory: a fast shutdown
// (SIGINT), then SIGKILL to the postmaster, its process group and every
// backend once StopGrace has passed or ctx has ended. It waits, bounded, for
// the processes to go. Stop is idempotent and safe to call from several
// goroutines at once (a signal handler and a deferred cleanup, say): every
// call returns when the first has finished, and a call whose ctx is already
// done hurries a stop in progress straight to SIGKILL.
func (s *Server) Stop(ctx context.Context) error {
	if ctx.Err() != nil {
		s.hurryUp()
	} else {
		go func() {
			select {
			case <-ctx.Done():
				s.hurryUp()
			case <-s.stopped:
			}
		}()
	}
	s.stopOnce.Do(func() {
		s.stopErr = s.stop()
		close(s.stopped)
	})
	return s.stopErr
}

func (s *Server) hurryUp() { s.hurryOnce.Do(func() { close(s.hurry) }) }

func (s *Server) stop() error {
	var errs []error
	if s.cmd != nil && s.cmd.Process != nil {
		pid := s.cmd.Process.Pid
		kids := descendants(proc.Default(), pid)
		select {
		case <-s.exited:
		default:
			_ = s.cmd.Process.Signal(syscall.SIGINT) // fast shutdown
			grace := time.NewTimer(s.opts.StopGrace)
			select {
			case <-s.exited:
			case <-grace.C:
			case <-s.hurry:
			}
			grace.Stop()
		}
		select {
		case <-s.exited:
		default:
			kids = append(kids, descendants(proc.Default(), pid)...)
			killAll(pid, kids)
			select {
			case <-s.exited:
			case <-time.After(killWait):
				errs = append(errs, fmt.Errorf("postgres: postmaster %d still running after SIGKILL", pid))
			}
		}
		if left := waitGone(proc.Default(), kids, killWait); len(left) > 0 {
			killAll(pid, left)
			if left = waitGone(proc.Default(), left, killWait); len(left) > 0 {
				errs = append(errs, fmt.Errorf("postgres: server processes %v still running after SIGKILL", left))
			}
		}
	}
	if err := s.removeDir(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// removeDir deletes the server's directory.
func (s *Server) removeDir() error {
	if s.dir == "" {
		return nil
	}
	if err := tmpdir.Remove(s.dir); err != nil {
		return fmt.Errorf("postgres: remove %s: %w", s.dir, err)
	}
	return nil
}

// logTail returns the last lines of the server's log.
func (s *Server) logTail() string {
	f, err := os.Open(s.logPath)
	if err != nil {
		return "(no server log: " + err.Error() + ")"
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > logTailMaxRead {
		_, _ = f.Seek(fi.Size()-logTailMaxRead, 0)
	}
	b := make([]byte, logTailMaxRead)
	n, _ := f.Read(b)
	return tail(string(b[:n]), logTailLines)
}

// tail returns the last n lines of s, indented for inclusion in an error.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
