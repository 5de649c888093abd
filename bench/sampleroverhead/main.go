// Command sampleroverhead measures what package sample costs: it starts a
// tree of processes (a shell and its sleep children), samples the tree for a
// while at each of several intervals, and prints the sampler's own CPU
// (getrusage of this process, user+system, over wall time) as a percentage
// of one core. bench/sampler-overhead.sh builds and runs it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/benchrig/benchrig/internal/sample"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "sampleroverhead:", err)
		os.Exit(1)
	}
}

// run parses args, starts the tree, measures each interval and prints the
// table to stdout.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sampleroverhead", flag.ContinueOnError)
	fs.SetOutput(stderr)
	duration := fs.Duration("duration", 20*time.Second, "how long to sample at each interval (1s to 1h)")
	procs := fs.Int("procs", 100, "processes in the sampled tree: one shell and procs-1 sleep children (2 to 5000)")
	list := fs.String("intervals", "1s,100ms", "comma-separated sampling intervals, each at least "+sample.MinInterval.String())
	pgidFile := fs.String("pgid-file", "", "while the tree runs, write its process group id to this file (removed once the tree is ended)")
	pssEvery := fs.Duration("pss-interval", 0, "the sampler's PSSInterval (0: its default; up to the interval: PSS at every sample)")
	profile := fs.String("cpuprofile", "", "write a CPU profile of the measurements to this file")
	hold := fs.String("hold-file", "", "once the tree is full, write this file and wait for SIGUSR1 before measuring (to attach strace -c)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *duration < time.Second || *duration > time.Hour {
		return fmt.Errorf("-duration %v: want 1s to 1h", *duration)
	}
	if *pssEvery < 0 {
		return fmt.Errorf("-pss-interval %v: want 0 or more", *pssEvery)
	}
	if *procs < 2 || *procs > 5000 {
		return fmt.Errorf("-procs %d: want 2 to 5000", *procs)
	}
	intervals, err := parseIntervals(*list)
	if err != nil {
		return err
	}

	// The sleeps outlive the measurement only by a minute, whatever happens.
	life := time.Duration(len(intervals))*(*duration) + time.Minute
	tree, err := startTree(*procs, life, *pgidFile)
	if err != nil {
		return err
	}
	defer tree.stop()
	if err := tree.waitFull(ctx, *procs, 30*time.Second); err != nil {
		return err
	}

	if *hold != "" {
		if err := holdFor(ctx, *hold); err != nil {
			return err
		}
	}

	if *profile != "" {
		f, err := os.Create(*profile)
		if err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}

	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "interval\tsamples\tprocesses\tsampler CPU\t%% of one core\tCPU per sample\t\n")
	for _, iv := range intervals {
		m, err := measure(ctx, sample.Config{PID: tree.pid(), Interval: iv, PSSInterval: *pssEvery}, *duration)
		if err != nil {
			return err
		}
		fmt.Fprintf(tw, "%v\t%d\t%d\t%v\t%.2f %%\t%v\t\n", iv, m.samples, m.processes,
			m.cpu.Round(time.Millisecond), m.percent(), m.perSample().Round(time.Microsecond))
	}
	return tw.Flush()
}

// holdFor writes path and waits for SIGUSR1 (or the end of ctx): the
// script attaches strace to every thread meanwhile, so that the syscalls it
// counts are the measurement's only, not the tree's start.
func holdFor(ctx context.Context, path string) error {
	usr1 := make(chan os.Signal, 1)
	signal.Notify(usr1, syscall.SIGUSR1)
	defer signal.Stop(usr1)
	if err := os.WriteFile(path, []byte("ready\n"), 0o644); err != nil {
		return fmt.Errorf("-hold-file: %w", err)
	}
	select {
	case <-usr1:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// parseIntervals parses the -intervals list.
func parseIntervals(list string) ([]time.Duration, error) {
	var out []time.Duration
	for _, f := range strings.Split(list, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(f))
		if err != nil || d < sample.MinInterval {
			return nil, fmt.Errorf("-intervals %q: %q is not a duration of at least %v", list, f, sample.MinInterval)
		}
		out = append(out, d)
	}
	return out, nil
}

// result is the measurement of one interval.
type result struct {
	samples   int
	processes int
	cpu       time.Duration
	wall      time.Duration
}

func (r result) percent() float64 { return r.cpu.Seconds() / r.wall.Seconds() * 100 }

func (r result) perSample() time.Duration {
	if r.samples == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.samples)
}

// measure samples with cfg for d and returns the CPU this process used
// meanwhile.
func measure(ctx context.Context, cfg sample.Config, d time.Duration) (result, error) {
	iv := cfg.Interval
	c0, w0 := selfCPU(), time.Now()
	s, err := sample.Start(ctx, cfg)
	if err != nil {
		return result{}, fmt.Errorf("sample the tree at %v: %w", iv, err)
	}
	timer := time.NewTimer(d)
	select {
	case <-ctx.Done():
	case <-timer.C:
	}
	timer.Stop()
	samples := s.Stop()
	r := result{samples: len(samples), cpu: selfCPU() - c0, wall: time.Since(w0)}
	if err := ctx.Err(); err != nil {
		return r, err
	}
	if st := s.Status(); st.RootExited || st.Errors > 0 {
		return r, fmt.Errorf("sampling at %v: the tree's root exited or readings failed: %+v", iv, st)
	}
	for _, x := range samples {
		r.processes = max(r.processes, x.Processes)
	}
	return r, nil
}

// selfCPU returns the user+system CPU time of this process.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// tree is a shell with sleep children, in a process group of its own.
type tree struct {
	cmd      *exec.Cmd
	pgidFile string
}

// startTree starts a shell that starts n-1 sleeps of the given life and
// waits for them.
func startTree(n int, life time.Duration, pgidFile string) (*tree, error) {
	const script = `i=0; while [ "$i" -lt "$1" ]; do sleep "$2" & i=$((i+1)); done; wait`
	cmd := exec.Command("sh", "-c", script, "sh", strconv.Itoa(n-1), strconv.Itoa(int(life.Seconds())))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the process tree: %w", err)
	}
	t := &tree{cmd: cmd}
	if pgidFile != "" {
		if err := os.WriteFile(pgidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
			t.stop()
			return nil, fmt.Errorf("write -pgid-file: %w", err)
		}
		t.pgidFile = pgidFile
	}
	return t, nil
}

func (t *tree) pid() int { return t.cmd.Process.Pid }

// waitFull waits until the tree has n live processes.
func (t *tree) waitFull(ctx context.Context, n int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		s, err := sample.Start(ctx, sample.Config{PID: t.pid(), Interval: time.Hour})
		if err != nil {
			return fmt.Errorf("sample the tree: %w", err)
		}
		got := s.Stop()
		if len(got) > 0 && got[0].Processes >= n {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the tree has %d processes after %v, want %d", got[0].Processes, limit, n)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// stop kills the tree's process group and reaps the shell. The shell leads
// the group and is reaped only after the kill, so the group id cannot have
// been reused by then.
func (t *tree) stop() {
	if err := syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		fmt.Fprintln(os.Stderr, "sampleroverhead: end the process tree:", err)
	}
	_ = t.cmd.Wait()
	if t.pgidFile != "" {
		_ = os.Remove(t.pgidFile)
	}
}
