package http

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/http2/hpack"
)

// refStatus is x/net's decoder as the loop used it: emitting the first
// field of a block only, keeping it as :status when so named.
type refStatus struct {
	dec    *hpack.Decoder
	status string
}

func newRefStatus(maxStr int) *refStatus {
	r := &refStatus{}
	r.dec = hpack.NewDecoder(4096, func(f hpack.HeaderField) {
		if f.Name == ":status" {
			r.status = f.Value
		}
		r.dec.SetEmitEnabled(false)
	})
	r.dec.SetMaxStringLength(maxStr)
	return r
}

func (r *refStatus) block(b []byte) (string, error) {
	r.status = ""
	r.dec.SetEmitEnabled(true)
	if _, err := r.dec.Write(b); err != nil {
		return "", err
	}
	return r.status, r.dec.Close()
}

// decodeBoth runs blocks through statusDecoder and x/net's decoder, one
// connection each, and fails at the first block where they differ: one
// refuses what the other accepts, or the two read another :status.
func decodeBoth(t *testing.T, maxStr int, blocks [][]byte) {
	t.Helper()
	ref := newRefStatus(maxStr)
	var got string
	d := newStatusDecoder(4096, maxStr, &got)
	for i, b := range blocks {
		want, werr := ref.block(b)
		got = ""
		d.SetEmitEnabled(true)
		_, _ = d.Write(b)
		gerr := d.Close()
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("block %d %x: x/net says %v, statusDecoder says %v", i, b, werr, gerr)
		}
		if werr != nil {
			return // the connection fails there
		}
		if got != want {
			t.Fatalf("block %d %x: :status %q, x/net read %q", i, b, got, want)
		}
	}
}

// responses encodes n responses with x/net's encoder (which indexes every
// field and refers to the table), in table-churning variety: statuses
// static and not, dates, sizes, a table size update halfway.
func responses(n int) [][]byte {
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	var out [][]byte
	for i := range n {
		buf.Reset()
		if i == n/2 {
			enc.SetMaxDynamicTableSize(1024)
		}
		status := []int{200, 201, 204, 404, 503, 299, 200}[i%7]
		_ = enc.WriteField(hpack.HeaderField{Name: ":status", Value: strconv.Itoa(status)})
		_ = enc.WriteField(hpack.HeaderField{Name: "date", Value: fmt.Sprintf("Sun, 06 Dec 2026 05:%02d:%02d GMT", i/60%60, i%60)})
		_ = enc.WriteField(hpack.HeaderField{Name: "content-length", Value: strconv.Itoa(i * 37 % 5000)})
		_ = enc.WriteField(hpack.HeaderField{Name: "x-request", Value: fmt.Sprintf("%x", i*7919), Sensitive: i%5 == 0})
		out = append(out, append([]byte(nil), buf.Bytes()...))
	}
	return out
}

// nginxLike is a response as nginx writes it: :status indexed, and every
// other field a literal with incremental indexing of an indexed name,
// Huffman-coded, on every response (nginx never refers to its table).
func nginxLike(status string, i int) []byte {
	b := []byte{0x88} // :status 200
	if status != "200" {
		b = append(b[:0], 0x48) // literal, incremental indexing, name :status (8)
		b = appendHpackString(b, status, false)
	}
	for _, f := range []struct {
		idx   byte
		value string
	}{{54, "nginx/1.22.1"}, {33, fmt.Sprintf("Sun, 06 Dec 2026 05:53:%02d GMT", i%60)}, {31, "text/html"},
		{28, "615"}, {44, "Sat, 05 Dec 2026 10:00:00 GMT"}, {34, `"6932a1c0-267"`}, {18, "bytes"}} {
		b = append(b, 0x40|f.idx)
		b = appendHpackString(b, f.value, true)
	}
	return b
}

func appendHpackString(b []byte, s string, huff bool) []byte {
	if !huff {
		return append(append(b, byte(len(s))), s...)
	}
	h := hpack.AppendHuffmanString(nil, s)
	return append(append(b, 0x80|byte(len(h))), h...)
}

func TestStatusDecoderAgreesWithXNet(t *testing.T) {
	decodeBoth(t, maxHeaderBytes, responses(2000))
	var nginx [][]byte
	for i := range 300 {
		st := "200"
		if i%11 == 3 {
			st = "404"
		}
		nginx = append(nginx, nginxLike(st, i))
	}
	decodeBoth(t, maxHeaderBytes, nginx)
	// and the :status values read are the ones written
	var got string
	d := newStatusDecoder(4096, maxHeaderBytes, &got)
	for i, b := range responses(50) {
		_, _ = d.Write(b[:len(b)/2]) // in two fragments
		_, _ = d.Write(b[len(b)/2:])
		if err := d.Close(); err != nil {
			t.Fatalf("block %d: %v", i, err)
		}
		if want := strconv.Itoa([]int{200, 201, 204, 404, 503, 299, 200}[i%7]); got != want {
			t.Fatalf("block %d: :status %q, want %q", i, got, want)
		}
	}
}

