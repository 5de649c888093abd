package proc

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"sort"
	"strconv"
	"strings"
)

// tcpListen is the state column value of a listening socket in
// /proc/net/tcp.
const tcpListen = "0A"

// Listener is one listening TCP socket (a LISTEN line of /proc/net/tcp or
// tcp6, or a sock_diag reply).
type Listener struct {
	// Addr is the local address and port (0.0.0.0 or :: for any address).
	Addr netip.AddrPort
	// Inode identifies the socket; /proc/PID/fd links name it
	// "socket:[INODE]".
	Inode uint64
}

// Port is the listening port.
func (l Listener) Port() int { return int(l.Addr.Port()) }

// TCPListeners lists the listening TCP sockets of this network namespace,
// ordered by port, then address, then inode. On the machine's own /proc it
// asks the kernel's socket diagnostics (netlink sock_diag, as ss -ltn does),
// which costs a fraction of the CPU of reading the files; otherwise, or when
// that fails, it reads net/tcp and net/tcp6 (a kernel without IPv6 has no
// tcp6). Both give the same listing.
func (fs FS) TCPListeners() ([]Listener, error) {
	var diagErr error
	if fs.usesOwnProc() {
		out, err := diagList()
		if err == nil {
			diagListings.Add(1)
			sortListeners(out)
			return out, nil
		}
		diagErr = err
	}
	out, err := fs.tcpListenersFiles()
	if err != nil {
		if diagErr != nil {
			return nil, fmt.Errorf("%w (and %v)", err, diagErr)
		}
		return nil, err
	}
	sortListeners(out)
	return out, nil
}

