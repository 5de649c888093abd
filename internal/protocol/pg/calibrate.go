package pg

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/benchrig/benchrig/internal/calibrate"
	"github.com/benchrig/benchrig/internal/driver"
	pg "github.com/benchrig/benchrig/internal/protocol/pg/driver"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/workload"
)

func init() {
	calibrate.Register(string(Key), calibrate.NullPeer{
		New: func() calibrate.Responder { return &pgNull{} },
		Driver: func(addr string) (driver.Driver, error) {
			return pg.New(pg.Config{DSN: secret.NewDSN("postgres://bench@" + addr + "/bench?sslmode=disable"), Path: pg.PreparedOne,
				Workload: workload.Config{Kind: workload.Uniform, Batch: 1, Rows: 1000}, Timeout: 5 * time.Second})
		},
	})
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

func (p *pgNull) Respond(in []byte) ([]byte, int, error) {
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
		return calibrate.ErrTerminate
	case 'H': // Flush: everything is sent at once anyway
	default:
		return fmt.Errorf("null pg peer: unexpected message %q", typ)
	}
	return nil
}
