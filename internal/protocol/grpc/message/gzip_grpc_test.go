package message

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"google.golang.org/grpc/encoding"
	_ "google.golang.org/grpc/encoding/gzip" // registers grpc-go's gzip compressor
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/benchrig/benchrig/internal/grpcephemeral"
)

// grpc-go's gzip and benchrig's read each other's messages.

func TestGzipGRPCCompressor(t *testing.T) {
	c := encoding.GetCompressor("gzip")
	if c == nil {
		t.Fatal("grpc-go's gzip compressor is not registered")
	}
	for _, n := range []int{0, 1, 100, 100_000} {
		msg := payload(n)
		// grpc-go's compressor → Gunzip.
		var buf bytes.Buffer
		w, err := c.Compress(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(msg); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		got, err := Gunzip(nil, buf.Bytes(), n)
		if err != nil || !bytes.Equal(got, msg) {
			t.Errorf("n=%d: Gunzip of grpc-go's: %d bytes, %v", n, len(got), err)
		}
		// Gzip → grpc-go's decompressor.
		r, err := c.Decompress(bytes.NewReader(Gzip(nil, msg, false)[PrefixLen:]))
		if err != nil {
			t.Fatal(err)
		}
		got, err = io.ReadAll(r)
		if err != nil || !bytes.Equal(got, msg) {
			t.Errorf("n=%d: grpc-go reads of Gzip's: %d bytes, %v", n, len(got), err)
		}
	}
}

// TestGzipCall calls grpc-go's server (grpcephemeral with Gzip) over h2c
// with a request made by Gzip, and reads its gzip-compressed reply with
// Gunzip.
func TestGzipCall(t *testing.T) {
	srv := grpcephemeral.StartT(t, grpcephemeral.Options{Gzip: true})
	m, err := greeter(t).Method("benchrig.test.v1.Greeter/SayHello")
	if err != nil {
		t.Fatal(err)
	}
	in := m.Desc.Input()
	req := dynamicpb.NewMessage(in)
	req.Set(in.Fields().ByName("name"), protoreflect.ValueOfString("gzip"))
	req.Set(in.Fields().ByName("id"), protoreflect.ValueOfInt64(42))
	b, err := proto.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http2.Transport{AllowHTTP: true, DialTLSContext: func(ctx context.Context, network, addr string, _ *tls.Config) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	defer tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+srv.Addr()+m.Path, bytes.NewReader(Gzip(nil, b, false)))
	if err != nil {
		t.Fatal(err)
	}
	hreq.Header.Set("content-type", "application/grpc")
	hreq.Header.Set("te", "trailers")
	hreq.Header.Set("grpc-encoding", "gzip")
	hreq.Header.Set("grpc-accept-encoding", "gzip")
	resp, err := tr.RoundTrip(hreq)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if st := resp.Trailer.Get("grpc-status"); st != "0" {
		t.Fatalf("grpc-status %q: %s", st, DecodeMessage(resp.Trailer.Get("grpc-message")))
	}
	if enc := resp.Header.Get("grpc-encoding"); enc != "gzip" {
		t.Errorf("grpc-encoding %q, want gzip", enc)
	}
	out := m.Desc.Output()
	var replies int
	err = Split(body, 0, func(compressed bool, msg []byte) error {
		replies++
		if !compressed {
			t.Error("the reply is not compressed")
			return nil
		}
		plain, err := Gunzip(nil, msg, 0)
		if err != nil {
			return err
		}
		reply := dynamicpb.NewMessage(out)
		if err := proto.Unmarshal(plain, reply); err != nil {
			return err
		}
		if got := reply.Get(out.Fields().ByName("message")).String(); got != "hello gzip" {
			t.Errorf("reply message %q, want %q", got, "hello gzip")
		}
		if got := reply.Get(out.Fields().ByName("id")).Int(); got != 42 {
			t.Errorf("reply id %d, want 42", got)
		}
		return nil
	})
	if err != nil || replies != 1 {
		t.Errorf("reply: %v, %d messages, want 1", err, replies)
	}
	if got := srv.Calls()["SayHello"]; got != 1 {
		t.Errorf("the server handled %d SayHello calls, want 1", got)
	}
}
