package resp

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

// errClass names the kind of a parse error for comparison.
func errClass(err error) string {
	switch {
	case err == nil:
		return "nil"
	case err == io.EOF:
		return "EOF"
	case errors.Is(err, ErrLimit):
		return "limit"
	case errors.Is(err, ErrProtocol):
		return "protocol"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "unexpected EOF"
	}
	return "other: " + err.Error()
}

// FuzzReaderChunking parses the same bytes delivered whole and one byte per
// read: the first mostly takes the buffered fast paths, the second the
// general ones. Both must yield the same values, consume the same bytes and
// fail the same way.
func FuzzReaderChunking(f *testing.F) {
	f.Add([]byte("*3\r\n$3\r\nabc\r\n$-1\r\n$0\r\n\r\n"))
	f.Add([]byte("$5\r\nab\r\n"))
	f.Add([]byte("$007\r\nabcdefg\r\n$99999999999\r\n"))
	f.Add([]byte("$4\r\nabcdXY"))
	f.Fuzz(func(t *testing.T, data []byte) {
		whole := NewReader(bytes.NewReader(data), fuzzLimits)
		bytewise := NewReader(iotest.OneByteReader(bytes.NewReader(data)), fuzzLimits)
		for i := 0; i < 1000; i++ {
			a, errA := readVal(whole)
			b, errB := readVal(bytewise)
			if errClass(errA) != errClass(errB) {
				t.Fatalf("value %d: whole read fails with %v, byte-wise with %v", i, errA, errB)
			}
			if errA != nil {
				break
			}
			if !a.equal(b) {
				t.Fatalf("value %d: whole %v, byte-wise %v", i, a, b)
			}
			if whole.Consumed() != bytewise.Consumed() {
				t.Fatalf("value %d: consumed %d and %d bytes", i, whole.Consumed(), bytewise.Consumed())
			}
		}
	})
}

// TestBulkFastPathLimits checks that the fast path leaves over-limit and
// malformed headers to the general path's errors.
func TestBulkFastPathLimits(t *testing.T) {
	for _, tc := range []struct {
		in   string
		lim  Limits
		want string
	}{
		{"$5\r\nhello\r\n", Limits{MaxBulk: 4}, "limit"},
		{"$5\r\nhello\r\n", Limits{MaxLine: 0}, "nil"},
		{"$12345\r\n", Limits{MaxLine: 4}, "limit"},
		{"$5\r\nhelloXY", Limits{}, "protocol"},
		{"$-1\r\n", Limits{}, "nil"},
		{"$5x\r\nhello\r\n", Limits{}, "protocol"},
	} {
		_, err := NewReader(bytes.NewReader([]byte(tc.in)), tc.lim).ReadReply()
		if got := errClass(err); got != tc.want {
			t.Errorf("%q with %+v: %v (%s), want %s", tc.in, tc.lim, err, got, tc.want)
		}
	}
}
