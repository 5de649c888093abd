package pg

import (
	"encoding/binary"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/benchrig/benchrig/internal/pgclient"
)

// benchRow is row id of the seeds' table as row_to_json writes it: ~165
// bytes with its 128-byte payload.
func benchRow(id int64) []byte {
	return []byte(`{"id":` + strconv.FormatInt(id, 10) + `,"revision":0,"payload":"` + pgclient.Payload(id, 128) + `"}`)
}

// decodeShapes are 64 rows in each shape the driver decodes: as separate
// values (prepared-one, any, sql one row per key), a binary text[] (sql),
// a JSON array of objects (sql json/jsonb) and a JSON array of JSON
// strings (sql array_to_json(text[])).
func decodeShapes() (rows [][]byte, textArray, jsonArray, stringArray []byte) {
	textArray = binary.BigEndian.AppendUint32(nil, 1)
	textArray = binary.BigEndian.AppendUint32(textArray, 1)
	textArray = binary.BigEndian.AppendUint32(textArray, pgtype.TextOID)
	textArray = binary.BigEndian.AppendUint32(textArray, 64)
	textArray = binary.BigEndian.AppendUint32(textArray, 1)
	jsonArray, stringArray = []byte{'['}, []byte{'['}
	for i := int64(1); i <= 64; i++ {
		r := benchRow(i * 61)
		rows = append(rows, r)
		textArray = binary.BigEndian.AppendUint32(textArray, uint32(len(r)))
		textArray = append(textArray, r...)
		if i > 1 {
			jsonArray, stringArray = append(jsonArray, ','), append(stringArray, ',')
		}
		jsonArray = append(jsonArray, r...)
		s, _ := json.Marshal(string(r))
		stringArray = append(stringArray, s...)
	}
	return rows, textArray, append(jsonArray, ']'), append(stringArray, ']')
}

// BenchmarkDecode is the client's cost of decoding the rows of one 64-key
// request, per shape, as ns/row beside ns/op (64 rows); "encoding-json" is
// the decoder the sql path used before (and Fetch still uses).
//
//	go test -bench Decode -run '^$' ./internal/protocol/pg/driver/
func BenchmarkDecode(b *testing.B) {
	rows, textArray, jsonArray, stringArray := decodeShapes()
	var bytes int
	for _, r := range rows {
		bytes += len(r)
	}
	textCol := pgconn.FieldDescription{DataTypeOID: pgtype.TextArrayOID, Format: pgtype.BinaryFormatCode}
	jsonCol := pgconn.FieldDescription{DataTypeOID: pgtype.JSONOID}
	newConn := func() *Conn { return &Conn{d: &Driver{}, rows: make([]any, 64)} }
	perRow := func(b *testing.B) {
		b.SetBytes(int64(bytes))
		b.ReportAllocs()
		b.ResetTimer()
		b.Cleanup(func() { b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/64, "ns/row") })
	}
	b.Run("rows", func(b *testing.B) {
		c := newConn()
		perRow(b)
		for b.Loop() {
			c.dec.reset()
			for j, r := range rows {
				v, err := c.decodeFast(r, j)
				if err != nil {
					b.Fatal(err)
				}
				c.rows[j] = v
			}
		}
	})
	shape := func(name string, raw []byte, fd pgconn.FieldDescription) {
		b.Run(name, func(b *testing.B) {
			c := newConn()
			perRow(b)
			for b.Loop() {
				c.dec.reset()
				c.sqlStart()
				if err := c.sqlRow(raw, &fd, fd.Format, 64); err != nil {
					b.Fatal(err)
				}
				if err := c.sqlEnd(64); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	shape("text-array", textArray, textCol)
	shape("json-array", jsonArray, jsonCol)
	shape("json-strings", stringArray, jsonCol)
	b.Run("encoding-json", func(b *testing.B) {
		perRow(b)
		for b.Loop() {
			for _, r := range rows {
				var v any
				if err := json.Unmarshal(r, &v); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
