package proc

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// nlMsg builds a netlink message of type typ answering request seq, padded
// to a multiple of 4 bytes.
func nlMsg(seq uint32, typ uint16, body []byte) []byte {
	b := make([]byte, nlmsgHdrLen, nlmsgHdrLen+len(body)+3)
	binary.NativeEndian.PutUint32(b[0:], uint32(nlmsgHdrLen+len(body)))
	binary.NativeEndian.PutUint16(b[4:], typ)
	binary.NativeEndian.PutUint16(b[6:], unix.NLM_F_MULTI)
	binary.NativeEndian.PutUint32(b[8:], seq)
	b = append(b, body...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// diagMsg builds a SOCK_DIAG_BY_FAMILY reply describing one socket.
func diagMsg(seq uint32, family, state uint8, a netip.Addr, port uint16, inode uint32) []byte {
	m := make([]byte, diagMsgLen)
	m[0], m[1] = family, state
	binary.BigEndian.PutUint16(m[4:], port)
	binary.BigEndian.PutUint16(m[6:], 0)
	copy(m[8:], a.AsSlice())
	binary.NativeEndian.PutUint32(m[64:], 1000) // uid
	binary.NativeEndian.PutUint32(m[68:], inode)
	return nlMsg(seq, unix.SOCK_DIAG_BY_FAMILY, m)
}

// statusMsg builds an NLMSG_DONE or NLMSG_ERROR message carrying status.
func statusMsg(seq uint32, typ uint16, status int32) []byte {
	return nlMsg(seq, typ, binary.NativeEndian.AppendUint32(nil, uint32(status)))
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// TestDiagCaptured parses dumps captured from a real kernel (AF_INET
// request 1, AF_INET6 request 2; listeners.txt is what /proc/net/tcp and
// tcp6 listed at the same moment, with a socket bound to ::ffff:127.0.0.1
// among them).
func TestDiagCaptured(t *testing.T) {
	var got []Listener
	for seq, name := range []string{"inet.bin", "inet6.bin"} {
		b, err := os.ReadFile("testdata/sockdiag/" + name)
		if err != nil {
			t.Fatal(err)
		}
		var done bool
		got, done, err = parseDiagDump(b, uint32(seq+1), got)
		if err != nil || !done {
			t.Fatalf("%s: done %v, %v", name, done, err)
		}
	}
	sortListeners(got)
	want := readListeners(t, "testdata/sockdiag/listeners.txt")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("captured dump gives\n%v\nwant\n%v", got, want)
	}
}

func readListeners(t *testing.T, path string) []Listener {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []Listener
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		addr, ino, _ := strings.Cut(sc.Text(), " ")
		n, err := strconv.ParseUint(ino, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, Listener{netip.MustParseAddrPort(addr), n})
	}
	return out
}

func TestDiagParse(t *testing.T) {
	lo4, lo6 := netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")
	mapped := netip.MustParseAddr("::ffff:10.1.2.3")
	ll := netip.MustParseAddr("fe80::1")
	dump := cat(
		diagMsg(7, unix.AF_INET, tcpStateListen, lo4, 5432, 11),
		nlMsg(7, unix.NLMSG_NOOP, nil),
		diagMsg(7, unix.AF_INET6, tcpStateListen, lo6, 443, 12),
		statusMsg(7, unix.NLMSG_ERROR, 0), // an acknowledgement
		diagMsg(7, unix.AF_INET6, tcpStateListen, mapped, 80, 13),
		diagMsg(7, unix.AF_INET6, tcpStateListen, ll, 22, 14),
		diagMsg(7, unix.AF_INET, 1 /* ESTABLISHED */, lo4, 5432, 15),
		diagMsg(7, unix.AF_INET, tcpStateListen, lo4, 5433, 0), // no inode
		statusMsg(7, unix.NLMSG_DONE, 0),
	)
	prev := []Listener{{netip.MustParseAddrPort("1.1.1.1:1"), 1}}
	got, done, err := parseDiagDump(dump, 7, prev)
	want := []Listener{
		prev[0],
		{netip.MustParseAddrPort("127.0.0.1:5432"), 11},
		{netip.MustParseAddrPort("[::1]:443"), 12},
		{netip.MustParseAddrPort("10.1.2.3:80"), 13},
		{netip.MustParseAddrPort("[fe80::1]:22"), 14},
	}
	if err != nil || !done || !reflect.DeepEqual(got, want) {
		t.Errorf("parseDiagDump = %v, %v, %v; want %v, done", got, done, err, want)
	}
	// A part of a dump, whose last message lacks its padding.
	one := diagMsg(7, unix.AF_INET, tcpStateListen, lo4, 1, 3)
	binary.NativeEndian.PutUint32(one, uint32(len(one)+3))
	one = append(one, 1, 2, 3)
	if got, done, err := parseDiagDump(one, 7, nil); err != nil || done || len(got) != 1 {
		t.Errorf("unpadded last message: %v, %v, %v", got, done, err)
	}
	if got, done, err := parseDiagDump(nil, 7, nil); err != nil || done || got != nil {
		t.Errorf("empty datagram: %v, %v, %v", got, done, err)
	}
	// Cut anywhere before its end, the dump is not done; cut inside a
	// message, it is an error.
	for n := 0; n < len(dump)-(nlmsgHdrLen+4); n++ {
		_, done, err := parseDiagDump(dump[:n], 7, nil)
		if done {
			t.Fatalf("the first %d of %d bytes: done", n, len(dump))
		}
		if err != nil && !strings.HasPrefix(err.Error(), "sock_diag: ") {
			t.Fatalf("the first %d bytes: error %q does not name sock_diag", n, err)
		}
	}
}

func TestDiagMalformed(t *testing.T) {
	lo4 := netip.MustParseAddr("127.0.0.1")
	good := diagMsg(1, unix.AF_INET, tcpStateListen, lo4, 80, 5)
	long := nlMsg(1, unix.SOCK_DIAG_BY_FAMILY, make([]byte, diagMsgLen))
	binary.NativeEndian.PutUint32(long, 200)
	short := nlMsg(1, unix.SOCK_DIAG_BY_FAMILY, nil)
	binary.NativeEndian.PutUint32(short, 8)
	huge := nlMsg(1, unix.SOCK_DIAG_BY_FAMILY, nil)
	binary.NativeEndian.PutUint32(huge, 0xffffffff)
	for _, c := range []struct {
		name  string
		b     []byte
		want  string
		errno unix.Errno
	}{
		{"truncated header", good[:10], "truncated message header at byte 0: 10 bytes, want 16", 0},
		{"truncated second header", cat(good, good[:8]), "truncated message header at byte 88: 8 bytes", 0},
		{"length past the datagram", long, "message at byte 0 has length 200, want 16 to the 88 bytes left", 0},
		{"length 0xffffffff", huge, "has length 4294967295", 0},
		{"length under the header", short, "message at byte 0 has length 8, want 16", 0},
		{"too small for inet_diag_msg", nlMsg(1, unix.SOCK_DIAG_BY_FAMILY, make([]byte, 40)), "inet_diag_msg of 40 bytes, want 72", 0},
		{"NLMSG_ERROR with an errno", cat(good, statusMsg(1, unix.NLMSG_ERROR, -int32(unix.EPERM))), "errno 1", unix.EPERM},
		{"NLMSG_ERROR without one", nlMsg(1, unix.NLMSG_ERROR, []byte{1, 2}), "error message at byte 0 has 2 bytes, want 4", 0},
		{"NLMSG_DONE with an errno", statusMsg(1, unix.NLMSG_DONE, -int32(unix.ENOBUFS)), "errno 105", unix.ENOBUFS},
		{"NLMSG_OVERRUN", nlMsg(1, unix.NLMSG_OVERRUN, nil), "overrun", 0},
		{"another request's reply", diagMsg(9, unix.AF_INET, tcpStateListen, lo4, 80, 5), "answers request 9, want 1", 0},
		{"unknown type", nlMsg(1, 99, nil), "has type 99, want 20", 0},
		{"unknown family", diagMsg(1, unix.AF_UNIX, tcpStateListen, lo4, 80, 5), "address family 1", 0},
	} {
		_, _, err := parseDiagDump(c.b, 1, nil)
		if err == nil || !strings.HasPrefix(err.Error(), "sock_diag: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error saying %q", c.name, err, c.want)
		}
		if c.errno != 0 && !errors.Is(err, c.errno) {
			t.Errorf("%s: %v is not %v", c.name, err, c.errno)
		}
	}
}

