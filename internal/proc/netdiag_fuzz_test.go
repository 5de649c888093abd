package proc

import (
	"net/netip"
	"os"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
	"golang.org/x/sys/unix"
)

// FuzzDiagDump: TCPListeners parses the kernel's sock_diag replies. Any
// datagram is parsed or refused without a panic, the error naming
// sock_diag; the listeners it appends have an inode and a valid address
// (IPv4, or IPv6 that is not IPv4-mapped, no zone), at most one per message
// the bytes can hold, after the ones it was given, untouched.
func FuzzDiagDump(f *testing.F) {
	// Dumps captured from a real kernel (see TestDiagCaptured).
	for seq, name := range []string{"inet.bin", "inet6.bin"} {
		b, err := os.ReadFile("testdata/sockdiag/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, uint32(seq+1))
	}
	lo4 := netip.MustParseAddr("127.0.0.1")
	f.Add(cat(
		diagMsg(3, unix.AF_INET6, tcpStateListen, netip.MustParseAddr("::ffff:10.0.0.1"), 80, 9),
		nlMsg(3, unix.NLMSG_NOOP, nil),
		diagMsg(3, unix.AF_INET, 1, lo4, 80, 10),
		statusMsg(3, unix.NLMSG_DONE, 0),
	), uint32(3))
	f.Add(statusMsg(1, unix.NLMSG_ERROR, -int32(unix.ENOENT)), uint32(1))
	f.Add(diagMsg(1, unix.AF_INET, tcpStateListen, lo4, 80, 5)[:40], uint32(1))
	f.Add([]byte{}, uint32(0))
	fuzzcheck.Limit()
	prev := Listener{netip.MustParseAddrPort("192.0.2.1:7"), 7}
	f.Fuzz(func(t *testing.T, b []byte, seq uint32) {
		fuzzcheck.Bound(t, len(b), func() {
			got, done, err := parseDiagDump(b, seq, []Listener{prev})
			if err != nil && !strings.HasPrefix(err.Error(), "sock_diag: ") {
				t.Fatalf("error %q does not name sock_diag", err)
			}
			if len(got) == 0 || got[0] != prev {
				t.Fatalf("the listeners given became %v", got)
			}
			if n := len(got) - 1; n > len(b)/(nlmsgHdrLen+diagMsgLen) {
				t.Fatalf("%d listeners from %d bytes", n, len(b))
			}
			if done && err == nil && len(b) < nlmsgHdrLen {
				t.Fatalf("done from %d bytes", len(b))
			}
			for _, l := range got[1:] {
				a := l.Addr.Addr()
				if l.Inode == 0 || !l.Addr.IsValid() || a.Zone() != "" || a.Is4In6() || !(a.Is4() || a.Is6()) {
					t.Fatalf("listener %+v: want an inode and a valid address", l)
				}
			}
		})
	})
}
