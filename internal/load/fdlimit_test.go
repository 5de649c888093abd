package load

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/result"
)

// TestFDLimitSaysHowToRaiseIt: more connections than the file-descriptor
// limit allows are refused before any is opened, with the limit and the
// `ulimit -n` that would do; a "too many open files" while opening gets the
// same advice instead of the bare errno.
func TestFDLimitSaysHowToRaiseIt(t *testing.T) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if err := checkFDs(10); err != nil {
		t.Errorf("10 connections refused: %v", err)
	}
	err := checkFDs(int(lim.Cur))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("over the limit of %d (RLIMIT_NOFILE)", lim.Cur)) || !strings.Contains(err.Error(), "ulimit -n ") {
		t.Errorf("%d connections: %v", lim.Cur, err)
	}
	wrapped := fmt.Errorf("connect: %w", syscall.EMFILE)
	if h := fdHint(wrapped, 2000); !strings.Contains(h, "out of file descriptors: 2000 connections") || !strings.Contains(h, "ulimit -n") {
		t.Errorf("hint for EMFILE: %q", h)
	}
	if h := fdHint(syscall.ECONNREFUSED, 2000); h != "" {
		t.Errorf("hint for another error: %q", h)
	}
}

// loopFailDriver multiplexes; its last event loop fails as a driver does,
// numbering the connection within the loop ("connection 14 of 1000").
type loopFailDriver struct {
	fakeDriver
	loops, opened int
}

type idleLoop struct{}

func (idleLoop) Run(ctx context.Context, pipeline int, deadline int64, w driver.LoopWork) error {
	return nil
}
func (idleLoop) Close() error { return nil }

func (d *loopFailDriver) OpenLoop(ctx context.Context, conns int) (driver.Loop, error) {
	d.opened++
	if d.opened == d.loops {
		return nil, fmt.Errorf("connection 14 of %d: connect: %w", conns, syscall.EMFILE)
	}
	return idleLoop{}, nil
}

// TestLoopOpenErrorNamesTheConnections: with -c 2000 over two event loops,
// a failure in the second used to read "connection 14 of 1000" (here 200
// connections, within any file-descriptor limit); the
// engine's error now says which of the 200 they are and how to get more
// file descriptors.
func TestLoopOpenErrorNamesTheConnections(t *testing.T) {
	d := &loopFailDriver{loops: min(UsableCores(), 200)}
	e, err := New(Config{EngineConfig: result.EngineConfig{Connections: 200, Pipeline: 1}}, d)
	if err != nil {
		t.Fatal(err)
	}
	err = e.Open(context.Background())
	n := d.loops
	want := fmt.Sprintf("open 200 connections (event loop %d of %d, connections %d–200): connection 14 of %d", n, n, 200-200/n+1, 200/n)
	if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "ulimit -n") {
		t.Errorf("got %v, want %q and the ulimit advice", err, want)
	}
}
