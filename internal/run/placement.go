package run

import (
	"net"
	"strings"

	"github.com/benchrig/benchrig/internal/proc"
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
