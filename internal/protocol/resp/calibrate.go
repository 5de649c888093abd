package resp

import (
	"bytes"
	"fmt"
	"strconv"
	"time"

	"github.com/benchrig/benchrig/internal/calibrate"
	"github.com/benchrig/benchrig/internal/driver"
	resp "github.com/benchrig/benchrig/internal/protocol/resp/driver"
)

func init() {
	calibrate.Register(string(Key), calibrate.NullPeer{
		New: func() calibrate.Responder { return respNull{} },
		Driver: func(addr string) (driver.Driver, error) {
			c := resp.DefaultConfig()
			c.Addr, c.Command, c.Timeout = addr, resp.CommandGET, 5*time.Second
			return resp.New(c)
		},
	})
}

// respNull answers RESP2 commands: PING with PONG, GET with a fixed value,
// MGET with the fixed value for every key, anything else with OK.
type respNull struct{}

var respValue = []byte("$5\r\nvalue\r\n")

func (respNull) Respond(in []byte) ([]byte, int, error) {
	var out []byte
	used := 0
	for used < len(in) {
		args, n, err := readRESPArray(in[used:])
		if err != nil {
			return nil, 0, err
		}
		if n == 0 {
			break // incomplete
		}
		used += n
		switch cmd := string(bytes.ToUpper(args[0])); {
		case cmd == "PING":
			out = append(out, "+PONG\r\n"...)
		case cmd == "GET":
			out = append(out, respValue...)
		case cmd == "MGET":
			out = append(out, '*')
			out = strconv.AppendInt(out, int64(len(args)-1), 10)
			out = append(out, '\r', '\n')
			for range args[1:] {
				out = append(out, respValue...)
			}
		default:
			out = append(out, "+OK\r\n"...)
		}
	}
	return out, used, nil
}

// readRESPArray reads one command (an array of bulk strings); n is 0 when
// b does not hold all of it yet.
func readRESPArray(b []byte) (args [][]byte, n int, err error) {
	line := func(at int) (string, int, bool) {
		i := bytes.Index(b[at:], []byte("\r\n"))
		if i < 0 {
			return "", 0, false
		}
		return string(b[at : at+i]), at + i + 2, true
	}
	head, at, ok := line(0)
	if !ok {
		return nil, 0, nil
	}
	if len(head) < 2 || head[0] != '*' {
		return nil, 0, fmt.Errorf("null RESP peer: want a command array, got %q", head)
	}
	count, err := strconv.Atoi(head[1:])
	if err != nil || count < 1 || count > 1<<16 {
		return nil, 0, fmt.Errorf("null RESP peer: bad array length %q", head)
	}
	for range count {
		h, next, ok := line(at)
		if !ok {
			return nil, 0, nil
		}
		if len(h) < 2 || h[0] != '$' {
			return nil, 0, fmt.Errorf("null RESP peer: want a bulk string, got %q", h)
		}
		size, err := strconv.Atoi(h[1:])
		if err != nil || size < 0 || size > 1<<16 {
			return nil, 0, fmt.Errorf("null RESP peer: bad bulk length %q", h)
		}
		if next+size+2 > len(b) {
			return nil, 0, nil
		}
		args = append(args, b[next:next+size])
		at = next + size + 2
	}
	return args, at, nil
}
