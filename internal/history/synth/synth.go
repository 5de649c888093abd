// Package synth writes seeded synthetic results files that verify, with no
// server: the suite is real (parsed and expanded by package suite), the
// files are written by the result package's own writer, and every sample's
// figures are consistent (counts, window, timeline, histograms) as
// result.Check demands. The history's tests and bench/historygen use it.
package synth

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/plan"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
)

// Options say what to write.
type Options struct {
	// Runs is the number of files (1–100,000).
	Runs int
	// Targets and Connections span the matrix (one path): cells are
	// Targets × Connections; Repeats samples per cell (1–100).
	Targets     []string
	Connections []int
	Repeats     int
	// Seed draws the noise of the repeats.
	Seed uint64
	// Base is run 0's requests/s; from run StepAt on, every figure moves by
	// StepPct percent (requests/s up, latency and CPU per request down).
	Base    float64
	StepAt  int
	StepPct float64
	// Start is run 0's start time; run i starts Every later per run.
	Start time.Time
	Every time.Duration
	// Host is recorded in every header (nil: a fixed synthetic host).
	Host *result.Host
}

// withDefaults fills zero fields and bounds the others.
func (o Options) withDefaults() (Options, error) {
	if len(o.Targets) == 0 {
		o.Targets = []string{"api"}
	}
	if len(o.Connections) == 0 {
		o.Connections = []int{4, 16}
	}
	if o.Repeats == 0 {
		o.Repeats = 3
	}
	if o.Base == 0 {
		o.Base = 10000
	}
	if o.Start.IsZero() {
		o.Start = time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	}
	if o.Every == 0 {
		o.Every = time.Hour
	}
	if o.Host == nil {
		o.Host = &result.Host{Hostname: "ci-1", CPUModel: "Synthetic CPU @ 3.0GHz", OnlineCPUs: 8, MemoryMiB: 16384, Kernel: "6.1.0-synthetic", Distro: "Debian"}
	}
	switch {
	case o.Runs < 1 || o.Runs > 100_000:
		return o, fmt.Errorf("synth: runs %d: accepted 1–100000", o.Runs)
	case o.Repeats < 1 || o.Repeats > 100:
		return o, fmt.Errorf("synth: repeats %d: accepted 1–100", o.Repeats)
	case o.Base < 10 || o.Base > 1e7:
		return o, fmt.Errorf("synth: base %g req/s: accepted 10–10000000", o.Base)
	}
	return o, nil
}

// suiteYAML is the suite every synthetic file records: attached targets
// (never started), one HTTP path.
func suiteYAML(o Options) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: history-synth\nseed: 1\nrepeats: %d\n", o.Repeats)
	b.WriteString("phases: {baseline: 500ms, warmup: 1s, settle: 500ms, load: 2s, recovery: 500ms}\ntargets:\n")
	for i, t := range o.Targets {
		fmt.Fprintf(&b, "  %s: {attach: {port: %d}}\n", t, 18080+i)
	}
	b.WriteString("paths:\n  hello:\n    http: {url: \"http://127.0.0.1:18080/\", expect_status: 200}\n")
	conns := make([]string, len(o.Connections))
	for i, c := range o.Connections {
		conns[i] = fmt.Sprint(c)
	}
	fmt.Fprintf(&b, "matrix:\n  targets: [%s]\n  paths: [hello]\n  connections: [%s]\n", strings.Join(o.Targets, ", "), strings.Join(conns, ", "))
	return b.String()
}

// Factor is run i's figure multiplier: 1 before StepAt, 1+StepPct/100 from
// it on (requests/s; latencies divide by it).
func (o Options) Factor(i int) float64 {
	if o.StepAt > 0 && i >= o.StepAt {
		return 1 + o.StepPct/100
	}
	return 1
}

