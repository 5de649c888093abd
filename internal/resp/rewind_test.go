package resp

import (
	"bytes"
	"testing"
)

// chunks returns one chunk per Read call, and counts the calls.
type chunks struct {
	parts [][]byte
	reads int
}

func (c *chunks) Read(p []byte) (int, error) {
	c.reads++
	if len(c.parts) == 0 {
		return 0, nil
	}
	n := copy(p, c.parts[0])
	if c.parts[0] = c.parts[0][n:]; len(c.parts[0]) == 0 {
		c.parts = c.parts[1:]
	}
	return n, nil
}

// TestReaderRewindsWhenEmpty checks that a reply arriving after the buffer
// was drained is read into the whole buffer in one read, not into the tail
// left by the previous reply.
func TestReaderRewindsWhenEmpty(t *testing.T) {
	value := bytes.Repeat([]byte("x"), initialBufSize*3/4)
	reply := AppendBulk(nil, value)
	src := &chunks{parts: [][]byte{reply, append([]byte(nil), reply...)}}
	rd := NewReader(src, Limits{})
	for i := 0; i < 2; i++ {
		rep, err := rd.ReadReply()
		if err != nil || rep.Kind != KindBulk || !bytes.Equal(rep.Data, value) {
			t.Fatalf("reply %d: %v %v", i, rep.Kind, err)
		}
	}
	if src.reads != 2 || len(rd.buf) != initialBufSize {
		t.Fatalf("%d reads and a %d-byte buffer for two replies of %d bytes; want 2 reads, no growth", src.reads, len(rd.buf), len(reply))
	}
}
