package load

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
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