// Malformed blocks are refused as x/net refuses them, with a message.
func TestStatusDecoderRefuses(t *testing.T) {
	for _, tc := range []struct {
		name  string
		block []byte
	}{
		{"index 0", []byte{0x80}},
		{"index past the tables", []byte{0xbe}},
		{"truncated integer", []byte{0xff}},
		{"integer overflow", append([]byte{0xff}, bytes.Repeat([]byte{0xff}, 10)...)},
		{"truncated string", []byte{0x40, 0x05, 'a'}},
		{"size update too large", []byte{0x3f, 0xe2, 0x1f}},
		{"size update after a field", []byte{0x88, 0x40, 0x01, 'a', 0x01, 'b', 0x20}},
		{"bad Huffman padding", []byte{0x40, 0x81, 0x00, 0x01, 'b'}},
		{"string over the bound", append([]byte{0x40, 0x7f, 0x80, 0x01}, bytes.Repeat([]byte{'a'}, 300)...)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			d := newStatusDecoder(4096, 128, &got)
			_, _ = d.Write(tc.block)
			err := d.Close()
			if err == nil || err.Error() == "" {
				t.Fatalf("%x: accepted", tc.block)
			}
			if _, werr := newRefStatus(128).block(tc.block); werr == nil {
				t.Fatalf("%x: x/net accepts what statusDecoder refuses (%v)", tc.block, err)
			}
		})
	}
}

// Decoding nginx's responses allocates nothing once the table is warm.
func TestStatusDecoderNoAllocs(t *testing.T) {
	var got string
	d := newStatusDecoder(4096, maxHeaderBytes, &got)
	blocks := [][]byte{nginxLike("200", 1), nginxLike("200", 2), nginxLike("200", 3)}
	i := 0
	if a := testing.AllocsPerRun(1000, func() {
		_, _ = d.Write(blocks[i%3])
		_ = d.Close()
		i++
	}); a != 0 || got != "200" {
		t.Fatalf("%.1f allocations per block (status %q), want 0", a, got)
	}
}

// TestStatusDecoderLengthCaches: the decoded length of a value comes out
// the same from the last-value cache, the map and a fresh decoding,
// whatever the order: a name's value repeated, changed and changed back,
// two names taking turns, one value under two names, a dynamic or new
// name (no last-value slot), values too long to cache, plain values.
func TestStatusDecoderLengthCaches(t *testing.T) {
	var got string
	d := newStatusDecoder(4096, maxHeaderBytes, &got)
	huff := func(v string) []byte { return hpack.AppendHuffmanString(nil, v) }
	long := strings.Repeat("Sun, 06 Dec 2026 05:53:07 GMT ", 4)
	steps := []struct {
		idx   uint64
		value string
		huff  bool
	}{
		{33, "Sun, 06 Dec 2026 05:53:07 GMT", true}, {33, "Sun, 06 Dec 2026 05:53:07 GMT", true},
		{33, "Sun, 06 Dec 2026 05:53:08 GMT", true}, {33, "Sun, 06 Dec 2026 05:53:07 GMT", true},
		{28, "615", true}, {33, "615", true}, {28, "61", true}, {28, "615", true},
		{54, "nginx/1.22.1", true}, {0, "nginx/1.22.1", true}, {62, "x", true}, {62, "xy", true},
		{44, long, true}, {44, long, true}, {44, "", true}, {44, "bytes", false}, {44, "bytes", true},
	}
	for i, st := range steps {
		s := []byte(st.value)
		if st.huff {
			s = huff(st.value)
		}
		n, err := d.decodedLen(st.idx, s, st.huff)
		if err != nil || n != len(st.value) {
			t.Fatalf("step %d (name %d, %q, Huffman %v): length %d, %v; want %d", i, st.idx, st.value, st.huff, n, err, len(st.value))
		}
	}
	for _, c := range []struct {
		idx   uint64
		value string
	}{{33, "615"}, {28, "615"}, {54, "nginx/1.22.1"}} {
		if b := d.last[c.idx].b; string(b) != string(huff(c.value)) {
			t.Errorf("name %d's last value: %x, want %q's Huffman bytes", c.idx, b, c.value)
		}
	}
}

// FuzzStatusDecoder: any sequence of blocks on one connection (a length
// byte before each) is accepted or refused by statusDecoder as by x/net's
// decoder, with the same :status.
func FuzzStatusDecoder(f *testing.F) {
	for _, bs := range [][][]byte{responses(12), {nginxLike("200", 1), nginxLike("503", 2), nginxLike("200", 3)}} {
		var in []byte
		for _, b := range bs {
			if len(b) < 256 {
				in = append(append(in, byte(len(b))), b...)
			}
		}
		f.Add(in)
	}
	f.Add([]byte{3, 0x3f, 0xe1, 0x1f})
	f.Fuzz(func(t *testing.T, in []byte) {
		var blocks [][]byte
		for len(in) > 0 {
			n := min(int(in[0]), len(in)-1)
			blocks = append(blocks, in[1:1+n])
			in = in[1+n:]
		}
		decodeBoth(t, 64, blocks)
	})
}

// BenchmarkStatusDecoder: one nginx response's header block decoded for its
// :status, by x/net's decoder as the loop used it and by statusDecoder.
//
//	go test -bench StatusDecoder -run '^$' ./internal/protocol/http/driver/
func BenchmarkStatusDecoder(b *testing.B) {
	blocks := [][]byte{nginxLike("200", 1), nginxLike("200", 2), nginxLike("404", 3)}
	b.Run("x-net", func(b *testing.B) {
		r := newRefStatus(maxHeaderBytes)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := r.block(blocks[i%3]); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("statusDecoder", func(b *testing.B) {
		var got string
		d := newStatusDecoder(4096, maxHeaderBytes, &got)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			_, _ = d.Write(blocks[i%3])
			if err := d.Close(); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
