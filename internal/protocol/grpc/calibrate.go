package grpc

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/benchrig/benchrig/internal/calibrate"
	"github.com/benchrig/benchrig/internal/driver"
	grpc "github.com/benchrig/benchrig/internal/protocol/grpc/driver"
	"github.com/benchrig/benchrig/internal/protocol/grpc/message"
)

// The floor's call: the standard health check, whose descriptors are
// built in (no .proto file to read).
const healthCall = "grpc.health.v1.Health/Check"

func init() {
	calibrate.Register(string(Key), calibrate.NullPeer{
		New: func() calibrate.Responder { return &grpcNull{} },
		Driver: func(addr string) (driver.Driver, error) {
			set, err := message.FromDescriptors([]protoreflect.FileDescriptor{grpc_health_v1.File_grpc_health_v1_health_proto})
			if err != nil {
				return nil, err
			}
			c := grpc.DefaultConfig()
			c.Addr, c.Call, c.Timeout = addr, healthCall, 5*time.Second
			return grpc.NewWithSet(c, set)
		},
	})
}

// The null peer's frames: its SETTINGS (none), the ACK of the client's,
// and each call's answer: HEADERS (:status 200, content-type
// application/grpc), DATA (a HealthCheckResponse, status SERVING) and
// the trailers (grpc-status 0), with a stream ID patched in. Header
// fields are literals never indexed, so no table is kept. They are
// package variables, set before any init of the package runs: the null
// peer's process serves from within Register (see calibrate.Register).
var nullHello, nullAnswer, nullIDs = nullFrames()

// nullWindow is a WINDOW_UPDATE of the connection (stream 0); its
// increment, the frame's last 4 bytes, is patched per use.
var nullWindow = func() []byte {
	var b bytes.Buffer
	_ = http2.NewFramer(&b, nil).WriteWindowUpdate(0, 1)
	return b.Bytes()
}()

// nullFrames builds the null peer's frames; ids are the offsets of the
// answer's stream IDs.
func nullFrames() (hello, answer []byte, ids []int) {
	var b bytes.Buffer
	fr := http2.NewFramer(&b, nil)
	_ = fr.WriteSettings()
	_ = fr.WriteSettingsAck()
	hello = append([]byte(nil), b.Bytes()...)
	block := func(fields ...hpack.HeaderField) []byte {
		var hb bytes.Buffer
		enc := hpack.NewEncoder(&hb)
		for _, f := range fields {
			f.Sensitive = true
			_ = enc.WriteField(f)
		}
		return hb.Bytes()
	}
	b.Reset()
	_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, EndHeaders: true,
		BlockFragment: block(hpack.HeaderField{Name: ":status", Value: "200"}, hpack.HeaderField{Name: "content-type", Value: "application/grpc"})})
	ids = append(ids, 5)
	at := b.Len()
	_ = fr.WriteData(1, false, []byte{0, 0, 0, 0, 2, 0x08, 0x01})
	ids = append(ids, at+5)
	at = b.Len()
	_ = fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, EndHeaders: true, EndStream: true,
		BlockFragment: block(hpack.HeaderField{Name: "grpc-status", Value: "0"})})
	ids = append(ids, at+5)
	return hello, append([]byte(nil), b.Bytes()...), ids
}

// grpcNull answers a connection's preface with its settings, and every
// stream the client ends (its request sent) with nullAnswer, and gives the
// connection's flow-control window back as the requests' DATA use it (a
// WINDOW_UPDATE on stream 0 once windowRefill bytes were received: without
// it the client stalls once 64 KiB of requests are sent, some 13,000 empty
// calls a connection); other frames (settings, window updates, pings'
// answers) are read and ignored. Each stream's own window starts afresh.
type grpcNull struct {
	started bool
	unacked int // DATA bytes received since the last WINDOW_UPDATE
}

// windowRefill is when the null peer returns the connection's window: half
// of the 65,535 bytes every HTTP/2 connection starts with.
const windowRefill = 1 << 15

func (g *grpcNull) Respond(in []byte) ([]byte, int, error) {
	var out []byte
	used := 0
	if !g.started {
		if len(in) < len(http2.ClientPreface) {
			return nil, 0, nil
		}
		if string(in[:len(http2.ClientPreface)]) != http2.ClientPreface {
			return nil, 0, fmt.Errorf("null gRPC peer: no HTTP/2 client preface")
		}
		g.started, used = true, len(http2.ClientPreface)
		out = append(out, nullHello...)
	}
	for len(in)-used >= 9 {
		h := in[used:]
		n := int(h[0])<<16 | int(h[1])<<8 | int(h[2])
		if n > 1<<14 {
			return nil, 0, fmt.Errorf("null gRPC peer: a frame of %d bytes", n)
		}
		if len(h) < 9+n {
			break
		}
		typ, flags, id := h[3], h[4], binary.BigEndian.Uint32(h[5:9])&(1<<31-1)
		used += 9 + n
		if typ == 0x0 { // DATA counts against the connection's window
			if g.unacked += n; g.unacked >= windowRefill {
				out = append(out, nullWindow...)
				binary.BigEndian.PutUint32(out[len(out)-4:], uint32(g.unacked))
				g.unacked = 0
			}
		}
		if (typ == 0x0 || typ == 0x1) && flags&0x1 != 0 { // DATA or HEADERS ending the stream
			at := len(out)
			out = append(out, nullAnswer...)
			for _, off := range nullIDs {
				binary.BigEndian.PutUint32(out[at+off:], id)
			}
		}
	}
	return out, used, nil
}
