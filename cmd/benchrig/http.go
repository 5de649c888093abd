package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/spf13/cobra"

	httpdrv "github.com/benchrig/benchrig/internal/driver/http"
	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/result"
	runner "github.com/benchrig/benchrig/internal/run"
	"github.com/benchrig/benchrig/internal/suite"
)

// quickFlags are the flags every quick mode (http, pg, resp) shares.
type quickFlags struct {
	connections int
	duration    time.Duration
	requests    int64
	pipeline    int
	warmup      time.Duration
	out         string
	json        bool

	rate          float64
	arrival       string
	seed          uint64
	maxBacklog    int
	failUnhealthy bool
	maxP99        time.Duration
	minCoverage   float64
}

func (q *quickFlags) register(c *cobra.Command, defaultConns int) {
	f := c.Flags()
	f.IntVarP(&q.connections, "connections", "c", defaultConns, "connections (workers); default 32 with --rate")
	f.DurationVarP(&q.duration, "duration", "d", 10*time.Second, "length of the recorded load window")
	f.Int64VarP(&q.requests, "requests", "n", 0, "stop after this many requests (alone: no duration bound)")
	f.IntVarP(&q.pipeline, "pipeline", "p", 1, "requests in flight per connection (closed loop)")
	f.DurationVar(&q.warmup, "warmup", 0, "load run before the window and not recorded")
	f.StringVarP(&q.out, "out", "o", "", "write the result as JSON to this file")
	f.BoolVar(&q.json, "json", false, "print the result as JSON to stdout instead of tables")
	f.Float64VarP(&q.rate, "rate", "R", 0, "constant arrival rate in requests per second across all connections (open loop)")
	f.StringVar(&q.arrival, "arrival", "constant", "arrivals in rate mode: constant or poisson")
	f.Uint64Var(&q.seed, "seed", 1, "seed for poisson arrivals")
	f.IntVar(&q.maxBacklog, "max-backlog", 0, "due requests that may wait for a free connection before sends are dropped (default rate × 1 s)")
	f.BoolVar(&q.failUnhealthy, "fail-unhealthy", false, "exit with code 3 when the run is UNHEALTHY")
	f.DurationVar(&q.maxP99, "max-p99", 250*time.Millisecond, "health threshold: largest acceptable p99 (corrected in rate mode)")
	f.Float64Var(&q.minCoverage, "min-coverage", 95, "health threshold: least target coverage in percent (rate mode)")
}

// resolve checks the shared flags and returns the engine config and window.
func (q *quickFlags) resolve(c *cobra.Command) (load.Config, load.Window, error) {
	f := c.Flags()
	cfg := load.Config{Connections: q.connections, Pipeline: q.pipeline, Arrival: q.arrival, Seed: q.seed, MaxBacklog: q.maxBacklog}
	w := load.Window{Duration: q.duration, Requests: q.requests}
	if f.Changed("rate") {
		if !(q.rate > 0) || math.IsInf(q.rate, 0) {
			return cfg, w, usagef("--rate must be > 0 requests per second, got %v", q.rate)
		}
		cfg.Rate = q.rate
		if !f.Changed("connections") {
			cfg.Connections = 32
		}
	}
	if q.connections < 1 {
		return cfg, w, usagef("--connections must be ≥ 1, got %d", q.connections)
	}
	if f.Changed("duration") && q.duration <= 0 {
		return cfg, w, usagef("--duration must be > 0 (e.g. 10s, 500ms), got %s", q.duration)
	}
	if q.requests < 0 || f.Changed("requests") && q.requests == 0 {
		return cfg, w, usagef("--requests must be ≥ 1, got %d", q.requests)
	}
	if q.pipeline < 1 {
		return cfg, w, usagef("--pipeline must be ≥ 1, got %d", q.pipeline)
	}
	if q.warmup < 0 {
		return cfg, w, usagef("--warmup must be ≥ 0, got %s", q.warmup)
	}
	if f.Changed("max-backlog") && q.maxBacklog < 1 {
		return cfg, w, usagef("--max-backlog must be ≥ 1, got %d", q.maxBacklog)
	}
	if q.arrival != "constant" && q.arrival != "poisson" {
		return cfg, w, usagef("--arrival must be constant or poisson, got %q", q.arrival)
	}
	if q.minCoverage < 0 || q.minCoverage > 100 {
		return cfg, w, usagef("--min-coverage must be 0–100, got %v", q.minCoverage)
	}
	if q.requests > 0 && !f.Changed("duration") {
		w.Duration = 0 // a count alone bounds the window
	}
	if cfg.Rate > 0 {
		if q.pipeline > 1 {
			return cfg, w, usagef("--pipeline %d cannot be combined with --rate: each request is sent when due", q.pipeline)
		}
		if f.Changed("requests") && f.Changed("duration") {
			if want := cfg.Rate * q.duration.Seconds(); math.Abs(float64(q.requests)-want) >= 1 {
				return cfg, w, usagef("--requests %d contradicts --rate %v × --duration %s = %.0f requests: give --duration or --requests, not both",
					q.requests, cfg.Rate, q.duration, want)
			}
		}
	} else if f.Changed("arrival") || f.Changed("max-backlog") {
		return cfg, w, usagef("--arrival and --max-backlog need --rate")
	}
	return cfg, w, nil
}

func (q *quickFlags) thresholds() result.Thresholds {
	th := result.DefaultThresholds()
	th.P99 = q.maxP99
	th.Coverage = q.minCoverage
	return th
}

type httpFlags struct {
	quickFlags
	targetFlags
	method       string
	headers      []string
	body         string
	timeout      time.Duration
	expectStatus int
	expectBody   string
	contains     string
}

