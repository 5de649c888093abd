package resp

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"testing"
)

// memServer is an in-memory RESP server for allocation tests and benchmarks:
// Write parses the commands written to it with the server-side codec and
// queues the MGET/GET replies that Read then returns. It allocates nothing in
// steady state, so the allocations measured are the client's.
type memServer struct {
	toServer bytes.Buffer
	toClient bytes.Buffer
	srv      *Reader
	args     [][]byte
	out      []byte
	data     map[string][]byte
}

func newMemServer(keys int) *memServer {
	m := &memServer{data: make(map[string][]byte, keys)}
	m.srv = NewReader(&m.toServer, Limits{})
	for i := 1; i <= keys; i++ {
		if i%8 == 0 {
			continue // every 8th key is missing: nil replies
		}
		m.data["item:"+strconv.Itoa(i)] = []byte(fmt.Sprintf(`{"id":%d,"name":"item %d","price":%d}`, i, i, i*100))
	}
	return m
}

func (m *memServer) Write(p []byte) (int, error) {
	m.toServer.Write(p)
	for m.toServer.Len() > 0 || m.srv.Buffered() > 0 {
		var err error
		m.args, err = m.srv.ReadCommand(m.args)
		if err != nil {
			return 0, err
		}
		switch string(m.args[0]) {
		case "MGET":
			m.out = AppendArrayHeader(m.out, len(m.args)-1)
			for _, k := range m.args[1:] {
				m.out = m.appendValue(m.out, k)
			}
		case "GET":
			m.out = m.appendValue(m.out, m.args[1])
		default:
			m.out = AppendError(m.out, "ERR unknown command")
		}
	}
	m.toClient.Write(m.out)
	m.out = m.out[:0]
	return len(p), nil
}

func (m *memServer) appendValue(out, key []byte) []byte {
	if v, ok := m.data[string(key)]; ok {
		return AppendBulk(out, v)
	}
	return AppendNilBulk(out)
}

func (m *memServer) Read(p []byte) (int, error) { return m.toClient.Read(p) }

// mgetClient is the client half of the round trip, as a driver would write
// it: keys built into a scratch buffer, the command into a reused buffer.
type mgetClient struct {
	conn    io.ReadWriter
	rd      *Reader
	cmd     []byte
	key     []byte
	keys    int
	hits    int
	nils    int
	replyed int64
}

func (c *mgetClient) roundTrip(seq int64) error {
	c.cmd = AppendArrayHeader(c.cmd[:0], c.keys+1)
	c.cmd = AppendBulkString(c.cmd, "MGET")
	for i := 0; i < c.keys; i++ {
		c.key = append(c.key[:0], "item:"...)
		c.key = strconv.AppendInt(c.key, (seq*int64(c.keys)+int64(i))%128+1, 10)
		c.cmd = AppendBulk(c.cmd, c.key)
	}
	if _, err := c.conn.Write(c.cmd); err != nil {
		return err
	}
	start := c.rd.Consumed()
	hdr, err := c.rd.ReadReply()
	if err != nil {
		return err
	}
	if hdr.Kind != KindArray || hdr.Len != c.keys {
		return fmt.Errorf("got %v of %d, want array of %d", hdr.Kind, hdr.Len, c.keys)
	}
	for i := 0; i < hdr.Len; i++ {
		v, err := c.rd.ReadReply()
		if err != nil {
			return err
		}
		if v.Nil {
			c.nils++
		} else {
			c.hits++
		}
	}
	c.replyed += c.rd.Consumed() - start
	return nil
}

func newMGETClient(keys int) *mgetClient {
	srv := newMemServer(128)
	return &mgetClient{conn: srv, rd: NewReader(srv, Limits{}), keys: keys}
}

func TestMGET64ZeroAlloc(t *testing.T) {
	c := newMGETClient(64)
	seq := int64(0)
	for ; seq < 10; seq++ { // warm up: buffers reach their size
		if err := c.roundTrip(seq); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	allocs := testing.AllocsPerRun(1000, func() {
		if e := c.roundTrip(seq); e != nil {
			err = e
		}
		seq++
	})
	if err != nil {
		t.Fatal(err)
	}
	if allocs != 0 {
		t.Fatalf("MGET of 64 keys: %.1f allocations per round trip, want 0", allocs)
	}
	if c.hits == 0 || c.nils == 0 {
		t.Fatalf("round trips saw %d hits and %d nils; want both", c.hits, c.nils)
	}
	// 128 keys, every 8th missing: 1/8 of all replies are nil.
	if total := c.hits + c.nils; c.nils*8 != total {
		t.Fatalf("nils %d of %d replies, want exactly 1/8", c.nils, total)
	}
}

func BenchmarkMGET64(b *testing.B) {
	c := newMGETClient(64)
	if err := c.roundTrip(0); err != nil {
		b.Fatal(err)
	}
	c.replyed = 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if err := c.roundTrip(int64(i)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(c.replyed)/float64(b.N), "reply-B/op")
}

// BenchmarkParseMGET64 measures the reply parser alone on a canned reply.
func BenchmarkParseMGET64(b *testing.B) {
	var reply []byte
	reply = AppendArrayHeader(reply, 64)
	for i := 0; i < 64; i++ {
		reply = AppendBulkString(reply, fmt.Sprintf(`{"id":%d,"name":"item %d"}`, i, i))
	}
	src := bytes.NewReader(reply)
	rd := NewReader(src, Limits{})
	b.SetBytes(int64(len(reply)))
	b.ReportAllocs()
	for b.Loop() {
		src.Reset(reply)
		rd.Reset(src)
		if err := rd.Skip(); err != nil {
			b.Fatal(err)
		}
	}
}
