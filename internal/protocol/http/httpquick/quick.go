package httpquick

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	httpdrv "github.com/benchrig/benchrig/internal/protocol/http/driver"
	"github.com/benchrig/benchrig/internal/quick"
	"github.com/benchrig/benchrig/internal/result"
)

// Quick are the options of benchrig http.
type Quick struct {
	quick.Common
	Method       string
	Headers      []string // "Name: value"
	Body         string   // "@FILE" reads FILE
	BodyFile     string
	Timeout      time.Duration
	ExpectStatus int
	ExpectBody   string
	Contains     string
	// TargetsFile is a request file in vegeta's format, sent instead of one
	// request (the URL may then be empty); Order cycle or random;
	// RetryUnsafe re-sends a POST on a closed idle connection too.
	TargetsFile string
	Order       string
	RetryUnsafe bool

	// Command starts the server fresh for every sample (a command line,
	// split as a shell would); AttachPID and AttachPort sample a running
	// one; none: the URL is only an address.
	Command      string
	StartTimeout time.Duration
	AttachPID    int
	AttachPort   int
	// AttachTree samples every process listening on AttachPort through
	// their common ancestor (a multi-process server).
	AttachTree bool
	// Metrics scrapes the target's own metrics endpoint.
	quick.Metrics

	// Limits run --target's process tree under CPU, memory and pids
	// limits (--limit-cpus, --limit-memory, --limit-swap, --limit-pids).
	Limits quick.Limits

	// Wire: TLS and HTTP/2 (see Wire).
	Wire
}

// ServerSide reports whether a server is started or sampled.
func (h *Quick) ServerSide() bool {
	return h.Command != "" || h.AttachPID != 0 || h.AttachPort != 0
}

// Build returns the suite of one HTTP target for the URL (a URL without a
// scheme means http://; empty with a TargetsFile: its first request's): an
// address, a command started per sample (PORT set to the URL's port) or an
// attached process; one path; the shared axes. It also returns the URL.
func (h *Quick) Build(rawURL string) (quick.Doc, string, error) {
	if err := h.Validate(); err != nil {
		return nil, "", err
	}
	if err := h.readBody(); err != nil {
		return nil, "", err
	}
	var reqs []quick.Doc
	if h.TargetsFile != "" {
		specs, err := httpdrv.LoadTargets(h.TargetsFile)
		if err != nil {
			return nil, "", fmt.Errorf("--targets: %w", err)
		}
		for _, r := range specs {
			reqs = append(reqs, quick.Doc{"method": r.Method, "url": r.URL, "headers": r.Headers, "body": r.Body, "weight": r.Weight})
		}
		if rawURL == "" && len(specs) > 0 {
			rawURL = specs[0].URL
		}
	}
	if rawURL == "" {
		return nil, "", fmt.Errorf("give a URL, or --targets FILE")
	}
	u, err := httpdrv.NormalizeURL(rawURL)
	if err != nil {
		return nil, "", fmt.Errorf("URL %w", err)
	}
	rawURL = u
	port, err := h.check(rawURL)
	if err != nil {
		return nil, "", err
	}
	def := result.Phases{}
	if h.ServerSide() {
		def = result.Phases{Baseline: 1500 * time.Millisecond, Settle: time.Second, Recovery: 5 * time.Second}
		if h.Rate > 0 {
			def = result.Phases{Baseline: 1500 * time.Millisecond, Warmup: 15 * time.Second, Settle: 6 * time.Second, Recovery: 30 * time.Second}
		}
	}
	d := h.Suite("http", def)
	path, err := h.pathDoc(rawURL)
	if err != nil {
		return nil, "", err
	}
	if len(reqs) > 0 {
		path["requests"] = reqs
	}
	if h.Order != "" {
		path["order"] = h.Order
	}
	if h.RetryUnsafe {
		path["retry_unsafe"] = true
	}
	if err := h.wireDoc(path, d, rawURL); err != nil {
		return nil, "", err
	}
	name, t := "url", quick.Doc{"address": quick.Doc{}}
	switch {
	case h.Command != "":
		argv, _ := quick.SplitCommand(h.Command)
		name = filepath.Base(argv[0])
		t = quick.Doc{"command": argv, "port": port, "env": quick.Doc{"PORT": strconv.Itoa(port)},
			"ready": quick.Doc{"tcp": net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), "timeout": h.StartTimeout.String()}}
	case h.AttachPID != 0:
		name, t = "attached", quick.Doc{"attach": quick.Doc{"pid": h.AttachPID}, "port": port}
	case h.AttachPort != 0:
		name, t = "attached", quick.Doc{"attach": quick.Doc{"port": h.AttachPort, "tree": h.AttachTree}, "port": port}
	}
	if ld := h.Limits.Doc(); ld != nil {
		if h.Command == "" {
			return nil, "", fmt.Errorf("--limit-*: limits run the server benchrig starts: give --target")
		}
		t["limits"] = ld
	}
	name = quick.SuiteName(name)
	md, err := h.Metrics.Doc()
	if err != nil {
		return nil, "", err
	}
	if md != nil {
		t["metrics"] = md
	}
	d["targets"] = quick.Doc{name: t}
	d["paths"] = quick.Doc{"request": quick.Doc{"http": path}}
	m := d["matrix"].(quick.Doc)
	m["targets"], m["paths"] = []string{name}, []string{"request"}
	return d, rawURL, nil
}

