// Package floor measures benchrig's own floor, its latency and client CPU
// per request against a null peer: once before a run's first sample, and
// as benchrig calibrate prints it.
package floor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/calibrate"
	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/proc"
	"github.com/benchrig/benchrig/internal/report"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
)

// BeforeRun measures benchrig's own floor for the plan's protocols, once,
// before the first sample (calibrate.RunFloor each, ≤ 1 s for all), or
// records that --no-calibrate skipped it. When the suite pins the client
// (placement.client_cpus, --client-cpus), benchrig is pinned there while
// it measures, as each sample will be, so that the null peer runs apart
// from it, where the run's server does. Unpinned, in a process that is
// benchrig's command alone (ownProcess), it measures on the upper half of
// its CPUs with the peer polling on the rest (PinHalf): the least a request
// can cost here, which an unpinned run sharing its CPUs with its server
// does not go below; a test or embedder sharing the process is never pinned.
// The floor's loops park in the Go runtime's poller even where a run's
// block in epoll_wait (driver.SetBlockInKernel): against a null peer that
// answers within microseconds, the park's scheduler pass finds more
// answers ready before it sleeps, which made it the cheaper of the two
// there (HTTP at 8 connections, 6 interleaved 2 s runs: 8.3 µs a request
// parked, 9.6 blocking; spreads overlapping), and a floor is the least a
// request can cost.
func BeforeRun(ctx context.Context, p *suite.Plan, skip, ownProcess bool, stderr io.Writer) *result.Floor {
	if skip {
		return &result.Floor{Skipped: "--no-calibrate"}
	}
	restore := pinLikeSamples(p)
	if restore == nil {
		restore = func() {}
		if ownProcess {
			restore = PinHalf()
		}
	}
	defer restore()
	levels := map[string][]int{}
	var protocols []string
	for _, c := range p.Cells {
		q := string(c.Protocol)
		if _, seen := levels[q]; !seen {
			protocols = append(protocols, q)
		}
		levels[q] = append(levels[q], c.Connections)
	}
	t0 := time.Now()
	f := &result.Floor{Seconds: calibrate.RunFloor.Seconds()}
	for _, q := range protocols {
		f.Protocols = append(f.Protocols, calibrate.Measure(ctx, []string{q}, RunLevels(levels[q]), calibrate.RunFloor).Protocols...)
	}
	if stderr != nil {
		fmt.Fprintf(stderr, "%s [measured in %s]\n", report.FloorLine(f), time.Since(t0).Round(10*time.Millisecond))
	}
	return f
}

// pinLikeSamples pins benchrig as each sample will be, and sets
// GOMAXPROCS to match: to the suite's client CPUs, if it names any; else,
// when every target of the plan is pinned, to the CPUs benchrig may use
// that none of them does (proc.BesideTarget, as run.Measure chooses). The
// returned function undoes it. A list that cannot be pinned to is left to
// the samples to report.
//
// It returns nil when the samples will not be pinned.
func pinLikeSamples(p *suite.Plan) func() {
	none := func() {}
	if p == nil || p.Suite == nil {
		return nil
	}
	list := string(p.Suite.Placement.ClientCPUs)
	if list == "" {
		list = proc.BesideTarget(targetCPUs(p))
	}
	if list == "" {
		return nil
	}
	cpus, err := proc.ParseCPUList(list)
	if err != nil || len(cpus) == 0 {
		return none
	}
	restore, err := proc.PinClient(cpus)
	if err != nil {
		return none
	}
	return restore
}

// PinHalf pins benchrig (every thread, and GOMAXPROCS) to the upper half of
// the CPUs it may use, so that the null peer, which runs on the CPUs outside
// benchrig's affinity, polls on the lower half; the returned function
// undoes it. With one usable CPU, or when pinning fails, nothing changes.
// Only a process that is benchrig's command alone may call it: the whole
// process is pinned.
func PinHalf() (restore func()) {
	none := func() {}
	cpus, err := proc.Affinity(0)
	if err != nil || len(cpus) < 2 {
		return none
	}
	restore, err = proc.PinClient(cpus[len(cpus)/2:])
	if err != nil {
		return none
	}
	return restore
}

