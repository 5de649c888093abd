//go:build linux

package http

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
)

// The event loops' hot path allocates nothing per request once warmed up:
// HTTP/1.1 plain and over TLS, HTTP/2 (h2c and over TLS) with streams
// refilled one by one. Measured with testing.AllocsPerRun over whole runs
// of the loop of two lengths, N and 2N requests: a run's fixed cost (its
// context.AfterFunc, the first batch) is the same in both, so the
// difference is what N more requests cost, and it must be 0.
//
// The allocations are counted by stack from the heap profile (every
// allocation sampled while measuring), the poller's park (Poller.Wait)
// included: it allocates nothing either.

// loopAllocs runs n requests through l (pipeline p), twice, and returns
// the allocations made on the loop's goroutine,
// AllocsPerRun's figure (all of one run's), and the first stacks.
func loopAllocs(t *testing.T, l driver.Loop, p int, n uint64, exempt string) (int64, float64, []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var w *tally
	var err error
	got, total, top := allocsOutsidePark(exempt, func() {
		w = newTally(n)
		err = l.Run(ctx, p, 0, w)
	})
	if err != nil {
		t.Fatal(err)
	}
	if uint64(w.ok) != n {
		t.Fatalf("%d OK of %d: %v", w.ok, n, w.msgs)
	}
	return got, total, top
}

// allocsOutsidePark runs f once with every allocation sampled and returns
// the allocations whose stack runs through a loop's Run (not through the
// exempt function, when one is named).
func allocsOutsidePark(exempt string, f func()) (n int64, total float64, top []string) {
	old := runtime.MemProfileRate
	runtime.MemProfileRate = 1
	defer func() { runtime.MemProfileRate = old }()
	before := loopSites(exempt)
	// AllocsPerRun (the house's measure) runs f twice: a warm-up call and
	// the measured one; the profile's difference holds both. Its own
	// figure counts the parks too: it is logged, not asserted.
	total = testing.AllocsPerRun(1, f)
	after := loopSites(exempt)
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			n += d
			if len(top) < 3 {
				top = append(top, fmt.Sprintf("%d × %s", d, stackString(k)))
			}
		}
	}
	return n, total, top
}

func stackString(pcs [32]uintptr) string {
	var b strings.Builder
	frames := runtime.CallersFrames(pcs[:])
	for i := 0; i < 8; i++ {
		fr, more := frames.Next()
		fmt.Fprintf(&b, "\n\t%s:%d", fr.Function, fr.Line)
		if !more {
			break
		}
	}
	return b.String()
}

// loopSites reads the heap profile: allocations by stack, of the stacks
// that run through a loop's Run and not through exempt.
func loopSites(exempt string) map[[32]uintptr]int64 {
	runtime.GC() // the profile is published at the end of a cycle
	runtime.GC()
	var recs []runtime.MemProfileRecord
	n, _ := runtime.MemProfile(nil, true)
	for {
		recs = make([]runtime.MemProfileRecord, n+50)
		var ok bool
		if n, ok = runtime.MemProfile(recs, true); ok {
			recs = recs[:n]
			break
		}
	}
	out := map[[32]uintptr]int64{}
	for _, r := range recs {
		inLoop, parked := false, false // parked: or in exempt
		frames := runtime.CallersFrames(r.Stack())
		for {
			fr, more := frames.Next()
			switch {
			case fr.Function == exempt:
				parked = true
			case strings.HasSuffix(fr.Function, "evloop.(*Loop).Run"),
				strings.HasSuffix(fr.Function, "driver.(*h2loop).Run"):
				inLoop = true
			}
			if !more {
				break
			}
		}
		if inLoop && !parked {
			out[r.Stack0] += r.AllocObjects
		}
	}
	return out
}

// perRequestAllocs fails unless n more requests cost no allocation. A
// handful either way is not per request: the test's own runtime.GC
// empties sync.Pools (crypto/tls's record buffers), refilled once after;
// one allocation per request would be 8000 more.
func perRequestAllocs(t *testing.T, l driver.Loop, p int, exempt string) {
	t.Helper()
	const n = 4000
	loopAllocs(t, l, p, 200, exempt) // warm-up: buffers grown, header table settled
	one, _, _ := loopAllocs(t, l, p, n, exempt)
	two, total, top := loopAllocs(t, l, p, 2*n, exempt)
	// each figure is of two runs
	if d := two - one; d > 8 || d < -8 {
		t.Fatalf("%d allocations in two runs of %d requests, %d in two of %d: %.4f per request, want 0; first stacks:\n%s",
			one, n, two, 2*n, float64(two-one)/(2*n), strings.Join(top, "\n"))
	}
	t.Logf("%d allocations in two runs of %d requests, %d in two of %d on the loop's goroutine; AllocsPerRun, every goroutine: %.0f per run of %d",
		one, n, two, 2*n, total, 2*n)
}

func TestLoopZeroAllocsPerRequest(t *testing.T) {
	for _, p := range []int{1, 8} {
		t.Run(fmt.Sprintf("pipeline=%d", p), func(t *testing.T) {
			d, err := New(Config{URL: cannedServer(t)})
			if err != nil {
				t.Fatal(err)
			}
			l, err := d.OpenLoop(context.Background(), 3)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			perRequestAllocs(t, l, p, "")
		})
	}
}

func TestLoopTLSZeroAllocsPerRequest(t *testing.T) {
	cert := validCert(t, "alloc")
	plain := cannedServer(t)
	addr := strings.TrimSuffix(strings.TrimPrefix(plain, "http://"), "/")
	// a TLS front for the canned server: crypto/tls's own allocations are
	// on the server's goroutines, not on the loop's
	front := tlsFront(t, cert, ProtoHTTP1, addr)
	l := openLoop(t, Config{URL: "https://" + front + "/", TLS: &TLSConfig{CACert: cert.CertFile}}, 2)
	// crypto/tls allocates once per record it reads (its atLeastReader
	// escapes in readFromUntil): the standard library's, left out.
	perRequestAllocs(t, l, 4, "crypto/tls.(*Conn).readFromUntil")
}

// proxy copies c to and from a new connection to addr.
func proxy(c net.Conn, addr string) {
	defer c.Close()
	up, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer up.Close()
	go func() {
		buf := make([]byte, 64<<10)
		for {
			n, err := up.Read(buf)
			if n > 0 {
				if _, err := c.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			if _, err := up.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// tlsFront is a TLS listener on 127.0.0.1 offering ALPN proto, with cert,
// that proxies each connection to the cleartext server at addr; it
// returns its host:port.
func tlsFront(t *testing.T, cert testCert, proto, addr string) string {
	t.Helper()
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert.TLS}, NextProtos: []string{proto}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go proxy(c, addr)
		}
	}()
	return ln.Addr().String()
}
