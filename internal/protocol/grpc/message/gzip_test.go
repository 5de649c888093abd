package message

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// payload makes n bytes of a message: half text that compresses, half
// random bytes that do not.
func payload(n int) []byte {
	rng := rand.New(rand.NewPCG(uint64(n), 1))
	b := make([]byte, n)
	for i := range b {
		if i < n/2 {
			b[i] = "hello gRPC "[i%11]
		} else {
			b[i] = byte(rng.Uint32())
		}
	}
	return b
}

// stdGunzip decompresses with compress/gzip directly.
func stdGunzip(t testing.TB, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// stdGzip compresses with compress/gzip directly.
func stdGzip(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestGzipRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 100, 100_000} {
		msg := payload(n)
		framedMsg := append([]byte{0, 0, 0, 0, 0}, msg...)
		binary.BigEndian.PutUint32(framedMsg[1:], uint32(n))
		for _, framed := range []bool{false, true} {
			in := msg
			if framed {
				in = framedMsg
			}
			head := []byte("kept")
			out := Gzip(head, in, framed)
			if string(out[:4]) != "kept" {
				t.Fatalf("n=%d framed=%v: dst's bytes not kept: %q", n, framed, out[:4])
			}
			m := out[4:]
			var seen int
			err := Split(m, 0, func(compressed bool, body []byte) error {
				seen++
				if !compressed {
					t.Errorf("n=%d framed=%v: the flag says uncompressed", n, framed)
				}
				if got := stdGunzip(t, body); !bytes.Equal(got, msg) {
					t.Errorf("n=%d framed=%v: compress/gzip reads %d bytes, want the %d of the message", n, framed, len(got), n)
				}
				got, err := Gunzip([]byte("x"), body, n+1)
				if err != nil {
					t.Fatal(err)
				}
				if got[0] != 'x' || !bytes.Equal(got[1:], msg) {
					t.Errorf("n=%d framed=%v: Gunzip gives %d bytes, want x and the %d of the message", n, framed, len(got), n)
				}
				return nil
			})
			if err != nil || seen != 1 {
				t.Errorf("n=%d framed=%v: Split: %v, %d messages", n, framed, err, seen)
			}
		}
		// What compress/gzip makes, Gunzip reads.
		got, err := Gunzip(nil, stdGzip(t, msg), n)
		if err != nil || !bytes.Equal(got, msg) {
			t.Errorf("n=%d: Gunzip of compress/gzip's: %d bytes, %v", n, len(got), err)
		}
	}
}

func TestGzipFramedTooShort(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "shorter than the 5-byte prefix") {
			t.Errorf("recovered %v, want a panic about the prefix", r)
		}
	}()
	Gzip(nil, []byte{0, 0}, true)
}

func TestGunzipBound(t *testing.T) {
	msg := payload(100_000)
	z := stdGzip(t, msg)
	if got, err := Gunzip(nil, z, len(msg)); err != nil || !bytes.Equal(got, msg) {
		t.Errorf("max = the size: %d bytes, %v", len(got), err)
	}
	dst := []byte("before")
	got, err := Gunzip(dst, z, len(msg)-1)
	if err == nil || err.Error() != "compressed message decompresses past 99999 bytes" {
		t.Errorf("max = the size - 1: error %v", err)
	}
	if string(got) != "before" {
		t.Errorf("on error, dst = %q, want it as given", got)
	}

	if got, err := Gunzip(nil, stdGzip(t, []byte("abc")), math.MaxInt); err != nil || string(got) != "abc" {
		t.Errorf("max = math.MaxInt: %q, %v", got, err)
	}

	// A bomb: 1 GiB of zeros in 1024 gzip members of 1 MiB each (about
	// 1 MiB in all, one message: the members are read as one), refused at
	// MaxMessage (max 0) without decompressing it all.
	member := stdGzip(t, make([]byte, 1<<20))
	bomb := bytes.Repeat(member, 1<<10)
	_, err = Gunzip(nil, bomb, 0)
	if want := "compressed message decompresses past 4194304 bytes"; err == nil || err.Error() != want {
		t.Errorf("bomb: error %v, want %q", err, want)
	}
	// One member of 8 MiB of zeros, at a bound of 1 MiB.
	_, err = Gunzip(nil, stdGzip(t, make([]byte, 8<<20)), 1<<20)
	if want := "compressed message decompresses past 1048576 bytes"; err == nil || err.Error() != want {
		t.Errorf("one member: error %v, want %q", err, want)
	}
}

