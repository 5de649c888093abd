package calibrate

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/proc"
	"github.com/benchrig/benchrig/internal/result"
)

// NullPeer is a protocol's null peer, registered by the protocol's package
// (internal/protocol/KEY): New makes the responder of one connection, and
// Driver the protocol's driver configured for a plain request to addr.
type NullPeer struct {
	New    func() Responder
	Driver func(addr string) (driver.Driver, error)
}

var peers = map[string]NullPeer{}

// Register makes the null peer of protocol known; registering a protocol
// twice panics. It is called from an init of the protocol's package: in a
// process started as that protocol's null peer (see child.go), it serves
// there and then and exits, so whatever New needs must be set by then
// (package variables are; a later init function of the package has not
// run yet).
func Register(protocol string, p NullPeer) {
	if _, dup := peers[protocol]; dup || p.New == nil || p.Driver == nil {
		panic(fmt.Sprintf("calibrate.Register: bad or second registration of %q", protocol))
	}
	peers[protocol] = p
	serveIfChild(protocol, p)
}

// Protocols are the protocols with a registered null peer, in the order
// Measure measures them (their names' order).
func Protocols() []string { return slices.Sorted(maps.Keys(peers)) }

// Bounds of one protocol's measurement.
const (
	// DefaultDuration is how long `benchrig calibrate` drives each
	// protocol at each connection count; RunFloor is what a run spends on
	// each of its protocols' levels before its first sample.
	DefaultDuration = time.Second
	RunFloor        = 300 * time.Millisecond
	MinDuration     = 100 * time.Millisecond
	MaxDuration     = time.Minute
	// warmup is the part of the time spent before the recorded window
	// (connection set-up, prepared statements, the first allocations).
	warmupShare = 5
)

// MaxConnections bounds a level's connections.
const MaxConnections = 256

// Measure measures benchrig's floor for each protocol asked (unknown ones
// are reported as errors in their entry) at each connection count of
// conns (one when empty), each level for d: closed loop, against a null
// peer on 127.0.0.1. It never fails as a whole: an entry that could not be
// measured says why. Entries come by protocol (Protocols' order), then by
// connections.
func Measure(ctx context.Context, protocols []string, conns []int, d time.Duration) *result.Floor {
	d = min(max(d, MinDuration), MaxDuration)
	levels := slices.Clone(conns)
	if len(levels) == 0 {
		levels = []int{1}
	}
	for i := range levels {
		levels[i] = min(max(levels[i], 1), MaxConnections)
	}
	slices.Sort(levels)
	levels = slices.Compact(levels)
	f := &result.Floor{Seconds: d.Seconds()}
	for _, p := range Protocols() {
		if slices.Contains(protocols, p) {
			for _, n := range levels {
				f.Protocols = append(f.Protocols, measureOne(ctx, p, n, d))
			}
		}
	}
	for _, q := range protocols {
		if f.Entry(q) == nil {
			f.Protocols = append(f.Protocols, result.FloorEntry{Protocol: q, Error: "no null peer for this protocol"})
		}
	}
	return f
}

// measureOne drives one protocol's driver against its null peer, a child
// process of its own, over conns connections. The client's CPU is this
// process's over the measured window, the engine's reading as in a run's
// sample (getrusage(RUSAGE_SELF) counts no child).
func measureOne(ctx context.Context, protocol string, conns int, d time.Duration) result.FloorEntry {
	e := result.FloorEntry{Protocol: protocol, Connections: conns}
	np := peers[protocol]
	p, err := startPeer(protocol, conns)
	if err != nil {
		e.Error = err.Error()
		return e
	}
	e.PeerCPUs = proc.FormatCPUList(p.cpus)
	drv, err := np.Driver(p.addr)
	if err != nil {
		p.close()
		e.Error = err.Error()
		return e
	}
	res, warm, err := drive(ctx, drv, conns, d)
	peerCPU, perr := p.close()
	switch {
	case err != nil:
		e.Error = err.Error()
		return e
	case perr != nil:
		e.Error = perr.Error()
		return e
	case res.Requests == 0:
		e.Error = fmt.Sprintf("no request completed against the null peer (%d errors)", res.Errors+res.Timeouts+res.Unexpected)
		return e
	}
	e.Requests = res.Requests
	e.P50US, e.P99US = res.Latency.P(50), res.Latency.P(99)
	e.RoundTripUS = res.Seconds * 1e6 / float64(res.Requests)
	// The client's CPU over the measured window alone, as a run's figure
	// is: opening the connections and the warm-up are left out.
	e.ClientCPUUS = (res.Client.UserSeconds + res.Client.SystemSeconds) * 1e6 / float64(res.Requests)
	e.PeerCPUUS = peerCPU.Seconds() * 1e6 / float64(res.Requests+warm)
	if bad := res.Errors + res.Timeouts + res.Unexpected; bad > 0 {
		e.Error = fmt.Sprintf("%d of %d requests failed against the null peer", bad, bad+res.Requests)
	}
	return e
}

// drive opens conns connections, warms them up and records a window; warm
// is the number of warm-up requests (their CPU is in the process's too).
func drive(ctx context.Context, drv driver.Driver, conns int, d time.Duration) (*result.Load, int64, error) {
	eng, err := load.New(load.Config{EngineConfig: result.EngineConfig{Connections: conns, Pipeline: 1}}, drv)
	if err != nil {
		return nil, 0, err
	}
	if err := eng.Open(ctx); err != nil {
		return nil, 0, fmt.Errorf("connect to the null peer: %w", err)
	}
	defer eng.Close()
	w, err := eng.Run(ctx, load.Window{Duration: d / warmupShare})
	if err != nil {
		return nil, 0, err
	}
	res, err := eng.Run(ctx, load.Window{Duration: d - d/warmupShare})
	if err != nil {
		return nil, 0, err
	}
	eng.Close()
	return res, w.Requests + w.Errors + w.Timeouts + w.Unexpected, nil
}
