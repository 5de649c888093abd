package grpc

import (
	"bytes"
	"io"
	"testing"

	"golang.org/x/net/http2"
)

// The null peer gives the connection's window back as requests use it: a
// client that sent far more than the 65,535 bytes a connection starts with
// may always send more, and every call is answered.
func TestNullPeerReturnsTheWindow(t *testing.T) {
	var in bytes.Buffer
	in.WriteString(http2.ClientPreface)
	fr := http2.NewFramer(&in, nil)
	if err := fr.WriteSettings(); err != nil {
		t.Fatal(err)
	}
	const calls = 20_000 // 100,000 bytes of DATA: past the initial window
	msg := []byte{0, 0, 0, 0, 0}
	for i := range calls {
		id := uint32(2*i + 1)
		if err := fr.WriteHeaders(http2.HeadersFrameParam{StreamID: id, EndHeaders: true, BlockFragment: []byte{0x83, 0x86}}); err != nil {
			t.Fatal(err)
		}
		if err := fr.WriteData(id, true, msg); err != nil {
			t.Fatal(err)
		}
	}

	g := &grpcNull{}
	var out []byte
	data := in.Bytes()
	for grow := 1; len(data) > 0; { // fed in uneven pieces, as reads come
		k := min(len(data), grow*(1000+len(out)%777))
		o, used, err := g.Respond(data[:k])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, o...)
		data = data[used:]
		switch {
		case used > 0:
			grow = 1
		case k == len(data):
			t.Fatalf("%d bytes left that the peer does not take", len(data))
		default:
			grow *= 2 // a frame longer than the piece: offer more
		}
	}

	rd := http2.NewFramer(io.Discard, bytes.NewReader(out))
	answers, returned := 0, 0
	for {
		f, err := rd.ReadFrame()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the peer's frames: %v", err)
		}
		switch f := f.(type) {
		case *http2.WindowUpdateFrame:
			if f.StreamID != 0 {
				t.Errorf("WINDOW_UPDATE on stream %d, want the connection's (0)", f.StreamID)
			}
			returned += int(f.Increment)
		case *http2.HeadersFrame:
			if f.StreamEnded() {
				answers++
			}
		}
	}
	sent := calls * len(msg)
	if answers != calls {
		t.Errorf("%d calls answered, want %d", answers, calls)
	}
	if returned > sent || sent-returned >= windowRefill {
		t.Errorf("the peer returned %d bytes of the window for %d sent: want all but less than %d", returned, sent, windowRefill)
	}
}
