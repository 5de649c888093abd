package resp

import (
	"bytes"
	"strings"
	"testing"
	"testing/iotest"
)

// readValBuffered reads one whole reply as readVal does, but takes an
// array's elements through ReadBuffered whenever it parses any (a batch of
// at most batch elements), and through ReadReply otherwise.
func readValBuffered(rd *Reader, batch int, scratch [][]byte) (val, error) {
	rep, err := rd.ReadReply()
	if err != nil {
		return val{}, err
	}
	v := val{kind: rep.Kind, isNil: rep.Nil, i: rep.Int, s: string(rep.Data)}
	if rep.Kind != KindArray || rep.Nil {
		return v, nil
	}
	v.elems = make([]val, 0)
	for len(v.elems) < rep.Len {
		k := rd.ReadBuffered(scratch[:min(batch, rep.Len-len(v.elems))])
		for _, b := range scratch[:k] {
			v.elems = append(v.elems, val{kind: KindBulk, isNil: b == nil, s: string(b)})
		}
		if k > 0 {
			continue
		}
		e, err := readValBuffered(rd, batch, scratch)
		if err != nil {
			return val{}, err
		}
		v.elems = append(v.elems, e)
	}
	return v, nil
}

// FuzzReadBuffered checks that the buffered pass parses exactly what
// ReadReply does: the same values (nil and empty told apart), the same
// bytes consumed, the same errors, whether the input arrives whole or a
// byte per read (when the pass mostly finds nothing buffered).
func FuzzReadBuffered(f *testing.F) {
	f.Add([]byte("*3\r\n$3\r\nabc\r\n$-1\r\n$0\r\n\r\n"), uint8(2))
	f.Add([]byte("*4\r\n$1\r\na\r\n*1\r\n$1\r\nb\r\n:5\r\n$-1\r\n*0\r\n"), uint8(64))
	f.Add([]byte("*2\r\n$5\r\nab\r\n$1\r\nc\r\n"), uint8(1))
	f.Add([]byte("*2\r\n$-01\r\n$007\r\nabcdefg\r\n"), uint8(3))
	f.Add([]byte("*2\r\n$99999999999\r\n"), uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, batch uint8) {
		b := int(batch%70) + 1
		scratch := make([][]byte, b)
		for _, chunked := range []bool{false, true} {
			var src, src2 = bytes.NewReader(data), bytes.NewReader(data)
			plain := NewReader(src, fuzzLimits)
			fast := NewReader(src2, fuzzLimits)
			if chunked {
				fast = NewReader(iotest.OneByteReader(src2), fuzzLimits)
			}
			for i := 0; i < 1000; i++ {
				a, errA := readVal(plain)
				c, errC := readValBuffered(fast, b, scratch)
				if errClass(errA) != errClass(errC) {
					t.Fatalf("chunked %v, value %d: ReadReply fails with %v, ReadBuffered with %v", chunked, i, errA, errC)
				}
				if errA != nil {
					break
				}
				if !a.equal(c) || plain.Consumed() != fast.Consumed() || plain.Depth() != fast.Depth() {
					t.Fatalf("chunked %v, value %d: %v (%d bytes) and %v (%d bytes)", chunked, i, a, plain.Consumed(), c, fast.Consumed())
				}
			}
		}
	})
}

// TestReadBufferedStops checks where the buffered pass stops and that it
// leaves the rest to ReadReply.
func TestReadBufferedStops(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		batch      int
		want       []string // the values parsed, "<nil>" for a nil bulk
	}{
		{"outside an array", "$3\r\nabc\r\n", 4, nil},
		{"whole array", "*3\r\n$3\r\nabc\r\n$-1\r\n$0\r\n\r\n", 8, []string{"abc", "<nil>", ""}},
		{"batch bound", "*3\r\n$1\r\na\r\n$1\r\nb\r\n$1\r\nc\r\n", 2, []string{"a", "b"}},
		{"array end", "*1\r\n$1\r\na\r\n$1\r\nb\r\n", 4, []string{"a"}},
		{"other kind", "*3\r\n$1\r\na\r\n:1\r\n$1\r\nb\r\n", 4, []string{"a"}},
		{"not yet buffered", "*2\r\n$1\r\na\r\n$5\r\nab", 4, []string{"a"}},
		{"over MaxBulk", "*2\r\n$1\r\na\r\n$100\r\n", 4, []string{"a"}},
		{"bad terminator", "*2\r\n$1\r\na\r\n$1\r\nbXY", 4, []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rd := NewReader(strings.NewReader(tc.data), Limits{MaxBulk: 10})
			if _, err := rd.ReadReply(); err != nil {
				t.Fatal(err)
			}
			dst := make([][]byte, tc.batch)
			before := rd.Consumed()
			k := rd.ReadBuffered(dst)
			var got []string
			size := 0
			for _, v := range dst[:k] {
				if v == nil {
					got = append(got, "<nil>")
					size += len("$-1\r\n")
					continue
				}
				got = append(got, string(v))
				size += len(AppendBulk(nil, v))
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") || len(got) != len(tc.want) {
				t.Fatalf("parsed %q, want %q", got, tc.want)
			}
			if rd.Consumed()-before != int64(size) {
				t.Fatalf("consumed %d bytes for %q", rd.Consumed()-before, got)
			}
		})
	}
}

// TestSkipElements checks that SkipElements consumes elements the caller
// vouches for, keeps the array accounting of ReadReply, and refuses (taking
// nothing) what the array or the buffer cannot hold.
func TestSkipElements(t *testing.T) {
	data := "*3\r\n$1\r\na\r\n$-1\r\n$2\r\nbc\r\n+OK\r\n"
	two := len("$1\r\na\r\n$-1\r\n")
	rd := NewReader(strings.NewReader(data), Limits{})
	if rd.SkipElements(5, 1) {
		t.Fatal("skipped outside an array")
	}
	if _, err := rd.ReadReply(); err != nil {
		t.Fatal(err)
	}
	if got := string(rd.Peek()); got != data[4:] {
		t.Fatalf("Peek %q, want %q", got, data[4:])
	}
	for _, bad := range [][2]int{{two, 0}, {two, 4}, {len(data), 3}, {2, 1}} {
		if rd.SkipElements(bad[0], bad[1]) {
			t.Fatalf("skipped %d bytes as %d elements", bad[0], bad[1])
		}
	}
	if !rd.SkipElements(two, 2) || rd.Consumed() != int64(4+two) || rd.Depth() != 1 {
		t.Fatalf("skip of 2 elements: consumed %d, depth %d", rd.Consumed(), rd.Depth())
	}
	if rep, err := rd.ReadReply(); err != nil || string(rep.Data) != "bc" || rd.Depth() != 0 {
		t.Fatalf("third element %q %v, depth %d", rep.Data, err, rd.Depth())
	}
	if rep, err := rd.ReadReply(); err != nil || rep.Kind != KindSimple || string(rep.Data) != "OK" {
		t.Fatalf("next reply %v %q %v", rep.Kind, rep.Data, err)
	}
}
