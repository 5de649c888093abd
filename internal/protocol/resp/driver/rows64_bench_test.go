package resp

import (
	"context"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	wire "github.com/benchrig/benchrig/internal/resp"
)

// cannedConn is an in-memory net.Conn answering every write with the same
// reply, so that a benchmark measures the client's own work per request
// (build, parse, count, validate) without the kernel's.
type cannedConn struct {
	reply   []byte
	pending []byte
}

func (c *cannedConn) Write(p []byte) (int, error) {
	c.pending = append(c.pending, c.reply...)
	return len(p), nil
}

func (c *cannedConn) Read(p []byte) (int, error) {
	if len(c.pending) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.pending)
	c.pending = c.pending[:copy(c.pending, c.pending[n:])]
	return n, nil
}

func (c *cannedConn) Close() error                     { return nil }
func (c *cannedConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *cannedConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *cannedConn) SetDeadline(time.Time) error      { return nil }
func (c *cannedConn) SetReadDeadline(time.Time) error  { return nil }
func (c *cannedConn) SetWriteDeadline(time.Time) error { return nil }

// BenchmarkSeedRows64 is the client's cost of one MGET of 64 of the seeds'
// rows (~165 bytes of JSON each), all present, with every value validated
// and without validation.
func BenchmarkSeedRows64(b *testing.B) {
	reply := wire.AppendArrayHeader(nil, 64)
	for id := int64(1); id <= 64; id++ {
		reply = wire.AppendBulkString(reply, seedRow(id))
	}
	rows := make(map[int64][]byte, 64) // as the CLI's reference holds them (run.Reference)
	for id := int64(1); id <= 64; id++ {
		rows[id] = []byte(seedRow(id))
	}
	ref := func(id int64) ([]byte, bool) { v, ok := rows[id]; return v, ok }
	for _, sampled := range []float64{1, 0} {
		b.Run(fmt.Sprintf("validate=%v", sampled), func(b *testing.B) {
			cfg := Config{Addr: "127.0.0.1:1", KeyTemplate: rowsTemplate, DB: "bench", Batch: 64, KeySpace: 64, Timeout: time.Second}
			if sampled > 0 {
				cfg.ValidateSampled, cfg.Reference = sampled, ref
			}
			d, err := New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			c := newConn(d, &cannedConn{reply: reply})
			reqs, out := make([]driver.Request, 1), make([]driver.Outcome, 1)
			ctx := context.Background()
			b.SetBytes(int64(len(reply)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				reqs[0].Seq = uint64(i)
				if err := c.Do(ctx, reqs, out); err != nil || out[0].Class != driver.OK {
					b.Fatalf("request %d: %v %v %q", i, err, out[0].Class, out[0].Msg)
				}
			}
			if st := d.Stats(); st.Hits != int64(b.N)*64 || st.Mismatches != 0 {
				b.Fatalf("stats %+v after %d requests", st, b.N)
			}
		})
	}
}