// targetCPUs is the union of the CPUs the plan's targets are pinned to;
// "" when one of them is not pinned.
func targetCPUs(p *suite.Plan) string {
	var all []int
	for _, c := range p.Cells {
		list := p.Suite.Placement.TargetCPUs
		if t := p.Suite.Targets[c.Target]; t != nil && t.CPUs != "" {
			list = t.CPUs
		}
		cpus, err := list.CPUs()
		if list == "" || err != nil {
			return ""
		}
		all = append(all, cpus...)
	}
	slices.Sort(all)
	return proc.FormatCPUList(slices.Compact(all))
}

// maxRunLevels bounds the levels measured before a run, per protocol
// (calibrate.RunFloor each).
const maxRunLevels = 4

// RunLevels are the connection counts at which a run measures a protocol's
// floor: one connection (the floor as `benchrig calibrate` states it) and
// the run's own counts, so each case's client CPU per request can be read
// against the floor at its level; at most maxRunLevels (one, the smallest
// and largest of the run's and the one in the middle), each capped at
// calibrate.MaxConnections.
func RunLevels(conns []int) []int {
	var ls []int
	for _, n := range conns {
		ls = append(ls, min(max(n, 1), calibrate.MaxConnections))
	}
	slices.Sort(ls)
	ls = slices.Compact(ls)
	if len(ls) > 0 && ls[0] == 1 {
		ls = ls[1:]
	}
	if len(ls) > maxRunLevels-1 {
		ls = []int{ls[0], ls[len(ls)/2], ls[len(ls)-1]}
	}
	return append([]int{1}, ls...)
}

// Calibrate is `benchrig calibrate`: the floor of each protocol measured
// for d, printed as a table and the floor line, or as JSON.
func Calibrate(ctx context.Context, stdout io.Writer, d time.Duration, protocols []string, conns []int, asJSON, ownProcess bool) error {
	if d < calibrate.MinDuration || d > calibrate.MaxDuration {
		return exitcode.Usagef("--duration must be between %s and %s, got %s", calibrate.MinDuration, calibrate.MaxDuration, d)
	}
	if len(conns) == 0 || len(conns) > 8 {
		return exitcode.Usagef("--connections: give 1 to 8 connection counts, got %d", len(conns))
	}
	for _, n := range conns {
		if n < 1 || n > calibrate.MaxConnections {
			return exitcode.Usagef("--connections: each count must be between 1 and %d, got %d", calibrate.MaxConnections, n)
		}
	}
	for _, p := range protocols {
		if !isCalibrated(p) {
			return exitcode.Usagef("--protocols: unknown protocol %q; accepted: %s", p, strings.Join(calibrate.Protocols(), ", "))
		}
	}
	restore := func() {}
	if ownProcess {
		restore = PinHalf()
	}
	f := calibrate.Measure(ctx, protocols, conns, d)
	restore()
	if asJSON {
		b, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	fmt.Fprintf(stdout, "benchrig's own floor: closed loop, %s per protocol and connection count against a null peer on 127.0.0.1 (%s)\n\n", d, peerPlace(f))
	if err := report.FloorTable(stdout, f); err != nil {
		return err
	}
	_, err := fmt.Fprintf(stdout, "\n%s\n", report.FloorLine(f))
	return err
}

// peerPlace says where the null peers ran: a process of their own, on the
// CPUs apart from benchrig's when there were such, else on benchrig's.
func peerPlace(f *result.Floor) string {
	cpus := map[string]bool{}
	for _, e := range f.Protocols {
		if e.Error == "" {
			cpus[e.PeerCPUs] = true
		}
	}
	const own = "a process of its own"
	if len(cpus) != 1 {
		return own
	}
	for c := range cpus {
		switch {
		case c == "":
			return own + ", sharing benchrig's CPUs"
		case strings.ContainsAny(c, ",-"):
			return own + " on CPUs " + c + ", apart from benchrig's"
		default:
			return own + " on CPU " + c + ", apart from benchrig's"
		}
	}
	return own
}

// isCalibrated says whether calibrate has a null peer for protocol p.
func isCalibrated(p string) bool {
	for _, q := range calibrate.Protocols() {
		if p == q {
			return true
		}
	}
	return false
}
