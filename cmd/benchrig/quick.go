package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/driver"
	httpdrv "github.com/benchrig/benchrig/internal/driver/http"
	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/report"
	"github.com/benchrig/benchrig/internal/result"
	runner "github.com/benchrig/benchrig/internal/run"
	"github.com/benchrig/benchrig/internal/target"
	"github.com/benchrig/benchrig/internal/tmpdir"
)

func toolInfo() result.Tool {
	t := result.ReadTool(version)
	if commit != "" {
		t.Commit, t.Dirty = strings.TrimSuffix(commit, "-dirty"), strings.HasSuffix(commit, "-dirty")
	}
	return t
}

// targetFlags are the quick modes' flags for the server side: start a
// target, or attach to a running one, and the phases around the load.
type targetFlags struct {
	command      string
	cpus         string
	startTimeout time.Duration
	attachPID    int
	attachPort   int
	clientCPUs   string
	interval     time.Duration
	noPSS        bool   // --no-pss
	logDir       string // the --target's log directory, made per run
	baseline     time.Duration
	settle       time.Duration
	recovery     time.Duration
}

func (t *targetFlags) register(c *cobra.Command) {
	f := c.Flags()
	f.StringVar(&t.command, "target", "", "start this server command fresh for the run (its own process group; gets PORT=<the URL's port>), sample it, stop it")
	f.StringVar(&t.cpus, "target-cpus", "", "pin the --target to this CPU list (e.g. 0)")
	f.DurationVar(&t.startTimeout, "start-timeout", 10*time.Second, "how long --target may take to accept connections")
	f.IntVar(&t.attachPID, "attach-pid", 0, "sample this running server (and its children) without starting or stopping it")
	f.IntVar(&t.attachPort, "attach-port", 0, "sample the running server listening on this TCP port")
	f.StringVar(&t.clientCPUs, "client-cpus", "", "pin benchrig's load generation to this CPU list (GOMAXPROCS follows)")
	f.DurationVar(&t.interval, "sample-interval", time.Second, "server resource sampling period (≥ 100ms)")
	f.BoolVar(&t.noPSS, "no-pss", false, "do not read the server's PSS (RSS only): each reading of a big multi-process server costs the client CPU")
	f.DurationVar(&t.baseline, "baseline", 0, "idle phase sampled before the load (default with a target: 1.5s)")
	f.DurationVar(&t.settle, "settle", 0, "idle phase between warm-up and load (default with a target: 6s at a rate, else 1s)")
	f.DurationVar(&t.recovery, "recovery", 0, "idle phase sampled after the load (default with a target: 30s at a rate, else 5s)")
}

func (t *targetFlags) serverSide() bool {
	return t.command != "" || t.attachPID != 0 || t.attachPort != 0
}

// phases resolves the phases: seed 002's defaults for rate runs with a
// target, shorter ones for closed loop, and only warm-up + load without a
// server to sample.
func (t *targetFlags) phases(c *cobra.Command, q *quickFlags, rate bool, w load.Window) (runner.Phases, error) {
	f := c.Flags()
	p := runner.Phases{Load: w.Duration, Requests: w.Requests, Warmup: q.warmup}
	if t.serverSide() {
		p.Baseline, p.Settle, p.Recovery = 1500*time.Millisecond, time.Second, 5*time.Second
		if rate {
			d := runner.RatePhases()
			p.Settle, p.Recovery = d.Settle, d.Recovery
			if !f.Changed("warmup") {
				p.Warmup = d.Warmup
			}
		}
	}
	for _, o := range []struct {
		name string
		v    time.Duration
		dst  *time.Duration
	}{{"baseline", t.baseline, &p.Baseline}, {"settle", t.settle, &p.Settle}, {"recovery", t.recovery, &p.Recovery}} {
		if f.Changed(o.name) {
			if o.v < 0 {
				return p, usagef("--%s must be ≥ 0, got %s", o.name, o.v)
			}
			*o.dst = o.v
		}
	}
	return p, nil
}

// validate checks the target flags against each other.
func (t *targetFlags) validate(c *cobra.Command) error {
	n := 0
	for _, set := range []bool{t.command != "", t.attachPID != 0, t.attachPort != 0} {
		if set {
			n++
		}
	}
	if n > 1 {
		return usagef("give one of --target, --attach-pid and --attach-port")
	}
	if t.attachPID < 0 {
		return usagef("--attach-pid must be a process ID > 0, got %d", t.attachPID)
	}
	if t.attachPort < 0 || t.attachPort > 65535 {
		return usagef("--attach-port must be 1–65535, got %d", t.attachPort)
	}
	if t.interval < 100*time.Millisecond {
		return usagef("--sample-interval must be ≥ 100ms, got %s", t.interval)
	}
	if t.startTimeout <= 0 {
		return usagef("--start-timeout must be > 0, got %s", t.startTimeout)
	}
	for name, list := range map[string]string{"--target-cpus": t.cpus, "--client-cpus": t.clientCPUs} {
		if list != "" {
			if _, err := target.ParseCPUList(list); err != nil {
				return usagef("%s %q: %v", name, list, err)
			}
		}
	}
	if t.cpus != "" && t.command == "" {
		return usagef("--target-cpus needs --target")
	}
	if t.command != "" {
		if _, err := splitCommand(t.command); err != nil {
			return usagef("--target: %v", err)
		}
	}
	return nil
}

