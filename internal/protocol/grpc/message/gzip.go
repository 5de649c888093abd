package message

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
)

// gzipWriter is a pooled gzip writer and the buffer it writes into: the
// caller's dst, appended to.
type gzipWriter struct {
	zw  *gzip.Writer
	out appender
}

// appender is an io.Writer that appends to b.
type appender struct{ b []byte }

func (a *appender) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

var gzipWriters = sync.Pool{New: func() any {
	w := new(gzipWriter)
	// The default level, as grpc-go's gzip compressor has.
	w.zw = gzip.NewWriter(&w.out)
	return w
}}

// Gzip compresses a gRPC message: it appends to dst the 5-byte prefix with
// the compressed flag 1 and the gzip of msg, the bytes after msg's own
// 5-byte prefix when framed is true (a framed msg shorter than the prefix
// panics). The level is gzip's default, grpc-go's.
//
// The writers are pooled: once dst has room for the result, a call makes no
// allocation in the steady state (testing.AllocsPerRun measures 0;
// TestGzipAllocs holds it).
func Gzip(dst, msg []byte, framed bool) []byte {
	if framed {
		if len(msg) < PrefixLen {
			panic(fmt.Sprintf("message.Gzip: a framed message of %d bytes, shorter than the %d-byte prefix", len(msg), PrefixLen))
		}
		msg = msg[PrefixLen:]
	}
	start := len(dst)
	dst = append(dst, 1, 0, 0, 0, 0)
	w := gzipWriters.Get().(*gzipWriter)
	w.out.b = dst
	w.zw.Reset(&w.out)
	// Writes to an appender do not fail, so neither do Write and Close.
	_, _ = w.zw.Write(msg)
	_ = w.zw.Close()
	dst = w.out.b
	w.out.b = nil // the pool keeps no hold on the caller's memory
	gzipWriters.Put(w)
	binary.BigEndian.PutUint32(dst[start+1:start+PrefixLen], uint32(len(dst)-start-PrefixLen))
	return dst
}

// gzipReader is a pooled gzip reader and the reader of its input.
type gzipReader struct {
	zr gzip.Reader
	in bytes.Reader
}

var gzipReaders = sync.Pool{New: func() any { return new(gzipReader) }}

// minGrow is the least a Gunzip grows dst by when it runs out of room.
const minGrow = 512

// Gunzip decompresses a message whose prefix said compressed (compressed
// is the bytes after the prefix), appending the protobuf bytes to dst. More
// than max decompressed bytes (MaxMessage when max ≤ 0) is an error
// ("compressed message decompresses past N bytes"), found without
// decompressing further, as is a stream that is not gzip or is cut short or
// corrupt; dst is then returned as it was given. Concatenated gzip members
// are read as one message, as grpc-go reads them.
//
// The readers are pooled: once dst has room, a call makes no allocation of
// its own in the steady state; compress/flate allocates the tables of
// Huffman codes longer than 9 bits (testing.AllocsPerRun measures 0 for 4 kB
// of text, 8 for 4 kB half random; TestGzipAllocs holds both).
func Gunzip(dst, compressed []byte, max int) ([]byte, error) {
	if max <= 0 {
		max = MaxMessage
	}
	max = min(max, math.MaxInt-1) // max+1, one byte past it, is counted to
	r := gzipReaders.Get().(*gzipReader)
	defer func() {
		r.in.Reset(nil)
		gzipReaders.Put(r)
	}()
	r.in.Reset(compressed)
	if err := r.zr.Reset(&r.in); err != nil {
		if err == io.EOF {
			return dst, fmt.Errorf("compressed message: empty, want a gzip stream")
		}
		return dst, fmt.Errorf("compressed message: %v", err)
	}
	start := len(dst)
	for {
		if len(dst) == cap(dst) {
			// Room for as much again as dst holds of the message, at least
			// minGrow bytes, at most one byte past the bound.
			grow := len(dst) - start
			if grow < minGrow {
				grow = minGrow
			}
			if left := max + 1 - (len(dst) - start); grow > left {
				grow = left
			}
			dst = slices.Grow(dst, grow)
		}
		room := dst[len(dst):cap(dst)]
		if left := max + 1 - (len(dst) - start); len(room) > left {
			room = room[:left] // one byte past the bound tells a bomb
		}
		n, err := r.zr.Read(room)
		dst = dst[:len(dst)+n]
		if len(dst)-start > max {
			return dst[:start], fmt.Errorf("compressed message decompresses past %d bytes", max)
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst[:start], fmt.Errorf("compressed message: %v", err)
		}
	}
}