// check checks the http options against each other and returns the URL's
// port.
func (h *Quick) check(rawURL string) (port int, err error) {
	_, addr, err := httpdrv.ParseURL(rawURL)
	if err != nil {
		return 0, fmt.Errorf("URL %w", err)
	}
	_, ps, _ := net.SplitHostPort(addr)
	port, _ = strconv.Atoi(ps)
	n := 0
	for _, set := range []bool{h.Command != "", h.AttachPID != 0, h.AttachPort != 0} {
		if set {
			n++
		}
	}
	switch {
	case n > 1:
		return 0, fmt.Errorf("give one of --target, --attach-pid and --attach-port")
	case h.AttachPID < 0:
		return 0, fmt.Errorf("--attach-pid must be a process ID > 0, got %d", h.AttachPID)
	case h.AttachPort < 0 || h.AttachPort > 65535:
		return 0, fmt.Errorf("--attach-port must be 1–65535, got %d", h.AttachPort)
	case h.AttachTree && h.AttachPort == 0:
		return 0, fmt.Errorf("--attach-tree needs --attach-port: it samples every process listening on that port")
	case h.StartTimeout <= 0:
		return 0, fmt.Errorf("--start-timeout must be > 0, got %s", h.StartTimeout)
	case h.TargetCPUs != "" && h.Command == "":
		return 0, fmt.Errorf("--target-cpus needs --target")
	case h.Timeout < 0:
		return 0, fmt.Errorf("--timeout must be ≥ 0, got %s", h.Timeout)
	case h.ExpectStatus != 0 && (h.ExpectStatus < 100 || h.ExpectStatus > 599):
		return 0, fmt.Errorf("--expect-status must be 100–599, got %d", h.ExpectStatus)
	}
	if h.Command != "" {
		if _, err := quick.SplitCommand(h.Command); err != nil {
			return 0, fmt.Errorf("--target: %v", err)
		}
	}
	return port, nil
}

// pathDoc is the suite path of the request the options describe.
func (h *Quick) pathDoc(rawURL string) (quick.Doc, error) {
	p := quick.Doc{"url": rawURL, "method": strings.ToUpper(h.Method), "timeout": h.Timeout.String()}
	if h.Body != "" {
		p["body"] = h.Body
	}
	if len(h.Headers) > 0 {
		hd, err := quick.NameValues("--header", h.Headers)
		if err != nil {
			return nil, err
		}
		p["headers"] = hd
	}
	// 0 accepts any 2xx, as before; a suite's default is 200.
	p["expect_status"] = h.ExpectStatus
	if h.Changed("expect-body") {
		p["expect_body"] = h.ExpectBody
	}
	if h.Contains != "" {
		p["expect_body_contains"] = h.Contains
	}
	return p, nil
}

// readBody resolves -b @FILE and --body-file into the body itself.
func (h *Quick) readBody() error {
	if h.BodyFile != "" {
		if h.Changed("body") {
			return fmt.Errorf("give -b/--body or --body-file, not both")
		}
		b, err := httpdrv.ReadBodyFile(h.BodyFile)
		if err != nil {
			return fmt.Errorf("--body-file: %w", err)
		}
		h.Body = b
		return nil
	}
	b, _, err := httpdrv.ReadBodyArg(h.Body)
	if err != nil {
		return fmt.Errorf("-b/--body: %w", err)
	}
	h.Body = b
	return nil
}
