package proc

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
)

// FuzzParseLocks: /proc/locks is read to name the process holding a
// results file's lock. Any text is parsed or refused without a panic; each
// lock it returns comes from a line of the input that is no waiter ("->")
// and prints back to the same kind, PID, device and inode; and a text made
// of the locks it found parses to them again. Allocation follows the
// input's size.
func FuzzParseLocks(f *testing.F) {
	for _, s := range []string{
		"1: FLOCK  ADVISORY  WRITE 4242 08:01:1311 0 EOF\n2: POSIX  ADVISORY  READ 77 fd:00:42 0 EOF\n2: -> POSIX  ADVISORY  WRITE 78 fd:00:42 0 EOF\n",
		"3: OFDLCK ADVISORY  WRITE -1 00:2e:5 0 EOF\n",
		"1: FLOCK ADVISORY WRITE x 08:01:1311 0 EOF\n1: FLOCK ADVISORY WRITE 1 ffffffff:ffffffff:18446744073709551615 0 EOF",
		"", "\n\n", "1: FLOCK  ADVISORY  WRITE 4242 08:01:1311",
	} {
		f.Add([]byte(s))
	}
	fuzzcheck.Limit()
	f.Fuzz(func(t *testing.T, b []byte) {
		fuzzcheck.Bound(t, len(b), func() {
			ls, err := ParseLocks(b)
			if err != nil {
				if !strings.HasPrefix(err.Error(), "locks: ") {
					t.Fatalf("error %v does not say it is /proc/locks'", err)
				}
				return
			}
			if n := bytes.Count(b, []byte("\n")) + 1; len(ls) > n {
				t.Fatalf("%d locks from %d lines", len(ls), n)
			}
			var again strings.Builder
			for _, l := range ls {
				if l.Kind == "" || l.Kind == "->" {
					t.Fatalf("a lock of kind %q", l.Kind)
				}
				mode := "READ"
				if l.Write {
					mode = "WRITE"
				}
				fmt.Fprintf(&again, "1: %s ADVISORY %s %d %x:%x:%d 0 EOF\n", l.Kind, mode, l.PID, l.Major, l.Minor, l.Inode)
			}
			back, err := ParseLocks([]byte(again.String()))
			if err != nil || len(back) != len(ls) {
				t.Fatalf("the %d locks found print to %q, which parses to %d (%v)", len(ls), again.String(), len(back), err)
			}
			for i := range ls {
				if back[i] != ls[i] {
					t.Fatalf("lock %d: %+v prints back as %+v", i, ls[i], back[i])
				}
			}
		})
	})
}