// tcpListenersFiles reads the listening sockets of net/tcp and net/tcp6,
// unsorted.
func (fs FS) tcpListenersFiles() ([]Listener, error) {
	var out []Listener
	for _, name := range []string{"tcp", "tcp6"} {
		path := fs.Path("net", name)
		b, err := os.ReadFile(path)
		if err != nil {
			if name == "tcp6" && errors.Is(err, errNotExist) {
				continue
			}
			return nil, err
		}
		ls, err := ParseNetTCP(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		out = append(out, ls...)
	}
	return out, nil
}

// sortListeners orders ls by port, then address, then inode (several
// sockets share a port and address with SO_REUSEPORT).
func sortListeners(ls []Listener) {
	sort.Slice(ls, func(i, j int) bool {
		a, b := ls[i], ls[j]
		if a.Addr.Port() != b.Addr.Port() {
			return a.Addr.Port() < b.Addr.Port()
		}
		if a.Addr.Addr() != b.Addr.Addr() {
			return a.Addr.Addr().Less(b.Addr.Addr())
		}
		return a.Inode < b.Inode
	})
}

// errNotExist and errPermission name io/fs errors where the receiver "fs" shadows the package.
var errNotExist = fs.ErrNotExist
var errPermission = fs.ErrPermission

// ParseNetTCP parses the text of /proc/net/tcp or tcp6 and returns its
// listening sockets. Lines that are not sockets are skipped; an address
// that does not parse is an error wrapping ErrFormat.
func ParseNetTCP(b []byte) ([]Listener, error) {
	var out []Listener
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	first := true
	for sc.Scan() {
		if first { // header
			first = false
			continue
		}
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode …
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != tcpListen {
			continue
		}
		addr, err := parseHexAddr(f[1])
		if err != nil {
			return nil, fmt.Errorf("%w: local address %q: %w", ErrFormat, f[1], err)
		}
		ino, err := strconv.ParseUint(f[9], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: inode %q: %w", ErrFormat, f[9], err)
		}
		if ino == 0 {
			continue
		}
		out = append(out, Listener{Addr: addr, Inode: ino})
	}
	return out, sc.Err()
}

// parseHexAddr parses "0100007F:0BB8" (IPv4) or 32 hex digits and a port
// (IPv6). The kernel prints each 32-bit word of the address as a number in
// host byte order.
func parseHexAddr(s string) (netip.AddrPort, error) {
	hexIP, hexPort, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, errors.New("no port")
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if len(hexIP) != 8 && len(hexIP) != 32 {
		return netip.AddrPort{}, fmt.Errorf("%d hex digits, want 8 or 32", len(hexIP))
	}
	raw, err := hex.DecodeString(hexIP)
	if err != nil {
		return netip.AddrPort{}, err
	}
	ip := make([]byte, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	a, _ := netip.AddrFromSlice(ip)
	return netip.AddrPortFrom(a.Unmap(), uint16(port)), nil
}

// SocketInodes returns the inodes of the sockets process pid holds open
// (its fd directory's "socket:[N]" links). Reading another user's
// descriptors needs privilege: the error is then fs.ErrPermission.
func (fs FS) SocketInodes(pid int) (map[uint64]bool, error) {
	dir := fs.pidPath(pid, "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := make(map[uint64]bool)
	for _, e := range ents {
		link, err := os.Readlink(dir + "/" + e.Name())
		if err != nil {
			continue
		}
		if v, ok := strings.CutPrefix(link, "socket:["); ok {
			if ino, err := strconv.ParseUint(strings.TrimSuffix(v, "]"), 10, 64); err == nil {
				out[ino] = true
			}
		}
	}
	return out, nil
}

// ListenersOf returns the listening TCP sockets held by any of pids (a
// target's process tree), ordered by port.
func (fs FS) ListenersOf(pids []int) ([]Listener, error) {
	all, err := fs.TCPListeners()
	if err != nil {
		return nil, err
	}
	held := make(map[uint64]bool)
	for _, pid := range pids {
		inos, err := fs.SocketInodes(pid)
		if err != nil {
			continue // gone, or not ours to read
		}
		for ino := range inos {
			held[ino] = true
		}
	}
	var out []Listener
	for _, l := range all {
		if held[l.Inode] {
			out = append(out, l)
		}
	}
	return out, nil
}

// ListenerPID returns the PID of the process listening on TCP port (on any
// local address: 127.0.0.1, 0.0.0.0, [::], …), found from the listening
// sockets' inodes and the process holding one in /proc/*/fd. When several
// processes share the socket (a master and its forked workers) it returns
// the one whose parent is not among them, the lowest such PID if there are
// several.
func (fs FS) ListenerPID(port int) (int, error) {
	if port < 1 || port > 65535 {
		return 0, fmt.Errorf("port %d: want a TCP port 1-65535", port)
	}
	all, err := fs.TCPListeners()
	if err != nil {
		return 0, fmt.Errorf("port %d: %w", port, err)
	}
	inodes := make(map[uint64]bool)
	for _, l := range all {
		if l.Port() == port {
			inodes[l.Inode] = true
		}
	}
	if len(inodes) == 0 {
		return 0, fmt.Errorf("port %d: nothing listens on it (no listening socket in %s/net/tcp or tcp6)", port, fs.Root())
	}
	pids, err := fs.PIDs()
	if err != nil {
		return 0, fmt.Errorf("port %d: list processes: %w", port, err)
	}
	var holders []int
	hidden := 0
	for _, pid := range pids {
		inos, err := fs.SocketInodes(pid)
		if err != nil {
			if errors.Is(err, errPermission) {
				hidden++
			}
			continue // also: the process has gone meanwhile
		}
		for ino := range inos {
			if inodes[ino] {
				holders = append(holders, pid)
				break
			}
		}
	}
	if len(holders) == 0 {
		msg := fmt.Sprintf("port %d: a socket listens on it but no visible process holds it", port)
		if hidden > 0 {
			msg += fmt.Sprintf(" (%d processes' descriptors were not readable)", hidden)
		}
		return 0, errors.New(msg + "; run benchrig as the server's user or root, or give the PID")
	}
	return fs.eldest(holders), nil
}

// ListenerTree returns every process holding a socket that listens on TCP
// port — several when workers share one socket (forked after listen) or
// each hold their own (SO_REUSEPORT) — and their nearest common ancestor,
// whose tree holds them all: the root to sample a multi-process server by.
func (fs FS) ListenerTree(port int) (root int, holders []int, err error) {
	if port < 1 || port > 65535 {
		return 0, nil, fmt.Errorf("port %d: want a TCP port 1-65535", port)
	}
	all, err := fs.TCPListeners()
	if err != nil {
		return 0, nil, fmt.Errorf("port %d: %w", port, err)
	}
	inodes := make(map[uint64]bool)
	for _, l := range all {
		if l.Port() == port {
			inodes[l.Inode] = true
		}
	}
	if len(inodes) == 0 {
		return 0, nil, fmt.Errorf("port %d: nothing listens on it (no listening socket in %s/net/tcp or tcp6)", port, fs.Root())
	}
	pids, err := fs.PIDs()
	if err != nil {
		return 0, nil, fmt.Errorf("port %d: list processes: %w", port, err)
	}
	for _, pid := range pids {
		inos, err := fs.SocketInodes(pid)
		if err != nil {
			continue
		}
		for ino := range inos {
			if inodes[ino] {
				holders = append(holders, pid)
				break
			}
		}
	}
	if len(holders) == 0 {
		return 0, nil, fmt.Errorf("port %d: a socket listens on it but no visible process holds it; run benchrig as the server's user or root, or give the PID", port)
	}
	sort.Ints(holders)
	return fs.commonAncestor(holders), holders, nil
}

// commonAncestor is the nearest process whose tree holds every pid (one of
// them when it is the others' ancestor); 1 when only init joins them.
func (fs FS) commonAncestor(pids []int) int {
	buf := make([]byte, 4096)
	chain := func(pid int) []int {
		var c []int
		for i := 0; pid > 0 && i < 4096; i++ {
			c = append(c, pid)
			st, err := fs.ReadStat(pid, buf)
			if err != nil {
				break
			}
			pid = st.PPID
		}
		return c
	}
	common := chain(pids[0])
	for _, pid := range pids[1:] {
		in := map[int]bool{}
		for _, p := range chain(pid) {
			in[p] = true
		}
		for i, p := range common {
			if in[p] {
				common = common[i:]
				break
			}
			if i == len(common)-1 {
				return 1
			}
		}
	}
	if len(common) == 0 {
		return 1
	}
	return common[0]
}

// eldest picks, among processes sharing a socket, the one whose parent is
// not among them (the master), preferring the lowest PID.
func (fs FS) eldest(holders []int) int {
	sort.Ints(holders)
	in := make(map[int]bool, len(holders))
	for _, pid := range holders {
		in[pid] = true
	}
	buf := make([]byte, 4096)
	for _, pid := range holders {
		st, err := fs.ReadStat(pid, buf)
		if err != nil || !in[st.PPID] {
			return pid
		}
	}
	return holders[0]
}
