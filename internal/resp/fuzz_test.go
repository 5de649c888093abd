package resp

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// fuzzLimits keep the fuzzer's memory small while still exercising every
// limit.
var fuzzLimits = Limits{MaxBulk: 1 << 16, MaxArray: 1 << 10, MaxDepth: 8, MaxLine: 1 << 12}

// FuzzReader feeds arbitrary bytes to the reply parser. It must never panic,
// must fail only with io.EOF, io.ErrUnexpectedEOF or ErrProtocol, must not
// consume more than it was given, and whatever it parses must survive a
// round trip through the encoder unchanged. The seed corpus is in
// testdata/fuzz/FuzzReader.
func FuzzReader(f *testing.F) {
	f.Add([]byte("*2\r\n$1\r\na\r\n$-1\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := NewReader(bytes.NewReader(data), fuzzLimits)
		var vals []val
		var err error
		for i := 0; i < 1000; i++ {
			var v val
			if v, err = readVal(rd); err != nil {
				break
			}
			vals = append(vals, v)
		}
		if err != nil && err != io.EOF && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrProtocol) {
			t.Fatalf("unexpected error type: %v", err)
		}
		if rd.Consumed() > int64(len(data)) {
			t.Fatalf("consumed %d bytes of %d", rd.Consumed(), len(data))
		}

		// Round trip: canonical encoding of what was parsed parses back to
		// the same values and nothing else.
		var enc []byte
		for _, v := range vals {
			enc = appendVal(enc, v)
		}
		rd2 := NewReader(bytes.NewReader(enc), fuzzLimits)
		for i, want := range vals {
			got, err := readVal(rd2)
			if err != nil {
				t.Fatalf("re-parse of value %d (%v): %v", i, want, err)
			}
			if !got.equal(want) {
				t.Fatalf("round trip of value %d: got %v, want %v", i, got, want)
			}
		}
		if _, err := rd2.ReadReply(); err != io.EOF {
			t.Fatalf("re-parse: trailing data: %v", err)
		}

		// Skip agrees with ReadReply on where each value ends.
		rd3 := NewReader(bytes.NewReader(data), fuzzLimits)
		for range vals {
			if err := rd3.Skip(); err != nil {
				t.Fatalf("Skip failed where ReadReply succeeded: %v", err)
			}
		}
	})
}

// FuzzReadCommand feeds arbitrary bytes to the server-side command parser.
func FuzzReadCommand(f *testing.F) {
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"))
	f.Add([]byte("PING\r\nGET a b\n"))
	f.Add([]byte("*1\r\n:1\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd := NewReader(bytes.NewReader(data), fuzzLimits)
		var args [][]byte
		var err error
		for i := 0; i < 1000 && err == nil; i++ {
			args, err = rd.ReadCommand(args)
			if err == nil {
				// Re-encode and re-read: same arguments.
				enc := AppendCommand(nil, args...)
				if len(args) == 0 {
					continue
				}
				rd2 := NewReader(bytes.NewReader(enc), fuzzLimits)
				got, err2 := rd2.ReadCommand(nil)
				if err2 != nil || len(got) != len(args) {
					t.Fatalf("re-read of %q: %q, %v", args, got, err2)
				}
				for j := range got {
					if !bytes.Equal(got[j], args[j]) {
						t.Fatalf("argument %d: got %q, want %q", j, got[j], args[j])
					}
				}
			}
		}
		if err != nil && err != io.EOF && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrProtocol) {
			t.Fatalf("unexpected error type: %v", err)
		}
		if rd.Consumed() > int64(len(data)) {
			t.Fatalf("consumed %d bytes of %d", rd.Consumed(), len(data))
		}
	})
}
