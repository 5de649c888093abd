package run

import (
	"net"
	"slices"
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

// busyPollOf is the busy poll of a sample whose client is placed as p
// (its CPUs set): asked (≥ 0) it is as asked; auto (< 0) it is
// suite.BusyPollAuto when the client runs on CPUs the pinned target does
// not use, which only it would use, and off otherwise.
func busyPollOf(asked time.Duration, p *result.Placement) time.Duration {
	if asked >= 0 {
		return asked
	}
	if p.ClientCPUs == "" || p.TargetCPUs == "" {
		return 0
	}
	client, err1 := proc.ParseCPUList(p.ClientCPUs)
	target, err2 := proc.ParseCPUList(p.TargetCPUs)
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