func TestGunzipCorrupt(t *testing.T) {
	good := stdGzip(t, payload(1000))
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0xff
	badCRC := bytes.Clone(good)
	badCRC[len(badCRC)-6] ^= 1 // in the CRC-32 of the trailer
	for name, b := range map[string][]byte{
		"empty":            nil,
		"not gzip":         []byte("plain protobuf bytes"),
		"header only":      good[:10],
		"cut short":        good[:len(good)-1],
		"flipped":          flipped,
		"bad checksum":     badCRC,
		"trailing garbage": append(bytes.Clone(good), "junk"...),
	} {
		got, err := Gunzip([]byte("d"), b, 0)
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !strings.HasPrefix(err.Error(), "compressed message") || string(got) != "d" {
			t.Errorf("%s: %q, %v", name, got, err)
		}
	}
	// Two gzip members are one message, as grpc-go reads them.
	two := append(stdGzip(t, []byte("ab")), stdGzip(t, []byte("cd"))...)
	if got, err := Gunzip(nil, two, 0); err != nil || string(got) != "abcd" {
		t.Errorf("two members: %q, %v", got, err)
	}
}

// TestGzipAllocs holds the steady state of the pooled writers and readers
// once dst has room. Measured: Gzip makes 0 allocations a call; Gunzip 0 for
// a message whose Huffman codes are at most 9 bits long (text), and for one
// with longer codes (random bytes) those compress/flate's Huffman decoder
// makes for its tables of long codes (huffmanDecoder.init: 8 for 4 kB, half
// random), none of Gunzip's own.
func TestGzipAllocs(t *testing.T) {
	if testing.CoverMode() != "" || raceEnabled {
		t.Skip("allocations are not measured under -cover or -race (sync.Pool drops items at random under -race)")
	}
	msg := payload(4096)
	framed := append([]byte{0, 0, 0, 16, 0}, msg...)
	dst := make([]byte, 0, 2*len(framed))
	if n := testing.AllocsPerRun(100, func() {
		dst = Gzip(dst[:0], framed, true)
	}); n != 0 {
		t.Errorf("Gzip: %v allocations a call, want 0", n)
	}
	text := bytes.Repeat([]byte("hello gRPC, hello benchrig "), 150)
	for _, c := range []struct {
		what string
		msg  []byte
		max  float64
	}{{"text", text, 0}, {"half random", msg, 16}} {
		z := Gzip(nil, c.msg, false)[PrefixLen:]
		out := make([]byte, 0, len(c.msg))
		n := testing.AllocsPerRun(100, func() {
			var err error
			if out, err = Gunzip(out[:0], z, 0); err != nil {
				panic(err)
			}
		})
		t.Logf("Gunzip of %d bytes of %s: %v allocations a call", len(c.msg), c.what, n)
		if n > c.max {
			t.Errorf("Gunzip of %s: %v allocations a call, want at most %v", c.what, n, c.max)
		}
	}
}

func BenchmarkGzip(b *testing.B) {
	framed := append([]byte{0, 0, 0, 16, 0}, payload(4096)...)
	dst := make([]byte, 0, 2*len(framed))
	b.ReportAllocs()
	for b.Loop() {
		dst = Gzip(dst[:0], framed, true)
	}
}

func BenchmarkGunzip(b *testing.B) {
	msg := payload(4096)
	z := Gzip(nil, msg, false)[PrefixLen:]
	out := make([]byte, 0, len(msg))
	b.ReportAllocs()
	for b.Loop() {
		out, _ = Gunzip(out[:0], z, 0)
	}
}

func FuzzGunzip(f *testing.F) {
	f.Add([]byte{}, 10)
	f.Add([]byte("not gzip at all"), 100)
	for _, n := range []int{0, 1, 100, 3000} {
		z := Gzip(nil, payload(n), false)[PrefixLen:]
		f.Add(z, n)
		f.Add(z, n/2)
		f.Add(z[:len(z)/2], n)
	}
	f.Fuzz(func(t *testing.T, data []byte, max int) {
		if max < 0 {
			max = -max
		}
		max = max%(1<<20) + 1
		got, err := Gunzip([]byte("d"), data, max)
		if err != nil {
			if string(got) != "d" {
				t.Fatalf("error %v, and dst = %q, want it as given", err, got)
			}
		} else if len(got)-1 > max {
			t.Fatalf("%d bytes, over max %d", len(got)-1, max)
		}
		// compress/gzip, read to one byte past the bound, agrees.
		zr, zerr := gzip.NewReader(bytes.NewReader(data))
		var want []byte
		if zerr == nil {
			want, zerr = io.ReadAll(io.LimitReader(zr, int64(max)+1))
			if zerr == nil && len(want) > max {
				zerr = errors.New("past max")
			}
		}
		if (err == nil) != (zerr == nil) {
			t.Fatalf("Gunzip: %v; compress/gzip: %v", err, zerr)
		}
		if err == nil && !bytes.Equal(got[1:], want) {
			t.Fatalf("Gunzip gives %d bytes, compress/gzip %d", len(got)-1, len(want))
		}
	})
}
