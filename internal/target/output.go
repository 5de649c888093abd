package target

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/secret"
)

// Command is a short-lived program benchrig runs for what it prints: a
// runtime's version, a work tree's git revision. See Output.
type Command struct {
	// Argv is the program and its arguments; Argv[0] is looked up in
	// $PATH when it has no slash.
	Argv []string
	// Env holds KEY=VALUE entries added to benchrig's environment without
	// its withheld variables (secret.Environ); later entries win.
	Env []string
	// Dir is the working directory; empty means benchrig's.
	Dir string
	// Timeout bounds the run; 0 means DefaultOutputTimeout.
	Timeout time.Duration
}

// DefaultOutputTimeout bounds a Command without a Timeout.
const DefaultOutputTimeout = 5 * time.Second

// MaxOutput bounds what Output keeps of each of stdout and stderr; the
// rest is read and dropped, so a chatty program never blocks on a full
// pipe.
const MaxOutput = 64 << 10

// outputDrain bounds the reading of a command's last output once its
// whole tree has been killed (the pipes then close at once; this only
// matters if something survived the kill).
const outputDrain = time.Second

// Output runs c as Start runs a target: under a watchdog, as the leader of
// its own process group, with nothing of benchrig's withheld environment.
// Its whole tree (a server it forked, a setsid grandchild) is killed once
// it exits, once c.Timeout passes or ctx ends, and when benchrig dies,
// kill -9 included: nothing it started outlives the call. It returns the
// first MaxOutput bytes of its stdout and of its stderr (what it printed
// before it ended, also on failure) and an error when it could not start,
// did not exit with status 0 ("exit status 2"), or passed the timeout (an
// error wrapping context.DeadlineExceeded).
func Output(ctx context.Context, c Command) (stdout, stderr []byte, err error) {
	if len(c.Argv) == 0 || c.Argv[0] == "" {
		return nil, nil, errors.New("no program to run")
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultOutputTimeout
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	path := c.Argv[0]
	if !strings.Contains(path, "/") {
		if path, err = exec.LookPath(path); err != nil {
			return nil, nil, startCause(err)
		}
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, nil, err
	}
	w, err := spawn(path, c.Argv, append(secret.Environ(), c.Env...), c.Dir, outW, errW, nil, nil)
	outW.Close() // the watchdog and the program have their own copies
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, nil, startCause(err)
	}
	var so, se cappedBuffer
	drained := make(chan struct{}, 2)
	for _, p := range []struct {
		r *os.File
		b *cappedBuffer
	}{{outR, &so}, {errR, &se}} {
		go func() {
			_, _ = io.Copy(p.b, p.r)
			drained <- struct{}{}
		}()
	}

	// The watchdog's reports: the leader's end, then its own exit once the
	// tree has been emptied.
	exit := make(chan string, 1)
	wdDone := make(chan struct{})
	go func() {
		for {
			line, err := w.next()
			if err != nil {
				break
			}
			if st, ok := strings.CutPrefix(line, "exit "); ok {
				select {
				case exit <- st:
				default:
				}
			}
		}
		_ = w.wd.Wait()
		w.statusFile.Close()
		close(wdDone)
	}()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var status string
	select {
	case status = <-exit:
		if status != "exit status 0" {
			err = errors.New(status)
		}
	case <-timer.C:
		err = fmt.Errorf("no answer within %s: %w", timeout, context.DeadlineExceeded)
	case <-ctx.Done():
		err = ctx.Err()
	case <-wdDone:
		err = errors.New("its watchdog ended")
	}
	// Closing the control pipe makes the watchdog kill the whole tree,
	// whatever the leader left running, then exit.
	w.ctl.Close()
	select {
	case <-wdDone:
	case <-time.After(wdKillTimeout + time.Second):
		_ = w.wd.Process.Kill()
		<-wdDone
	}
	deadline := time.Now().Add(outputDrain)
	_ = outR.SetReadDeadline(deadline)
	_ = errR.SetReadDeadline(deadline)
	<-drained
	<-drained
	outR.Close()
	errR.Close()
	return so.Bytes(), se.Bytes(), err
}

// cappedBuffer keeps the first MaxOutput bytes written to it and drops the
// rest (it never fails, so a writer is never stopped by it).
type cappedBuffer struct{ buf bytes.Buffer }

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := MaxOutput - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// Bytes returns what was kept.
func (c *cappedBuffer) Bytes() []byte { return c.buf.Bytes() }