// fill sets the target side of a run spec: a Starter for --target, the
// attached process for --attach-*.
func (t *targetFlags) fill(spec *runner.Spec, addr string) error {
	spec.SamplerInterval, spec.SamplerNoPSS = t.interval, t.noPSS
	spec.ClientCPUs = t.clientCPUs
	switch {
	case t.command != "":
		argv, _ := splitCommand(t.command)
		_, port, _ := net.SplitHostPort(addr)
		ts := target.Spec{Argv: argv, Env: []string{"PORT=" + port}, CPUs: t.cpus, StartTimeout: t.startTimeout}
		spec.Start = func(ctx context.Context) (runner.Target, *result.TargetInfo, error) {
			info := &result.TargetInfo{Name: filepath.Base(argv[0]), Kind: "command", Argv: argv}
			dir, err := tmpdir.New("", "target")
			if err != nil {
				return nil, info, err
			}
			t.logDir, ts.LogDir = dir, dir
			p, err := target.Start(ctx, ts, target.TCPProbe{Addr: addr})
			if err != nil {
				return nil, info, err
			}
			info.PID, info.CPUs, info.LogPath = p.PID(), p.CPUs(), p.LogPath()
			if bin, err := resolveBinary(argv[0]); err == nil {
				info.Binary = bin
			}
			return p, info, nil
		}
	case t.attachPID != 0 || t.attachPort != 0:
		pid := t.attachPID
		if t.attachPort != 0 {
			p, err := target.PIDListeningOn(t.attachPort)
			if err != nil {
				return err
			}
			pid = p
		}
		a, err := target.Attach(pid)
		if err != nil {
			return err
		}
		spec.Attach = a
		spec.AttachInfo = &result.TargetInfo{Name: a.Comm(), Kind: "attach", PID: pid}
	}
	return nil
}

// cleanup removes the --target's log directory: the result keeps the log's
// last lines when the target failed mid-run. A sample that failed before
// any figures (the target did not start, a pre-check failed) keeps its log,
// since the error names it.
func (t *targetFlags) cleanup(s *result.Sample) {
	if t.logDir == "" {
		return
	}
	if entries, _ := os.ReadDir(t.logDir); s.Error != "" && len(entries) > 0 {
		return
	}
	_ = os.RemoveAll(t.logDir)
	if s.Target != nil {
		s.Target.LogPath = ""
	}
}

// runQuick measures one sample with the live status line.
func runQuick(ctx context.Context, spec runner.Spec, stderr io.Writer) *result.Sample {
	st := newStatus(stderr, "")
	spec.OnPhase = st.setPhase
	spec.OnEngine = st.setEngine
	s := runner.Measure(ctx, spec)
	st.stop()
	return s
}

// finishQuick prints the report (or JSON), writes -o, and maps the sample
// to the exit code.
func finishQuick(s *result.Sample, q *quickFlags, title string, stdout io.Writer) error {
	doc := result.Quick{Schema: result.QuickSchema, Tool: toolInfo(), Host: result.ReadHost(), Args: redactArgs(os.Args[1:]), Sample: *s}
	if q.out != "" {
		if err := writeJSONFile(q.out, doc); err != nil {
			return err
		}
	}
	if q.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return err
		}
	} else {
		if err := report.Terminal(stdout, s, report.TerminalOptions{Title: title, ShowVerdict: q.failUnhealthy || s.Server != nil}); err != nil {
			return err
		}
		if q.out != "" {
			fmt.Fprintf(stdout, "\nResult written to %s\n", q.out)
		}
	}
	if s.Error != "" {
		return fmt.Errorf("%s", s.Error)
	}
	if s.Load != nil && s.Load.Interrupted {
		return fmt.Errorf("interrupted: the figures above cover the %.1f s that ran", s.Load.Seconds)
	}
	if q.failUnhealthy && !s.Verdict.Healthy {
		return errUnhealthy
	}
	return nil
}

// quickSpec builds the run spec shared by the quick modes.
func quickSpec(protocol string, conf any, cfg load.Config, phases runner.Phases, drv driver.Driver, q *quickFlags) (runner.Spec, error) {
	b, err := json.Marshal(conf)
	if err != nil {
		return runner.Spec{}, err
	}
	return runner.Spec{Protocol: protocol, Config: b, Driver: drv, Engine: cfg, Phases: phases, Thresholds: q.thresholds()}, nil
}

// writeJSONFile writes v atomically: a temp file in the same directory,
// synced, then renamed over path.
func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// redactArgs returns the command line with the values of secret headers
// (-H 'Authorization: …') replaced, for recording.
func redactArgs(args []string) []string {
	out := append([]string(nil), args...)
	redact := func(h string) string {
		if k, _, ok := strings.Cut(h, ":"); ok && httpdrv.IsSecretHeader(k) {
			return k + ": " + httpdrv.RedactedValue
		}
		return h
	}
	for i := 0; i < len(out); i++ {
		a := out[i]
		switch {
		case (a == "-H" || a == "--header") && i+1 < len(out):
			out[i+1] = redact(out[i+1])
			i++
		case strings.HasPrefix(a, "--header="):
			out[i] = "--header=" + redact(strings.TrimPrefix(a, "--header="))
		case strings.HasPrefix(a, "-H") && len(a) > 2:
			out[i] = "-H" + redact(a[2:])
		}
	}
	return out
}