// listenInode returns the inode of a listener's socket.
func listenInode(t *testing.T, ln net.Listener) uint64 {
	t.Helper()
	rc, err := ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var st unix.Stat_t
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.Fstat(int(fd), &st) }); err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	return st.Ino
}

// listenMapped listens on ::ffff:127.0.0.1 (an IPv6 socket that takes
// IPv4-mapped connections), returning its port and inode.
func listenMapped(t *testing.T) (port uint16, inode uint64, ok bool) {
	fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, 0, false
	}
	t.Cleanup(func() { unix.Close(fd) })
	sa := &unix.SockaddrInet6{Addr: netip.MustParseAddr("::ffff:127.0.0.1").As16()}
	if unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 0) != nil || unix.Bind(fd, sa) != nil || unix.Listen(fd, 8) != nil {
		return 0, 0, false
	}
	got, err := unix.Getsockname(fd)
	var st unix.Stat_t
	if err != nil || unix.Fstat(fd, &st) != nil {
		t.Fatal(err)
	}
	return uint16(got.(*unix.SockaddrInet6).Port), st.Ino, true
}

// TestDiagReal lists this process's own listeners (127.0.0.1, ::1 and
// ::ffff:127.0.0.1) through sock_diag and the files, compares the two
// listings of the whole machine, and checks a closed listener is gone.
func TestDiagReal(t *testing.T) {
	fs := Default()
	if !fs.usesOwnProc() {
		t.Skip("no process filesystem at /proc")
	}
	if _, err := diagTCPListeners(); err != nil {
		t.Skipf("no sock_diag here: %v", err)
	}
	mine := map[string]Listener{}
	ln4, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln4.Close()
	mine["127.0.0.1"] = Listener{ln4.Addr().(*net.TCPAddr).AddrPort(), listenInode(t, ln4)}
	if ln6, err := net.Listen("tcp6", "[::1]:0"); err != nil {
		t.Logf("no ::1 (%v): IPv6 not checked", err)
	} else {
		defer ln6.Close()
		mine["::1"] = Listener{ln6.Addr().(*net.TCPAddr).AddrPort(), listenInode(t, ln6)}
	}
	if port, ino, ok := listenMapped(t); ok {
		mine["::ffff:127.0.0.1"] = Listener{netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), port), ino}
	} else {
		t.Log("cannot listen on ::ffff:127.0.0.1: IPv4-mapped addresses not checked")
	}

	diag, err := diagTCPListeners()
	if err != nil {
		t.Fatal(err)
	}
	files, err := fs.tcpListenersFiles()
	if err != nil {
		t.Fatal(err)
	}
	for name, l := range mine {
		if !containsListener(diag, l) || !containsListener(files, l) {
			t.Errorf("listener on %s %v: in sock_diag's listing %v, in the files' %v", name, l, containsListener(diag, l), containsListener(files, l))
		}
	}

	// The machine's listeners may change between two reads (other
	// processes), so each comparison reads three times, A B A: a socket
	// in both A listings was listening throughout (an inode names one
	// socket), so B lists it too, at the same address. Until one round
	// sees nothing change, then the listings are equal, order included.
	sandwich := func(kind string, a1, b, a2 []Listener) {
		for _, l := range a1 {
			if containsListener(a2, l) && !containsListener(b, l) {
				t.Errorf("%v is in both %s listings but not in the one between them:\n%v\n%v\n%v", l, kind, a1, b, a2)
			}
		}
	}
	stable := false
	for try := 0; try < 50 && !stable && !t.Failed(); try++ {
		f1, err1 := fs.tcpListenersFiles()
		n1, err2 := diagTCPListeners()
		f2, err3 := fs.tcpListenersFiles()
		n2, err4 := diagTCPListeners()
		if err := errors.Join(err1, err2, err3, err4); err != nil {
			t.Fatal(err)
		}
		for _, ls := range [][]Listener{f1, n1, f2, n2} {
			sortListeners(ls)
		}
		sandwich("file", f1, n1, f2)
		sandwich("sock_diag", n1, f2, n2)
		if reflect.DeepEqual(f1, n1) && reflect.DeepEqual(n1, f2) && reflect.DeepEqual(f2, n2) {
			stable = true
		}
	}
	if !stable {
		t.Log("the machine's listeners changed in every round: compared only those that stayed")
	}

	// Through TCPListeners, then closed.
	before := diagListings.Load()
	all, err := fs.TCPListeners()
	if err != nil || diagListings.Load() == before {
		t.Fatalf("TCPListeners: %v; sock_diag used: %v", err, diagListings.Load() != before)
	}
	if !containsListener(all, mine["127.0.0.1"]) {
		t.Errorf("TCPListeners = %v; want %v in it", all, mine["127.0.0.1"])
	}
	ln4.Close()
	for _, read := range []func() ([]Listener, error){diagTCPListeners, fs.tcpListenersFiles, fs.TCPListeners} {
		ls, err := read()
		if err != nil || containsListener(ls, mine["127.0.0.1"]) {
			t.Errorf("after Close: %v, %v; want %v gone", ls, err, mine["127.0.0.1"])
		}
	}
}

