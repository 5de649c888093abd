package result

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"math"
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// encodeHistogram is h.Encode(hdr.V2CompressedEncodingCookieBase), byte
// for byte (TestEncodeHistogramMatchesLibrary), without what that call
// allocates each time: a zlib writer at its best compression (~800 kB:
// the deflate window and hash chains) and a slice per count written
// through encoding/binary (3,300 allocations for a latency distribution).
// Every sample's summaries encode three or four histograms.
//
// The format (HdrHistogram's V2 compressed encoding): big-endian, the
// cookie V2CompressedEncodingCookieBase|0x10 and the length of a zlib
// stream of the payload, the stream; base64 of all that. The payload: the
// cookie V2EncodingCookieBase|0x10, the length of the counts, the
// normalizing index offset (0), the significant figures, the lowest and
// highest trackable values, the conversion ratio (float64 bits), then the
// counts up to the last one that is not zero, each a ZigZag LEB128 of the
// count, a run of more than one zero written as minus its length.
func encodeHistogram(h *hdr.Histogram) (string, error) {
	snap := h.Export()
	e := encoders.Get().(*encoder)
	defer encoders.Put(e)
	limit := 1 // the library writes up to Max()'s index, counts[0] for an empty one
	for i := len(snap.Counts) - 1; i > 0; i-- {
		if snap.Counts[i] != 0 {
			limit = i + 1
			break
		}
	}
	counts := e.counts[:0]
	for i := 0; i < limit; {
		c := snap.Counts[i]
		i++
		if c == 0 {
			zeros := int64(1)
			for i < limit && snap.Counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				c = -zeros
			}
		}
		counts = appendZigZag(counts, c)
	}
	e.counts = counts
	ratio := snap.IntegerToDoubleConversionRatio
	if ratio == 0 {
		ratio = 1
	}
	p := e.payload[:0]
	p = binary.BigEndian.AppendUint32(p, uint32(hdr.V2EncodingCookieBase|0x10))
	p = binary.BigEndian.AppendUint32(p, uint32(len(counts)))
	p = binary.BigEndian.AppendUint32(p, 0)
	p = binary.BigEndian.AppendUint32(p, uint32(int32(snap.SignificantFigures)))
	p = binary.BigEndian.AppendUint64(p, uint64(snap.LowestTrackableValue))
	p = binary.BigEndian.AppendUint64(p, uint64(snap.HighestTrackableValue))
	p = binary.BigEndian.AppendUint64(p, math.Float64bits(ratio))
	p = append(p, counts...)
	e.payload = p

	var head [8]byte // the cookie, and the stream's length (set below)
	binary.BigEndian.PutUint32(head[:4], uint32(hdr.V2CompressedEncodingCookieBase|0x10))
	e.z.Reset()
	e.z.Write(head[:])
	e.w.Reset(&e.z)
	if _, err := e.w.Write(p); err != nil {
		return "", err
	}
	if err := e.w.Close(); err != nil {
		return "", err
	}
	out := e.z.Bytes()
	binary.BigEndian.PutUint32(out[4:8], uint32(len(out)-8))
	return base64.StdEncoding.EncodeToString(out), nil
}

// encoder is what encodeHistogram reuses from one call to the next.
type encoder struct {
	w               *zlib.Writer
	z               bytes.Buffer // the encoding before base64
	payload, counts []byte
}

var encoders = sync.Pool{New: func() any {
	w, err := zlib.NewWriterLevel(nil, zlib.BestCompression)
	if err != nil {
		panic(err) // BestCompression is a valid level
	}
	return &encoder{w: w}
}}

// appendZigZag appends v as HdrHistogram's ZigZag LEB128 (at most 9
// bytes: the ninth carries the top 8 bits whole).
func appendZigZag(b []byte, v int64) []byte {
	u := uint64((v << 1) ^ (v >> 63))
	for i := 0; i < 8; i++ {
		if u>>7 == 0 {
			return append(b, byte(u))
		}
		b = append(b, byte(u&0x7f|0x80))
		u >>= 7
	}
	return append(b, byte(u))
}
