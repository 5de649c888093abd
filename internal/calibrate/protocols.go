package calibrate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
)

// httpNull answers every HTTP/1.1 request (a request head without a body,
// as the calibration's GET is) with one fixed 200 response.
type httpNull struct{}

var httpResponse = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok")

func (httpNull) respond(in []byte) ([]byte, int, error) {
	var out []byte
	used := 0
	for {
		i := bytes.Index(in[used:], []byte("\r\n\r\n"))
		if i < 0 {
			return out, used, nil
		}
		used += i + 4
		out = append(out, httpResponse...)
	}
}

// respNull answers RESP2 commands: PING with PONG, GET with a fixed value,
// MGET with the fixed value for every key, anything else with OK.
type respNull struct{}

var respValue = []byte("$5\r\nvalue\r\n")

func (respNull) respond(in []byte) ([]byte, int, error) {
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

// pgNull is a PostgreSQL backend that lets any client in and answers the
// extended protocol the pg driver speaks: any statement it prepares takes
// one bigint and returns one json column, and every execution returns one
// row {"id":K,"payload":"…"} for the key K it was bound with.
type pgNull struct {
	started bool
	key     int64
	out     []byte
}

// Protocol codes of the untyped first messages.
const (
	pgProtocol3 = 196608
	pgSSL       = 80877103
	pgGSS       = 80877104
)

func (p *pgNull) send(m pgproto3.BackendMessage) {
	p.out, _ = m.Encode(p.out)
}

func (p *pgNull) respond(in []byte) ([]byte, int, error) {
	p.out = p.out[:0]
	used := 0
	for {
		rest := in[used:]
		if !p.started {
			if len(rest) < 8 {
				break
			}
			size := int(binary.BigEndian.Uint32(rest))
			if size < 8 || size > 10000 {
				return nil, 0, fmt.Errorf("null pg peer: startup message of %d bytes", size)
			}
			if len(rest) < size {
				break
			}
			used += size
			switch code := binary.BigEndian.Uint32(rest[4:]); code {
			case pgSSL, pgGSS:
				p.out = append(p.out, 'N')
			case pgProtocol3:
				p.started = true
				p.send(&pgproto3.AuthenticationOk{})
				for _, kv := range [][2]string{{"server_version", "15.0"}, {"client_encoding", "UTF8"}, {"server_encoding", "UTF8"},
					{"standard_conforming_strings", "on"}, {"DateStyle", "ISO, MDY"}, {"integer_datetimes", "on"}, {"TimeZone", "UTC"}} {
					p.send(&pgproto3.ParameterStatus{Name: kv[0], Value: kv[1]})
				}
				p.send(&pgproto3.BackendKeyData{ProcessID: 4242, SecretKey: []byte{0, 0, 0, 1}})
				p.send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
			default:
				return nil, 0, fmt.Errorf("null pg peer: startup code %d", code)
			}
			continue
		}
		if len(rest) < 5 {
			break
		}
		size := int(binary.BigEndian.Uint32(rest[1:]))
		if size < 4 || size > 1<<16 {
			return nil, 0, fmt.Errorf("null pg peer: message %q of %d bytes", rest[0], size)
		}
		if len(rest) < 1+size {
			break
		}
		used += 1 + size
		if err := p.message(rest[0], rest[5:1+size]); err != nil {
			return nil, 0, err
		}
	}
	return p.out, used, nil
}

var errTerminate = errors.New("terminate")

// message answers one frontend message.
func (p *pgNull) message(typ byte, body []byte) error {
	row := &pgproto3.RowDescription{Fields: []pgproto3.FieldDescription{
		{Name: []byte("row_to_json"), DataTypeOID: pgtype.JSONOID, DataTypeSize: -1, TypeModifier: -1}}}
	switch typ {
	case 'P': // Parse
		p.send(&pgproto3.ParseComplete{})
	case 'D': // Describe
		if len(body) > 0 && body[0] == 'S' {
			p.send(&pgproto3.ParameterDescription{ParameterOIDs: []uint32{pgtype.Int8OID}})
		}
		p.send(row)
	case 'B': // Bind
		var b pgproto3.Bind
		if err := b.Decode(body); err != nil {
			return fmt.Errorf("null pg peer: bind: %w", err)
		}
		p.key = 0
		if len(b.Parameters) == 1 {
			v := b.Parameters[0]
			binaryParam := len(b.ParameterFormatCodes) > 0 && b.ParameterFormatCodes[0] == 1
			switch {
			case binaryParam && len(v) == 8:
				p.key = int64(binary.BigEndian.Uint64(v))
			case binaryParam && len(v) == 4:
				p.key = int64(int32(binary.BigEndian.Uint32(v)))
			default:
				p.key, _ = strconv.ParseInt(string(v), 10, 64)
			}
		}
		p.send(&pgproto3.BindComplete{})
	case 'E': // Execute
		val := strconv.AppendInt([]byte(`{"id":`), p.key, 10)
		val = append(val, `,"payload":"0123456789abcdef"}`...)
		p.send(&pgproto3.DataRow{Values: [][]byte{val}})
		p.send(&pgproto3.CommandComplete{CommandTag: []byte("SELECT 1")})
	case 'S': // Sync
		p.send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	case 'C': // Close
		p.send(&pgproto3.CloseComplete{})
	case 'Q': // simple query (settings)
		p.send(&pgproto3.CommandComplete{CommandTag: []byte("SET")})
		p.send(&pgproto3.ReadyForQuery{TxStatus: 'I'})
	case 'X':
		return errTerminate
	case 'H': // Flush: everything is sent at once anyway
	default:
		return fmt.Errorf("null pg peer: unexpected message %q", typ)
	}
	return nil
}
