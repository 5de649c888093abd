//go:build linux

package http

import (
	"bytes"
	"context"
	"net"
	"testing"
)

// cannedServer answers every request head (requests without a body) with
// the same small response, from a buffer it reuses: the server allocates
// nothing per request, so allocs/op is the loop's.
func cannedServer(b testing.TB) string {
	resp := []byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
	return serveConns(b, func(c net.Conn) {
		buf := make([]byte, 64<<10)
		out := make([]byte, 0, 64<<10)
		m := 0 // bytes of buf held over: the start of a head split across reads
		for {
			n, err := c.Read(buf[m:])
			if err != nil {
				return
			}
			data := buf[:m+n]
			k := bytes.Count(data, []byte("\r\n\r\n"))
			if cut := bytes.LastIndex(data, []byte("\r\n\r\n")); cut >= 0 {
				data = data[cut+4:]
			}
			m = copy(buf, data)
			out = out[:0]
			for ; k > 0; k-- {
				out = append(out, resp...)
			}
			if _, err := c.Write(out); err != nil {
				return
			}
		}
	})
}

// BenchmarkLoop runs b.N requests through an event loop of 4 connections
// to a loopback server that answers from a canned buffer, unpipelined and
// in batches of 16.
//
//	go test -run '^$' -bench Loop -benchmem ./internal/protocol/http/driver/
func BenchmarkLoop(b *testing.B) {
	url := cannedServer(b)
	for _, tc := range []struct {
		name     string
		pipeline int
	}{{"pipeline=1", 1}, {"pipeline=16", 16}} {
		b.Run(tc.name, func(b *testing.B) {
			d, err := New(Config{URL: url})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			l, err := d.OpenLoop(ctx, 4)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			// a first run to warm the connections and the loop's buffers
			if err := l.Run(ctx, tc.pipeline, 0, newTally(1000)); err != nil {
				b.Fatal(err)
			}
			w := newTally(uint64(b.N))
			b.ReportAllocs()
			b.ResetTimer()
			if err := l.Run(ctx, tc.pipeline, 0, w); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if w.ok != b.N {
				b.Fatalf("%d OK of %d: %v", w.ok, b.N, w.msgs)
			}
		})
	}
}
