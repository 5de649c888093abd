//go:build linux

package pg

import (
	"context"
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/workload"
)

// fakeHuge is a fake PostgreSQL backend on 127.0.0.1: it lets any client
// in, prepares any statement as one bigint parameter and one json column,
// and answers every execution with a DataRow that claims 2 GiB, then
// streams bytes until the client goes away. sent counts the bytes of the
// huge message it got written.
type fakeHuge struct {
	ln   net.Listener
	sent atomic.Int64
	wg   sync.WaitGroup
}

func startFakeHuge(t *testing.T) *fakeHuge {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeHuge{ln: ln}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				defer nc.Close()
				f.serve(nc)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		f.wg.Wait()
	})
	return f
}

func (f *fakeHuge) dsn() string {
	return "postgres://bench@" + f.ln.Addr().String() + "/bench?sslmode=disable"
}

func (f *fakeHuge) serve(nc net.Conn) {
	be := pgproto3.NewBackend(nc, nc)
	if _, err := be.ReceiveStartupMessage(); err != nil {
		return
	}
	be.Send(&pgproto3.AuthenticationOk{})
	be.Send(&pgproto3.ParameterStatus{Name: "server_version", Value: "15.0"})
	be.Send(&pgproto3.ParameterStatus{Name: "client_encoding", Value: "UTF8"})
	be.Send(&pgproto3.BackendKeyData{ProcessID: 4242, SecretKey: []byte{0, 0, 0, 1}})
	be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	if be.Flush() != nil {
		return
	}
	executing := false
	for {
		msg, err := be.Receive()
		if err != nil {
			return
		}
		switch msg.(type) {
		case *pgproto3.Parse:
			be.Send(&pgproto3.ParseComplete{})
		case *pgproto3.Describe:
			be.Send(&pgproto3.ParameterDescription{ParameterOIDs: []uint32{pgtype.Int8OID}})
			be.Send(&pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{
				{Name: []byte("row_to_json"), DataTypeOID: pgtype.JSONOID, DataTypeSize: -1, TypeModifier: -1}}})
		case *pgproto3.Execute:
			executing = true
		case *pgproto3.Sync:
			if executing {
				be.Send(&pgproto3.BindComplete{})
				if be.Flush() != nil {
					return
				}
				f.stream(nc)
				return
			}
			be.Send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
		case *pgproto3.Terminate:
			return
		}
		if be.Flush() != nil {
			return
		}
	}
}

// stream writes the 2 GiB DataRow's header and then its body, 1 MiB at a
// time, until a write fails (the client closed) or 600 MiB went out.
func (f *fakeHuge) stream(nc net.Conn) {
	hdr := []byte{'D', 0, 0, 0, 0, 0, 1, 0x7f, 0xff, 0xff, 0xf0}
	binary.BigEndian.PutUint32(hdr[1:], 1<<31-1)
	if _, err := nc.Write(hdr); err != nil {
		return
	}
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = 'x'
	}
	for f.sent.Load() < 600<<20 {
		n, err := nc.Write(chunk)
		f.sent.Add(int64(n))
		if err != nil {
			return
		}
	}
}

// TestLoopRefusesHugeMessage: one backend message claiming 2 GiB fails the
// request with an error naming the message and both sizes as soon as its
// header arrives; the loop buffers no more than a read's worth of it.
func TestLoopRefusesHugeMessage(t *testing.T) {
	f := startFakeHuge(t)
	d, err := New(Config{DSN: secret.NewDSN(f.dsn()), Path: PreparedOne, Workload: workload.Config{Kind: workload.Uniform, Batch: 1, Rows: 10}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := d.OpenLoop(testCtx(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	w := &testWork{limit: 1}
	if err := l.Run(testCtx(t), 1, 0, w); err != nil {
		t.Fatal(err)
	}
	want := "backend message 'D' (DataRow) of 2147483647 bytes exceeds pg.max_message 67108864 bytes"
	if len(w.outs) != 1 || w.outs[0].Class != driver.Error || w.outs[0].Msg != want {
		t.Fatalf("outcomes %+v, want one Error %q", w.outs, want)
	}
	if c := cap(l.(*loop).conns[0].rbuf); c > 1<<20 {
		t.Errorf("read buffer grew to %d bytes for a refused message", c)
	}
}

// TestConnRefusesHugeMessage: the per-connection path (pgconn) refuses the
// same message under the same limit.
func TestConnRefusesHugeMessage(t *testing.T) {
	f := startFakeHuge(t)
	d, err := New(Config{DSN: secret.NewDSN(f.dsn()), Path: PreparedOne, MaxMessage: 1 << 20,
		Workload: workload.Config{Kind: workload.Uniform, Batch: 1, Rows: 10}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.OpenConn(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out := make([]driver.Outcome, 1)
	err = c.Do(context.Background(), []driver.Request{{Seq: 0}}, out)
	if err == nil || out[0].Class != driver.Error || out[0].Msg != "backend message of 2147483647 bytes exceeds pg.max_message 1048576 bytes" {
		t.Fatalf("Do: %v, outcome %+v: want the connection lost on a message over the limit", err, out[0])
	}
}
