package target

import "github.com/benchrig/benchrig/internal/proc"

// PIDListeningOn returns the PID of the process listening on TCP port (on
// any local address: 127.0.0.1, 0.0.0.0, [::], …), found by reading the
// listening sockets' inodes from /proc/net/tcp and /proc/net/tcp6 and the
// process holding one in /proc/*/fd. When several processes share the socket
// (a master and its forked workers) it returns the one whose parent is not
// among them, the lowest such PID if there are several. See
// proc.FS.ListenerPID.
func PIDListeningOn(port int) (int, error) {
	return proc.Default().ListenerPID(port)
}
