package resp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"

	wire "github.com/benchrig/benchrig/internal/resp"
)

// chunkReader returns data in reads of the sizes cuts gives (cycled; a
// size 0 counts as 1).
type chunkReader struct {
	data []byte
	cuts []byte
	i    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := len(c.data)
	if len(c.cuts) > 0 {
		n = max(int(c.cuts[c.i%len(c.cuts)]), 1)
		c.i++
	}
	n = copy(p, c.data[:min(n, len(c.data))])
	c.data = c.data[n:]
	return n, nil
}

// chunks cuts data as chunkReader does.
func chunks(data, cuts []byte) [][]byte {
	var out [][]byte
	for i := 0; len(data) > 0; i++ {
		n := len(data)
		if len(cuts) > 0 {
			n = min(max(int(cuts[i%len(cuts)]), 1), len(data))
		}
		out = append(out, data[:n])
		data = data[n:]
	}
	return out
}

// fuzzLimits are small limits (sel odd), to reach them, or the defaults.
func fuzzLimits(sel uint8) wire.Limits {
	if sel%2 == 0 {
		return limitsOf(wire.Limits{})
	}
	return wire.Limits{MaxBulk: 1 + int(sel>>1)%40, MaxArray: 1 + int(sel>>3)%6, MaxDepth: 1 + int(sel>>5)%3, MaxLine: 1 + int(sel>>2)%20}
}

// errClass names an outcome of reading the stream's next reply.
func errClass(err error) string {
	switch {
	case err == nil:
		return "ok"
	case err == io.EOF:
		return "end"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "cut"
	case errors.Is(err, wire.ErrLimit):
		return "limit"
	case errors.Is(err, wire.ErrProtocol):
		return "protocol"
	}
	return "other: " + err.Error()
}

// FuzzReplyScan holds the event loop's reply parsing to wire.Reader's, the
// goroutine path's streaming reader, on the same bytes cut at arbitrary
// points: the scanner, fed the cuts one by one, finds the same replies (the
// same sizes) and then the same end (clean, cut mid-reply, over a limit,
// malformed); and each whole reply, read through replyBuf with ReadReply,
// ReadBuffered and Skip mixed as steps says, gives the same elements as
// wire.Reader's ReadReply.
func FuzzReplyScan(f *testing.F) {
	for _, s := range []string{
		"+OK\r\n", "-ERR unknown command 'FLY'\r\n", ":42\r\n", "$5\r\nhello\r\n", "$-1\r\n", "$0\r\n\r\n",
		"*3\r\n$1\r\na\r\n$-1\r\n$3\r\nabc\r\n", "*-1\r\n", "*0\r\n", "*2\r\n*1\r\n:1\r\n$2\r\nhi\r\n",
		"*2\r\n$1\r\na\r\n+x\r\n$3\r\nabc\r\n", "$99999999999\r\n", "*9999999\r\n", "$3\r\nabcd\r\n", "+no lf\r",
		"+bare\n", "%3\r\n", "HTTP/1.1 400\r\n", ":12a\r\n", "$05\r\nhello\r\n", "$-0\r\n\r\n",
	} {
		f.Add([]byte(s), []byte{1}, uint8(0), uint64(0))
		f.Add([]byte(s+s), []byte{3, 1, 7}, uint8(0xff), uint64(7))
	}
	// MaxLine 1: "-1" of a nil bulk string is over it, in an array too
	f.Add([]byte("*1\r\n$-1\r\n"), []byte{}, uint8(1), uint64(0))
	f.Fuzz(func(t *testing.T, data, cuts []byte, limSel uint8, steps uint64) {
		if len(data) > 4096 {
			return
		}
		lim := fuzzLimits(limSel)
		// wire.Reader, reply by reply
		var want []string
		rd := wire.NewReader(&chunkReader{data: data, cuts: cuts}, lim)
		for {
			start := rd.Consumed()
			err := rd.Skip()
			if err != nil {
				want = append(want, errClass(err))
				break
			}
			want = append(want, fmt.Sprint(rd.Consumed()-start))
		}
		// the scanner, fed cut by cut
		var got []string
		lim = limitsOf(lim)
		sc := scanner{lim: &lim}
		var buf []byte
		pos, end := 0, ""
		var whole [][]byte
		var firsts []wire.Reply
		var firstNs []int
	feed:
		for _, c := range chunks(data, cuts) {
			buf = append(buf, c...)
			for pos < len(buf) {
				n, err := sc.scan(buf[pos:])
				if err != nil {
					end = errClass(err)
					break feed
				}
				if n == 0 {
					break
				}
				got = append(got, fmt.Sprint(n))
				whole = append(whole, buf[pos:pos+n])
				firsts, firstNs = append(firsts, sc.first), append(firstNs, sc.firstN)
				pos += n
			}
		}
		switch {
		case end != "":
		case pos < len(buf):
			end = "cut"
		default:
			end = "end"
		}
		got = append(got, end)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("data %q cut %v: scanner %v, wire.Reader %v", data, cuts, got, want)
		}
		for i, reply := range whole {
			compareReplyBuf(t, reply, lim, steps, wire.Reply{}, 0)
			compareReplyBuf(t, reply, lim, steps, firsts[i], firstNs[i])
		}
	})
}

