package result

import (
	"time"

	"github.com/benchrig/benchrig/internal/capacity"
)

// Sample is one measurement: one fresh target (or an attached one), its
// phases, one recorded load window, what the server used, and the verdict.
// It is the one record type that crosses from running to reporting.
type Sample struct {
	// Key identifies the sample within a suite's plan (cell#repeat).
	Key    string `json:"key,omitempty"`
	Cell   string `json:"cell,omitempty"`
	Repeat int    `json:"repeat,omitempty"`
	Smoke  bool   `json:"smoke,omitempty"`
	// Case and Variant place the sample in a report: the row (the
	// numeric axes: "64 keys · 4 conns") and the column (what is
	// compared: a target, an access path).
	Case    string `json:"case,omitempty"`
	Variant string `json:"variant,omitempty"`

	Protocol string `json:"protocol"`
	// Search marks a step of a capacity search: the search, its phase,
	// its index in the search and the rate it offered (the sample's
	// Config.Engine.Rate). Key is then CELL@sSEARCH/INDEX.
	Search *capacity.Step `json:"search,omitempty"`
	// Config is the resolved configuration of the engine and driver.
	Config *Config `json:"config,omitempty"`

	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`

	Target *TargetInfo `json:"target,omitempty"`
	// Phases lists the phases run, in order, with their real times.
	Phases []Phase `json:"phases,omitempty"`
	// Warmup summarises the warm-up window (not part of the figures).
	Warmup *WarmupSummary `json:"warmup,omitempty"`
	Load   *Load          `json:"load,omitempty"`
	Server *Server        `json:"server,omitempty"`
	// Companions are further process trees sampled beside the target
	// (its database), each with its own figures; one of them may be the
	// headline (see HeadlineServer).
	Companions []Companion `json:"companions,omitempty"`
	// ClientCPU is benchrig's own cumulative CPU once per second through
	// every phase, beside the server's resource samples.
	ClientCPU []ClientCPUSample `json:"client_cpu,omitempty"`
	// Metrics are the target's own metrics (Prometheus text format), when
	// its suite names an endpoint.
	Metrics *Metrics `json:"metrics,omitempty"`
	// Stats are target statistics over the load window (pg_stat_database
	// deltas, redis INFO deltas), by name.
	Stats map[string]float64 `json:"stats,omitempty"`
	// Agents lists the parts of a sample measured by several agents
	// (Load is their merge); empty for a sample of one machine.
	Agents []AgentPart `json:"agents,omitempty"`

	// Assertions are the suite's assertions evaluated on this sample, in
	// order (the target's, then the path's): a failed one is also a
	// reason of the verdict.
	Assertions []Assertion `json:"assertions,omitempty"`

	// ResumedChanged lists what had changed in the targets' provenance
	// when this sample was measured by a run resumed with --resume-changed
	// (binary SHA-256, server version or settings): the file mixes samples
	// of two builds.
	ResumedChanged []string `json:"resumed_changed,omitempty"`

	Verdict Verdict `json:"verdict"`
	// Error, when set, says why the sample failed before producing
	// figures (a failed pre-check, a target that did not start).
	Error string `json:"error,omitempty"`
}

// Assertion is one assertion evaluated on a sample.
type Assertion struct {
	// Expr is the expression as written in the suite.
	Expr string `json:"expr"`
	// Holds says whether every comparison of it held.
	Holds bool `json:"holds"`
	// Values are the values its comparisons' sides had
	// ("cache_hits = 5134, requests * keys = 5134"), or why one could not
	// be evaluated.
	Values string `json:"values"`
}

// WarmupSummary is what is kept of a warm-up window.
type WarmupSummary struct {
	Seconds  float64 `json:"seconds"`
	Requests int64   `json:"requests"`
	Failures int64   `json:"failures"`
	// Unanswered counts the warm-up's requests sent and never answered:
	// its timeouts, and those outstanding at its end whose answer did not
	// come within the drain (their connections were closed). The server
	// may have processed them after the load window's first statistics
	// reading (Sample.Unanswered).
	Unanswered int64 `json:"unanswered,omitempty"`
}

// Unanswered counts the requests of the sample sent and never answered
// that the server may have processed within the window's statistics
// readings: the warm-up's (WarmupSummary.Unanswered), the load window's
// timeouts, and those outstanding at its end not answered in the drain.
func (s *Sample) Unanswered() int64 {
	var n int64
	if s.Warmup != nil {
		n += s.Warmup.Unanswered
	}
	if l := s.Load; l != nil {
		n += l.Timeouts + l.OutstandingAtEnd - l.OutstandingAnswered
	}
	return n
}

// Phase is one phase of a measurement as it ran.
type Phase struct {
	Name  string    `json:"name"`
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
}

// TargetInfo records the system under test of one sample.
type TargetInfo struct {
	Name    string   `json:"name"`
	Kind    string   `json:"kind"` // command, attach, postgres, redis, address
	Argv    []string `json:"argv,omitempty"`
	Dir     string   `json:"dir,omitempty"`
	PID     int      `json:"pid,omitempty"`
	CPUs    string   `json:"cpus,omitempty"`
	Binary  string   `json:"binary,omitempty"`
	SHA256  string   `json:"sha256,omitempty"`
	Version string   `json:"version,omitempty"`
	// Settings are server settings that matter (fsync, shared_buffers…).
	Settings map[string]string `json:"settings,omitempty"`
	// Ran is what a started target's process tree ran once it was ready,
	// before the baseline: each executable and each script an interpreter
	// of it ran, with its SHA-256 (see RanFile). A resumed run compares
	// them with the file's.
	Ran []RanFile `json:"ran,omitempty"`
	// ExitStatus is set when the target exited during the sample.
	ExitStatus string `json:"exit_status,omitempty"`
	LogPath    string `json:"log_path,omitempty"`
	// LogTail holds the last lines of the target's log when it failed.
	LogTail string `json:"log_tail,omitempty"`
}

// Quick is the document a one-shot run (benchrig http/pg/resp) writes with
// -o or --json: the tool and host it ran on, and the one sample.
type Quick struct {
	Schema string   `json:"schema"`
	Tool   Tool     `json:"tool"`
	Host   *Host    `json:"host,omitempty"`
	Args   []string `json:"args"`
	Sample Sample   `json:"sample"`
}

// QuickSchema names the format of Quick documents.
const QuickSchema = "benchrig.quick/v1"

// Tool identifies the benchrig binary that produced a file.
type Tool struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
	Dirty   bool   `json:"dirty,omitempty"`
	Go      string `json:"go"`
}

// Host describes the machine a file was produced on.
type Host struct {
	Hostname   string `json:"hostname,omitempty"`
	CPUModel   string `json:"cpu_model,omitempty"`
	OnlineCPUs int    `json:"online_cpus"`
	MemoryMiB  int64  `json:"memory_mib,omitempty"`
	Kernel     string `json:"kernel,omitempty"`
	Distro     string `json:"distro,omitempty"`
}

// QuickMatrix is the document a quick mode that runs several samples (a
// matrix of cases × repeats: benchrig pg, benchrig resp) writes with -o or
// --json, whatever the number of samples: the tool and host it ran on, the
// arguments (secrets redacted), the server's provenance and query plans when
// known, and every sample in the order it ran.
type QuickMatrix struct {
	Schema  string            `json:"schema"`
	Tool    Tool              `json:"tool"`
	Host    *Host             `json:"host,omitempty"`
	Args    []string          `json:"args"`
	Server  *TargetInfo       `json:"server,omitempty"`
	Plans   map[string]string `json:"query_plans,omitempty"`
	Samples []Sample          `json:"samples"`
}

// QuickMatrixSchema names the format of QuickMatrix documents.
const QuickMatrixSchema = "benchrig.quick-matrix/v1"
