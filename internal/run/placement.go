package run

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/proc"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
)

// checkClientCPUs says whether benchrig may run on every CPU of the list,
// naming the first it may not and those it may.
func checkClientCPUs(cpus string) error {
	list, err := proc.ParseCPUList(cpus)
	if err != nil {
		return err
	}
	return proc.CheckAllowed(list)
}

// onLoopback reports whether the driver's server is on this machine's
// loopback or a Unix socket (a driver that says its address: Addr()
// "host:port", a socket's host being its directory).
func onLoopback(d any) bool {
	a, ok := d.(interface{ Addr() string })
	if !ok {
		return false
	}
	host, _, err := net.SplitHostPort(a.Addr())
	if err != nil {
		return false
	}
	if host == "localhost" || strings.HasPrefix(host, "/") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// pinClient pins benchrig to the CPU list cpus (proc.PinClient), once
// it is checked.
func pinClient(cpus string) (restore func(), err error) {
	if err := checkClientCPUs(cpus); err != nil {
		return nil, err
	}
	list, _ := proc.ParseCPUList(cpus)
	return proc.PinClient(list)
}

// busyPoll is placement.busy_poll as a system.Spec's BusyPoll (validated
// with the suite: an error cannot come back here, and would mean auto).
func busyPoll(s string) time.Duration {
	d, err := suite.ParseBusyPoll(s)
	if err != nil {
		return -1
	}
	return d
}

// coalesceOff is placement.coalesce as a system.Spec's CoalesceOff
// (validated with the suite: an error would mean auto).
func coalesceOff(s string) bool {
	off, _ := suite.ParseCoalesce(s)
	return off
}

// ioUringOff is placement.io_uring as a system.Spec's IOUringOff
// (validated with the suite: an error would mean auto).
func ioUringOff(s string) bool {
	off, _ := suite.ParseIOUring(s)
	return off
}

// serverPinned is the CPU list of the server when it is pinned: by
// benchrig (TargetCPUs), or found so (ServerCPUs); "" otherwise.
func serverPinned(p *result.Placement) string {
	if p.TargetCPUs != "" {
		return p.TargetCPUs
	}
	return p.ServerCPUs
}

// serverCPUs is the CPU list a server on this machine that benchrig did
// not pin (p.TargetCPUs empty) may run on, when it is pinned otherwise
// (proc.PinnedWithin):
// the union of the affinities of every thread of the target's process
// tree (attached, or started: its command may pin itself), or, with no
// target, of the processes holding the socket that listens on the
// driver's loopback port. "" when not pinned or not found: another
// user's process, nothing listening yet, a Unix socket.
func serverCPUs(p *result.Placement, t *result.TargetInfo, d any) string {
	if p.TargetCPUs != "" {
		return ""
	}
	fs := proc.Default()
	var pids []int
	switch {
	case t != nil && t.PID > 0:
		pids = []int{t.PID}
		if kids, err := fs.Descendants(t.PID); err == nil {
			pids = append(pids, kids...)
		}
	case t == nil:
		port := loopbackPort(d)
		if port == 0 {
			return ""
		}
		_, holders, err := fs.ListenerTree(port)
		if err != nil {
			return ""
		}
		pids = holders
	default:
		return ""
	}
	cpus, err := fs.ProcessesAffinity(pids)
	if err != nil || !proc.PinnedWithin(cpus) {
		return ""
	}
	return proc.FormatCPUList(cpus)
}

// loopbackPort is the TCP port of a driver's server on this machine's
// loopback (onLoopback), 0 otherwise.
func loopbackPort(d any) int {
	if !onLoopback(d) {
		return 0
	}
	_, port, err := net.SplitHostPort(d.(interface{ Addr() string }).Addr())
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return 0
	}
	return n
}

// busyPollOf is the busy poll of a sample whose client is placed as p
// (its CPUs set): asked (≥ 0) it is as asked; auto (< 0) it is
// suite.BusyPollAuto when the client runs on CPUs the pinned server
// (serverPinned) does not use, which only it would use, and off
// otherwise.
func busyPollOf(asked time.Duration, p *result.Placement) time.Duration {
	if asked >= 0 {
		return asked
	}
	server := serverPinned(p)
	if p.ClientCPUs == "" || server == "" {
		return 0
	}
	client, err1 := proc.ParseCPUList(p.ClientCPUs)
	target, err2 := proc.ParseCPUList(server)
	if err1 != nil || err2 != nil {
		return 0
	}
	for _, c := range client {
		if slices.Contains(target, c) {
			return 0
		}
	}
	return suite.BusyPollAuto
}