// compareReplyBuf reads reply, a whole reply, through replyBuf (each step's
// operation chosen by steps; its first element, of firstN bytes, given as
// the scanner parsed it, or parsed again when firstN is 0) and
// wire.Reader, and fails where they differ.
func compareReplyBuf(t *testing.T, reply []byte, lim wire.Limits, steps uint64, first wire.Reply, firstN int) {
	t.Helper()
	ref := wire.NewReader(bytes.NewReader(reply), lim)
	rb := replyBuf{lim: &lim}
	rb.reset(reply, 0, first, firstN)
	dst := make([][]byte, 4)
	same := func(what string, a, b wire.Reply) {
		if a.Kind != b.Kind || a.Nil != b.Nil || a.Int != b.Int || a.Len != b.Len || !bytes.Equal(a.Data, b.Data) || (a.Data == nil) != (b.Data == nil) {
			t.Fatalf("reply %q: %s: replyBuf %+v, wire.Reader %+v", reply, what, a, b)
		}
	}
	for first := true; first || rb.Depth() > 0; first = false {
		op := steps % 3
		steps = steps/3 + 1
		switch {
		case op == 0 && rb.Depth() > 0:
			k := rb.ReadBuffered(dst[:1+int(steps%4)])
			for j := 0; j < k; j++ {
				r, err := ref.ReadReply()
				if err != nil {
					t.Fatalf("reply %q: wire.Reader: %v", reply, err)
				}
				same("ReadBuffered", wire.Reply{Kind: wire.KindBulk, Nil: dst[j] == nil, Len: len(dst[j]), Data: dst[j]}, r)
			}
		case op == 1:
			if err, err2 := rb.Skip(), ref.Skip(); err != nil || err2 != nil {
				t.Fatalf("reply %q: Skip: replyBuf %v, wire.Reader %v", reply, err, err2)
			}
		default:
			a, err := rb.ReadReply()
			b, err2 := ref.ReadReply()
			if err != nil || err2 != nil {
				t.Fatalf("reply %q: ReadReply: replyBuf %v, wire.Reader %v", reply, err, err2)
			}
			same("ReadReply", a, b)
		}
		if rb.Depth() != ref.Depth() || int64(rb.Consumed()) != ref.Consumed() {
			t.Fatalf("reply %q: replyBuf at depth %d byte %d, wire.Reader %d, %d", reply, rb.Depth(), rb.Consumed(), ref.Depth(), ref.Consumed())
		}
	}
	if rb.Consumed() != len(reply) {
		t.Fatalf("reply %q: %d bytes of %d read", reply, rb.Consumed(), len(reply))
	}
}
