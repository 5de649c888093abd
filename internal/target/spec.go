package target

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/cgroup"
)

// Defaults applied by Start to a Spec's zero fields.
const (
	// DefaultStartTimeout bounds the wait for the readiness probe.
	DefaultStartTimeout = 10 * time.Second
	// DefaultStopGrace is how long Stop waits after SIGTERM before SIGKILL.
	DefaultStopGrace = 5 * time.Second
)

// Spec describes a managed target process: what to run, where, pinned to
// which CPUs, and how to tell it is ready. It is plain data; Start applies the
// defaults to its zero fields.
type Spec struct {
	// Name identifies the target in errors and names its log file. Empty
	// means the base name of Argv[0].
	Name string `json:"name"`
	// Argv is the command and its arguments; Argv[0] is looked up in $PATH
	// when it has no slash.
	Argv []string `json:"argv"`
	// Env holds KEY=VALUE entries added to benchrig's own environment
	// without the variables it withholds (secret.Environ: the credentials
	// benchrig reads for itself); later entries win.
	Env []string `json:"env,omitempty"`
	// Dir is the working directory; empty means benchrig's.
	Dir string `json:"dir,omitempty"`
	// CPUs is a CPU list ("0", "0-1,3") the target is pinned to from its
	// first instruction; empty means no pinning.
	CPUs string `json:"cpus,omitempty"`
	// LogDir is where the per-run log file (stdout and stderr) goes; empty
	// means a fresh temporary directory.
	LogDir string `json:"log_dir,omitempty"`
	// StartTimeout bounds the wait for readiness; 0 means
	// DefaultStartTimeout.
	StartTimeout time.Duration `json:"start_timeout,omitempty"`
	// StopGrace is the time between SIGTERM and SIGKILL in Stop; 0 means
	// DefaultStopGrace.
	StopGrace time.Duration `json:"stop_grace,omitempty"`
	// Ready configures the readiness probe used when Start is given none.
	Ready ProbeSpec `json:"ready,omitempty"`
	// Limits, when set, runs each start of the target in a cgroup of its
	// own with these limits (CPU quota, memory, swap, pids), its whole
	// process tree inside from its first instruction, and makes the
	// kernel's counters of the group readable (Process.CgroupStats). A
	// zero Limits limits nothing but still gives the counters. nil: no
	// cgroup at all. See limits.go and docs/limits.md.
	Limits *cgroup.Limits `json:"limits,omitempty"`
}

// ProbeSpec is the plain-data form of a readiness probe. At most one of TCP
// and HTTP is set; when neither is, the target counts as ready once started.
type ProbeSpec struct {
	// TCP is a host:port that accepts connections once the target is ready.
	TCP string `json:"tcp,omitempty"`
	// HTTP is a URL that answers GET with the expected status once ready.
	HTTP string `json:"http,omitempty"`
	// Status is the status HTTP must answer; 0 means any 2xx.
	Status int `json:"status,omitempty"`
}

// Probe builds the probe the spec describes, or nil when it describes none.
func (s ProbeSpec) Probe() (Probe, error) {
	switch {
	case s.TCP != "" && s.HTTP != "":
		return nil, fmt.Errorf("ready: set one of tcp and http, not both")
	case s.Status != 0 && s.HTTP == "":
		return nil, fmt.Errorf("ready.status %d: needs ready.http", s.Status)
	case s.TCP != "":
		if err := checkHostPort(s.TCP); err != nil {
			return nil, fmt.Errorf("ready.tcp: %w", err)
		}
		return TCPProbe{Addr: s.TCP}, nil
	case s.HTTP != "":
		if err := checkHTTPURL(s.HTTP); err != nil {
			return nil, fmt.Errorf("ready.http: %w", err)
		}
		if s.Status != 0 && (s.Status < 100 || s.Status > 599) {
			return nil, fmt.Errorf("ready.status %d: want an HTTP status 100-599, or 0 for any 2xx", s.Status)
		}
		return HTTPProbe{URL: s.HTTP, Status: s.Status}, nil
	}
	return nil, nil
}

// withDefaults returns the spec with its zero fields filled in.
func (s Spec) withDefaults() Spec {
	if s.Name == "" && len(s.Argv) > 0 {
		s.Name = filepath.Base(s.Argv[0])
	}
	if s.StartTimeout == 0 {
		s.StartTimeout = DefaultStartTimeout
	}
	if s.StopGrace == 0 {
		s.StopGrace = DefaultStopGrace
	}
	return s
}

// validate checks a spec with defaults applied and returns the parsed CPU
// list. Errors name the field and what it accepts, never a value that may be
// a secret (environment values, arguments).
func (s Spec) validate() ([]int, error) {
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		return nil, fmt.Errorf("argv: empty; want the command and its arguments")
	}
	for i, kv := range s.Env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return nil, fmt.Errorf("env[%d]: want KEY=VALUE", i)
		}
	}
	if s.Dir != "" {
		if fi, err := os.Stat(s.Dir); err != nil {
			return nil, fmt.Errorf("dir: %w", err)
		} else if !fi.IsDir() {
			return nil, fmt.Errorf("dir %q: not a directory", s.Dir)
		}
	}
	if s.StartTimeout < 0 {
		return nil, fmt.Errorf("start_timeout %v: must not be negative", s.StartTimeout)
	}
	if s.StopGrace < 0 {
		return nil, fmt.Errorf("stop_grace %v: must not be negative", s.StopGrace)
	}
	if s.Limits != nil {
		if err := s.Limits.Validate(); err != nil {
			return nil, fmt.Errorf("limits: %w", err)
		}
	}
	if s.CPUs == "" {
		return nil, nil
	}
	cpus, err := ParseCPUList(s.CPUs)
	if err != nil {
		return nil, fmt.Errorf("cpus: %w", err)
	}
	return cpus, nil
}

// checkHostPort checks a host:port address with a numeric port.
func checkHostPort(addr string) error {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q: want host:port like 127.0.0.1:8080: %w", addr, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("%q: port must be a number 1-65535", addr)
	}
	return nil
}

// checkHTTPURL checks an absolute http or https URL. Errors show the URL
// with any password redacted.
func checkHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%q: not a URL", redactURL(raw))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%q: want an http:// or https:// URL", redactURL(raw))
	}
	if u.Host == "" {
		return fmt.Errorf("%q: no host", redactURL(raw))
	}
	return nil
}