func containsListener(ls []Listener, l Listener) bool {
	for _, x := range ls {
		if x == l {
			return true
		}
	}
	return false
}

// TestListenerPIDDiag finds this process by its listening port through
// sock_diag, and checks which filesystems use it.
func TestListenerPIDDiag(t *testing.T) {
	fs := Default()
	if !fs.usesOwnProc() {
		t.Skip("no process filesystem at /proc")
	}
	if _, err := diagTCPListeners(); err != nil {
		t.Skipf("no sock_diag here: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	before := diagListings.Load()
	port := ln.Addr().(*net.TCPAddr).Port
	if pid, err := fs.ListenerPID(port); err != nil || pid != os.Getpid() {
		t.Errorf("ListenerPID(%d) = %d, %v; want this process %d", port, pid, err, os.Getpid())
	}
	if diagListings.Load() == before {
		t.Error("ListenerPID did not list through sock_diag")
	}

	for root, want := range map[string]bool{"": true, "/proc": true, "/proc/": true, "/proc/self/..": true, t.TempDir(): false, "/proc/self": false} {
		if got := (FS{root: root}).usesOwnProc(); got != want {
			t.Errorf("FS at %q uses sock_diag: %v, want %v", root, got, want)
		}
	}
	before = diagListings.Load()
	if _, err := fixture(t).TCPListeners(); err != nil || diagListings.Load() != before {
		t.Errorf("fixture TCPListeners: %v; sock_diag used: %v", err, diagListings.Load() != before)
	}
}

// TestDiagFallback: when sock_diag fails (here: as under a seccomp
// filter), TCPListeners reads the files.
func TestDiagFallback(t *testing.T) {
	fs := Default()
	if !fs.usesOwnProc() {
		t.Skip("no process filesystem at /proc")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	want := Listener{ln.Addr().(*net.TCPAddr).AddrPort(), listenInode(t, ln)}
	defer func(f func() ([]Listener, error)) { diagList = f }(diagList)
	calls := 0
	diagList = func() ([]Listener, error) {
		calls++
		return nil, fmt.Errorf("sock_diag: socket: %w", unix.EPERM)
	}
	before := diagListings.Load()
	ls, err := fs.TCPListeners()
	if err != nil || calls != 1 || diagListings.Load() != before || !containsListener(ls, want) {
		t.Errorf("TCPListeners with sock_diag failing: %v, %v (sock_diag tried %d times); want %v from the files", ls, err, calls, want)
	}
	if pid, err := fs.ListenerPID(want.Port()); err != nil || pid != os.Getpid() {
		t.Errorf("ListenerPID(%d) with sock_diag failing = %d, %v; want %d", want.Port(), pid, err, os.Getpid())
	}
}

// TestDiagNoIPv6: a kernel that refuses the AF_INET6 dump with ENOENT or
// EAFNOSUPPORT has no IPv6 (as a missing tcp6 file says); any other error
// fails the listing.
func TestDiagNoIPv6(t *testing.T) {
	l4 := Listener{netip.MustParseAddrPort("127.0.0.1:80"), 1}
	l6 := Listener{netip.MustParseAddrPort("[::1]:80"), 2}
	for _, c := range []struct {
		errno unix.Errno
		want  []Listener
	}{
		{0, []Listener{l4, l6}},
		{unix.ENOENT, []Listener{l4}},
		{unix.EAFNOSUPPORT, []Listener{l4}},
		{unix.EPERM, nil},
	} {
		got, err := diagBothFamilies(func(family uint8, seq uint32, out []Listener) ([]Listener, error) {
			if family == unix.AF_INET {
				return append(out, l4), nil
			}
			out = append(out, l6) // a dump that fails part way
			if c.errno != 0 {
				return nil, &diagError{Errno: c.errno}
			}
			return out, nil
		})
		if !reflect.DeepEqual(got, c.want) || (err != nil) != (c.want == nil) {
			t.Errorf("AF_INET6 dump failing with %v: %v, %v; want %v", c.errno, got, err, c.want)
		}
	}
}

// The CPU one listing costs: reading /proc/net/tcp and tcp6, against the
// two sock_diag dumps TCPListeners makes on /proc.
func BenchmarkTCPListenersFiles(b *testing.B) {
	fs := Default()
	for b.Loop() {
		ls, err := fs.tcpListenersFiles()
		if err != nil {
			b.Fatal(err)
		}
		sortListeners(ls)
	}
}

func BenchmarkTCPListenersNetlink(b *testing.B) {
	fs := Default()
	if _, err := diagTCPListeners(); err != nil || !fs.usesOwnProc() {
		b.Skipf("no sock_diag on /proc here: %v", err)
	}
	before := diagListings.Load()
	for b.Loop() {
		if _, err := fs.TCPListeners(); err != nil {
			b.Fatal(err)
		}
	}
	if diagListings.Load() == before {
		b.Fatal("TCPListeners did not use sock_diag")
	}
}
