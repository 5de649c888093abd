//go:build linux

package sample

import (
	"bufio"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReaderAgreesWithLegacy reads a real, stopped process tree (shells,
// sleeps, a zombie, a multi-threaded Go helper with CPU and memory) with the
// reader in both modes and with the reader it replaced, and checks that
// every figure of the readings is the same. The tree is stopped (SIGSTOP),
// so nothing in it moves between the readings.
func TestReaderAgreesWithLegacy(t *testing.T) {
	needProc(t)
	const script = `sleep 0 & (sleep 600 & sleep 600 & wait) & sleep 600 | "$0" & exec sleep 600`
	cmd := exec.Command("sh", "-c", script, os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"=leaf")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	old, err := newLegacyReader(DefaultRoot)
	if err != nil {
		t.Fatal(err)
	}
	// Wait for the whole tree (6 live processes, the leaf's Go runtime
	// started, the zombie), then stop it.
	var start uint64
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, _ := newReader(DefaultRoot)
		start, err = r.rootStart(pid)
		if err == nil {
			tr, err := old.read(pid, start, nil, false, time.Now())
			if err == nil && !tr.rootGone && tr.processes == 6 && tr.threads > 6 && len(tr.procs) == 7 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tree did not start within 30 s: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := syscall.Kill(-pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	for stopped := false; !stopped; {
		tr, err := old.read(pid, start, nil, false, time.Now())
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("the tree did not stop: %v", err)
		}
		stopped = true
		for p, info := range tr.procs {
			if !info.zombie && !allThreadsStopped(p) {
				stopped = false
			}
		}
		if !stopped {
			time.Sleep(time.Millisecond)
		}
	}

	for _, mode := range []readMode{modeWalk, modeScan} {
		r, err := newReader(DefaultRoot)
		if err != nil {
			t.Fatal(err)
		}
		r.mode = mode
		for reading := range 3 { // the second and third through held files
			stable, matched, mismatch := 0, false, ""
			for try := 0; try < 20 && !matched; try++ {
				before, err := old.read(pid, start, nil, true, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				got, err := r.read(pid, start, nil, true, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				after, err := old.read(pid, start, nil, true, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				if !sameTree(before, after) {
					t.Fatalf("the stopped tree changed between two legacy readings:\n%+v\n%+v", before, after)
				}
				if !sameTree(got, before) {
					t.Errorf("%v, reading %d: reader\n%+v\nlegacy reader\n%+v", mode, reading, got, before)
				}
				// PSS moves with every process that maps or unmaps the
				// same files anywhere on the machine (libc's pages are
				// shared by every process): compare it when the legacy
				// readings around agree, and since it may have moved and
				// come back between them, fail only when no such try
				// agreed.
				if before.pss == after.pss {
					stable++
					if got.pss == before.pss && got.pssUnavailable == before.pssUnavailable {
						matched = true
					} else {
						mismatch = fmt.Sprintf("PSS %d (unavailable %v), legacy %d (%v)", got.pss, got.pssUnavailable, before.pss, before.pssUnavailable)
					}
				}
			}
			switch {
			case matched:
			case stable > 0:
				t.Errorf("%v, reading %d: in none of %d tries with the legacy readings around agreeing did the reader agree; last: %s", mode, reading, stable, mismatch)
			default:
				t.Logf("%v, reading %d: PSS moved at every try (a busy machine): not compared", mode, reading)
			}
		}
		if mode == modeWalk && r.held < 1+6*2 {
			t.Errorf("walk mode holds %d descriptors, want at least stat, schedstat and children of the 6 live processes", r.held)
		}
		r.close()
		if r.held != 0 || len(r.procs) != 0 {
			t.Errorf("after close: %d descriptors held, %d processes", r.held, len(r.procs))
		}
	}
}

// allThreadsStopped reports whether every thread of process p is in the
// stopped state: a group stop reaches the threads one by one, and a thread
// still running moves its schedstat between two readings.
func allThreadsStopped(p int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", p))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", p, task.Name()))
		if err != nil || !strings.Contains(string(b), ") T ") {
			return false
		}
	}
	return true
}

// sameTree compares two readings, PSS aside.
func sameTree(a, b tree) bool {
	return a.rootGone == b.rootGone && maps.Equal(a.procs, b.procs) && a.rss == b.rss &&
		a.threads == b.threads && a.processes == b.processes && maps.Equal(a.sched, b.sched) &&
		a.schedUnavailable == b.schedUnavailable && a.pssRead == b.pssRead
}

// TestRealChildrenFollowed: children that a tree process starts are in the
// next sample, grandchildren too; one that exits and is reaped leaves it,
// and its files are closed.
func TestRealChildrenFollowed(t *testing.T) {
	needProc(t)
	const script = `while read -r cmd arg; do
	case $cmd in
	spawn) sleep 600 & echo $! ;;
	spawn2) sh -c 'sleep 600 & wait' & echo $! ;;
	kill) kill "$arg"; wait "$arg"; echo done ;;
	esac
done`
	cmd := exec.Command("sh", "-c", script)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = in.Close()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	out := bufio.NewReader(outPipe)
	ask := func(line string) string {
		t.Helper()
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			t.Fatal(err)
		}
		answer, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		return strings.TrimSpace(answer)
	}
	s, err := Start(t.Context(), Config{Interval: never, PID: cmd.Process.Pid, NoPSS: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if mode := s.reader.mode; mode != modeWalk {
		if _, err := os.Stat(filepath.Join("/proc", fmt.Sprint(os.Getpid()), "task", fmt.Sprint(os.Getpid()), "children")); err == nil {
			t.Errorf("reader in %v mode where the kernel has children files", mode)
		}
	}
	processes := func(want int) {
		t.Helper()
		s.Mark("x")
		// The sleeps are forked before the shell answers, but a forked
		// shell starts its own sleep a moment later: allow it a few marks.
		for i := 0; i < 500; i++ {
			if x, _ := s.Last(); x.Processes == want {
				return
			}
			time.Sleep(10 * time.Millisecond)
			s.Mark("x")
		}
		x, _ := s.Last()
		t.Fatalf("%d processes in the tree, want %d", x.Processes, want)
	}
	a := ask("spawn")
	s.Mark("spawned")
	if x, _ := s.Last(); x.Processes != 2 {
		t.Errorf("the sample after the spawn has %d processes, want 2: a child appears within one sample", x.Processes)
	}
	ask("spawn2")
	processes(4)
	if ask("kill "+a) != "done" {
		t.Fatal("the shell did not reap its child")
	}
	processes(3)
	var pid int
	fmt.Sscan(a, &pid)
	s.mu.Lock()
	_, kept := s.reader.procs[pid]
	s.mu.Unlock()
	if kept {
		t.Errorf("the reaped child %d is still among the reader's processes", pid)
	}
}