func httpCmd(ctx context.Context, stdout, stderr io.Writer) *cobra.Command {
	var hf httpFlags
	c := &cobra.Command{
		Use:   "http URL",
		Short: "Quick one-shot HTTP/1.1 load test (closed loop, or constant rate with -R)",
		Example: `  benchrig http http://127.0.0.1:8080/ -c 10 -d 5s
  benchrig http http://127.0.0.1:8080/ -R 1000 -d 10s --fail-unhealthy
  benchrig http http://127.0.0.1:8080/api -m POST -H 'Content-Type: application/json' -b '{"a":1}' -o result.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runHTTP(ctx, c, &hf, args[0], stdout, stderr)
		},
	}
	hf.quickFlags.register(c, 10)
	hf.targetFlags.register(c)
	f := c.Flags()
	f.StringVarP(&hf.method, "method", "m", "GET", "request method")
	f.StringArrayVarP(&hf.headers, "header", "H", nil, "request header 'Name: value' (repeatable)")
	f.StringVarP(&hf.body, "body", "b", "", "request body")
	f.DurationVar(&hf.timeout, "timeout", 10*time.Second, "per-request timeout (0: none)")
	f.IntVar(&hf.expectStatus, "expect-status", 0, "status that counts as success (default: any 2xx)")
	f.StringVar(&hf.expectBody, "expect-body", "", "the exact response body that counts as success")
	f.StringVar(&hf.contains, "expect-body-contains", "", "a string the response body must contain")
	return c
}

func (hf *httpFlags) driverConfig(c *cobra.Command, rawURL string) (httpdrv.Config, error) {
	dc := httpdrv.DefaultConfig()
	dc.URL = rawURL
	if _, _, err := httpdrv.ParseURL(rawURL); err != nil {
		return dc, usagef("URL %w", err)
	}
	dc.Method = hf.method
	dc.Body = hf.body
	if hf.timeout < 0 {
		return dc, usagef("--timeout must be ≥ 0, got %s", hf.timeout)
	}
	dc.Timeout = hf.timeout
	for _, h := range hf.headers {
		k, v, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return dc, usagef("--header %q: want 'Name: value'", h)
		}
		if dc.Headers == nil {
			dc.Headers = map[string]string{}
		}
		dc.Headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	if hf.expectStatus != 0 && (hf.expectStatus < 100 || hf.expectStatus > 599) {
		return dc, usagef("--expect-status must be 100–599, got %d", hf.expectStatus)
	}
	dc.ExpectStatus = hf.expectStatus
	if c.Flags().Changed("expect-body") {
		b := hf.expectBody
		dc.ExpectBody = &b
	}
	dc.ExpectBodyContains = hf.contains
	return dc, nil
}

func runHTTP(ctx context.Context, c *cobra.Command, hf *httpFlags, rawURL string, stdout, stderr io.Writer) error {
	cfg, w, err := hf.resolve(c)
	if err != nil {
		return err
	}
	dc, err := hf.driverConfig(c, rawURL)
	if err != nil {
		return err
	}
	if err := hf.targetFlags.validate(c); err != nil {
		return err
	}
	drv, err := httpdrv.New(dc)
	if err != nil {
		return usageError{err}
	}
	phases, err := hf.targetFlags.phases(c, &hf.quickFlags, cfg.Rate > 0, w)
	if err != nil {
		return err
	}
	conf := struct {
		Engine load.Config    `json:"engine"`
		Phases runner.Phases  `json:"phases"`
		HTTP   httpdrv.Config `json:"http"`
	}{cfg, phases, dc.Redacted()}
	spec, err := quickSpec("http", conf, cfg, phases, drv, &hf.quickFlags)
	if err != nil {
		return err
	}
	if err := hf.targetFlags.fill(&spec, drv.Addr()); err != nil {
		return err
	}
	spec.Case = suite.Cell{Protocol: suite.HTTP, Connections: cfg.Connections, Rate: cfg.Rate, Pipeline: cfg.Pipeline}.CaseLabel()
	spec.Variant = rawURL
	if hf.targetFlags.command != "" {
		spec.Variant = hf.targetFlags.command
	}
	check := runner.Check{Name: "GET " + rawURL, Run: drv.Probe}
	spec.PreChecks = []runner.Check{check}
	if hf.targetFlags.serverSide() {
		spec.PostChecks = []runner.Check{check}
	} else if err := drv.Probe(ctx); err != nil {
		// nothing to start: refuse at once, before any phase.
		return fmt.Errorf("%s: %w", rawURL, err)
	}
	title := fmt.Sprintf("benchrig http %s · %d connections · %s", rawURL, cfg.Connections, describeWindow(cfg, w, phases.Warmup))
	if !hf.json {
		fmt.Fprintf(stderr, "Running %s\n", title[len("benchrig http "):])
	}
	s := runQuick(ctx, spec, stderr)
	hf.targetFlags.cleanup(s)
	return finishQuick(s, &hf.quickFlags, title, stdout)
}

func describeWindow(cfg load.Config, w load.Window, warmup time.Duration) string {
	var parts []string
	if w.Duration > 0 {
		parts = append(parts, w.Duration.String())
	}
	if w.Requests > 0 {
		parts = append(parts, fmt.Sprintf("%d requests", w.Requests))
	}
	if cfg.Rate > 0 {
		parts = append(parts, fmt.Sprintf("%v req/s (%s arrivals)", cfg.Rate, cfg.Arrival))
	} else {
		mode := "closed loop"
		if cfg.Pipeline > 1 {
			mode += fmt.Sprintf(", pipeline %d", cfg.Pipeline)
		}
		parts = append(parts, mode)
	}
	if warmup > 0 {
		parts = append(parts, "warm-up "+warmup.String())
	}
	return strings.Join(parts, " · ")
}
