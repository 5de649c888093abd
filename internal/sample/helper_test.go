//go:build linux

package sample

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv selects a helper mode when the test binary re-executes itself
// as a child process to be sampled.
const helperEnv = "BENCHRIG_SAMPLE_HELPER"

// helperLife bounds every helper's life, whatever happens to the test.
const helperLife = 60 * time.Second

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	os.Exit(m.Run())
}

// runHelper runs one helper mode. Helpers take commands on stdin, one a line,
// answer on stdout, and exit at EOF on stdin (so they die with their parent)
// or after helperLife.
func runHelper(mode string) int {
	time.AfterFunc(helperLife, func() { os.Exit(3) })
	in := bufio.NewScanner(os.Stdin)
	switch mode {
	case "burn":
		// One goroutine spins on one P: exactly one core while the machine
		// has one to give. Commands: "cpu" → own CPU time in ns.
		runtime.GOMAXPROCS(1)
		go func() {
			for in.Scan() {
				fmt.Println(selfCPU().Nanoseconds())
			}
			os.Exit(0)
		}()
		fmt.Println("ready")
		for n := 0; ; n++ {
			if n%1_000_000 == 0 {
				runtime.Gosched()
			}
		}
	case "alloc":
		// "alloc" → map and fault in 200 MiB of private anonymous memory,
		// answer "ready". The kernel touches the pages (MAP_POPULATE), so
		// that the race detector's shadow memory does not add to the RSS.
		fmt.Println("ready")
		for in.Scan() {
			mem, err := syscall.Mmap(-1, 0, allocBytes, syscall.PROT_READ|syscall.PROT_WRITE,
				syscall.MAP_ANON|syscall.MAP_PRIVATE|syscall.MAP_POPULATE)
			if err != nil {
				fmt.Println(err)
				continue
			}
			defer syscall.Munmap(mem)
			fmt.Println("ready")
		}
	case "leaf":
		// Touch leafBytes and use leafCPU of CPU, answer "ready", then wait.
		keep := make([]byte, leafBytes)
		for i := 0; i < len(keep); i += os.Getpagesize() {
			keep[i] = 1
		}
		spin(leafCPU)
		fmt.Println("ready")
		_, _ = io.Copy(io.Discard, os.Stdin)
		runtime.KeepAlive(keep)
	case "tree":
		return treeHelper(in)
	case "exit":
		// "exit" → exit at once.
		fmt.Println("ready")
		in.Scan()
	default:
		fmt.Fprintf(os.Stderr, "unknown helper mode %q\n", mode)
		return 2
	}
	return 0
}

// Sizes of the helpers' work.
const (
	allocBytes = 200 << 20
	leafBytes  = 20 << 20
	leafCPU    = 200 * time.Millisecond
	leaves     = 4
)

// treeHelper starts leaves leaf children and answers "ready" when all are.
// "reap" → ends the children, waits for them and answers "reaped N" with N
// the CPU nanoseconds of itself and its reaped children.
func treeHelper(in *bufio.Scanner) int {
	type leaf struct {
		cmd   *exec.Cmd
		stdin io.WriteCloser
	}
	var kids []leaf
	ready := make(chan string, leaves)
	defer func() {
		for _, k := range kids {
			_ = k.cmd.Process.Kill()
			_ = k.cmd.Wait()
		}
	}()
	for range leaves {
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), helperEnv+"=leaf")
		stdin, err := cmd.StdinPipe()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		kids = append(kids, leaf{cmd, stdin})
		go func() {
			line, _ := bufio.NewReader(out).ReadString('\n')
			ready <- strings.TrimSpace(line)
		}()
	}
	for range kids {
		if line := <-ready; line != "ready" {
			fmt.Fprintf(os.Stderr, "leaf said %q\n", line)
			return 1
		}
	}
	fmt.Println("ready")
	for in.Scan() {
		if in.Text() != "reap" {
			continue
		}
		for _, k := range kids {
			_ = k.stdin.Close()
			_ = k.cmd.Wait()
		}
		kids = nil
		var self, children syscall.Rusage
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &self)
		_ = syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
		total := tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime)
		fmt.Println("reaped", total.Nanoseconds())
	}
	return 0
}

// spin uses CPU in user mode until this process has used d in all.
func spin(d time.Duration) {
	x := 0
	for selfCPU() < d {
		for i := range 1_000_000 {
			x += i
		}
	}
	runtime.KeepAlive(x)
}

// selfCPU returns the user+system CPU time of this process.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return tv(ru.Utime) + tv(ru.Stime)
}

func tv(t syscall.Timeval) time.Duration {
	return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
}

// helper is a running helper process, seen from the test.
type helper struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string
}

// startHelper starts the test binary in the given helper mode, in its own
// process group, waits for its "ready" and ends the whole group at cleanup.
func startHelper(t *testing.T, mode string) *helper {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), helperEnv+"="+mode)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start helper %s: %v", mode, err)
	}
	h := &helper{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 16)}
	t.Cleanup(func() {
		_ = stdin.Close()
		// The group is ours: the helper leads it and stays unreaped
		// until Wait below, so its number cannot have been reused.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			h.lines <- sc.Text()
		}
		close(h.lines)
	}()
	if line := h.read(); line != "ready" {
		t.Fatalf("helper %s said %q, want ready", mode, line)
	}
	return h
}

// read returns the helper's next line, failing the test after 30 s.
func (h *helper) read() string {
	h.t.Helper()
	select {
	case line, ok := <-h.lines:
		if !ok {
			h.t.Fatalf("helper exited")
		}
		return line
	case <-time.After(30 * time.Second):
		h.t.Fatalf("helper did not answer within 30 s")
	}
	return ""
}

// ask sends one command and returns the answer.
func (h *helper) ask(cmd string) string {
	h.t.Helper()
	if _, err := fmt.Fprintln(h.stdin, cmd); err != nil {
		h.t.Fatalf("send %q to helper: %v", cmd, err)
	}
	return h.read()
}