// Write writes o.Runs files into dir, named run-0001.json…, and returns
// their paths in run order. The repeats of a cell spread ±2 % around the
// run's figure, so each cell's median requests/s over its repeats is
// exactly Base×Factor(i) (with an odd number of repeats).
func Write(dir string, o Options) ([]string, error) {
	o, err := o.withDefaults()
	if err != nil {
		return nil, err
	}
	s, err := suite.Parse("history-synth.yaml", []byte(suiteYAML(o)))
	if err != nil {
		return nil, fmt.Errorf("synth: suite: %w", err)
	}
	p, err := s.Plan()
	if err != nil {
		return nil, fmt.Errorf("synth: plan: %w", err)
	}
	resolved, err := s.Resolved()
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x5eed))
	var paths []string
	for i := 0; i < o.Runs; i++ {
		path := filepath.Join(dir, fmt.Sprintf("run-%04d.json", i+1))
		if err := writeRun(path, o, i, s, p, resolved, rng); err != nil {
			return nil, err
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// writeRun writes run i.
func writeRun(path string, o Options, i int, s *suite.Suite, p *suite.Plan, resolved []byte, rng *rand.Rand) error {
	started := o.Start.Add(time.Duration(i) * o.Every)
	revSum := sha256.Sum256(fmt.Appendf(nil, "rev %d", i))
	rev := hex.EncodeToString(revSum[:20])
	targets := map[string]result.Provenance{}
	for _, t := range o.Targets {
		sum := sha256.Sum256([]byte(t + rev))
		targets[t] = result.Provenance{Kind: "attach", GitRev: rev, SHA256: hex.EncodeToString(sum[:]), Version: "synthetic 1.0"}
	}
	h := result.Header{Tool: result.Tool{Version: "synth", Go: "go1.26"}, Host: o.Host, Started: started,
		Args:  []string{"benchrig", "run", "history-synth.yaml"},
		Suite: result.SuiteInfo{Name: s.Name, File: "history-synth.yaml", SHA256: s.SHA256(), Resolved: resolved},
		Plan:  plan.Entries(p), Targets: targets}
	w, err := result.Create(path, h, true)
	if err != nil {
		return err
	}
	// each cell's repeats take the spreads 0, -2 %, +2 %, -1.5 %… in an
	// order drawn from the seed: the median is the unspread figure.
	spreads := map[string][]float64{}
	for _, c := range p.Cells {
		sp := make([]float64, o.Repeats)
		for r := 1; r < o.Repeats; r++ {
			d := 0.02 / float64((r+1)/2)
			if r%2 == 1 {
				d = -d
			}
			sp[r] = d
		}
		rng.Shuffle(len(sp), func(a, b int) { sp[a], sp[b] = sp[b], sp[a] })
		spreads[c.ID] = sp
	}
	at := started.Add(time.Second)
	for _, ps := range p.Samples {
		c := p.Cells[ps.Cell]
		level := 1 + float64(ps.Cell)*0.25
		sm := sample(ps, c, at, o.Base*level*o.Factor(i)*(1+spreads[c.ID][ps.Repeat-1]))
		if err := w.Append(sm); err != nil {
			w.Abandon()
			return err
		}
		at = sm.Finished.Add(100 * time.Millisecond)
	}
	return w.Close(false)
}

// sample is one consistent synthetic sample at rps requests/s.
func sample(ps suite.Sample, c suite.Cell, at time.Time, rps float64) *result.Sample {
	const secs = 2
	n := int64(rps*secs + 0.5)
	base := int64(1e6 * float64(c.Connections) / rps) // µs per request in a closed loop
	hist := result.NewHistogram()
	_ = hist.RecordValues(max(base*8/10, 1), n/2)
	_ = hist.RecordValues(base, n*4/10)
	_ = hist.RecordValues(base*2, n-n/2-n*4/10-n/100)
	_ = hist.RecordValues(base*5, n/100)
	lat, _ := result.Summarise(hist)
	start := at.Add(2 * time.Second)
	end := start.Add(secs * time.Second)
	tl := []result.Second{{T: 0, Requests: n / 2, P50US: lat.P(50), P99US: lat.P(99)}, {T: 1, Requests: n - n/2, P50US: lat.P(50), P99US: lat.P(99)}}
	user, sys := float64(n)*4e-6, float64(n)*2e-6
	cpuS := float64(n) * 30e-6 * 10000 / rps * float64(c.Connections) / 4
	return &result.Sample{Key: ps.Key, Cell: c.ID, Repeat: ps.Repeat, Case: c.CaseLabel(), Variant: c.Target,
		Protocol: "http", Config: &result.Config{Protocol: "http"},
		Started: at, Finished: end.Add(time.Second),
		Phases: []result.Phase{{Name: "load", Start: start.Add(-100 * time.Millisecond), End: end.Add(100 * time.Millisecond)}},
		Load: &result.Load{Mode: "closed", Connections: c.Connections, Pipeline: 1, Start: start, End: end, Seconds: secs,
			Sent: n, Requests: n, RequestsPerSec: float64(n) / secs, Latency: lat, Timeline: tl,
			Client: result.Client{UserSeconds: user, SystemSeconds: sys, Cores: (user + sys) / secs, UsableCores: 8}},
		Server: &result.Server{Figures: result.ServerFigures{WindowSeconds: secs, CPUSeconds: cpuS, Cores: cpuS / secs,
			MicrosPerRequest: cpuS * 1e6 / float64(n), Completed: n, OnlineCPUs: 8, RSSPeak: uint64(40<<20 + c.Connections<<20)}},
		Verdict: result.Verdict{Healthy: true}}
}
