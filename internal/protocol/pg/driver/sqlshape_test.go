package pg

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// refSQLValue is what Fetch (encoding/json) makes of one row holding a
// JSON column: the rows it stands for, or ok false.
func refSQLValue(raw []byte) (rows []any, ok bool) {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil, false
	}
	vals := []any{v}
	arr, isArr := v.([]any)
	if isArr {
		vals = arr
	}
	for i, e := range vals {
		if s, isStr := e.(string); isStr && isArr {
			e = nil
			if json.Unmarshal([]byte(s), &e) != nil {
				return nil, false
			}
			vals[i] = e
		}
		if _, isObj := vals[i].(map[string]any); !isObj && vals[i] != nil {
			return nil, false
		}
	}
	return vals, true
}

var sqlValueCases = []string{
	`[{"id":1,"p":"a"},null,{"id":1,"p":"a"}]`,
	` [ "{\"id\":2,\"p\":\"b\\u00e9\"}" , null, "null" ] `,
	`{"id":3}`, `null`, `[]`, `[[1]]`, `["[1]"]`, `[1]`, `"{}"`, `["{\"a\":\"\\\"\"}"]`,
	`[{"a":1},]`, `["{\"a\":}"]`, `["\ud800{"]`, "[\"{\\\"a\\\":\\\"\xff\\\"}\"]",
}

// TestSQLValueMatchesFetch: the hot path's reading of a JSON column (one
// row holding an array of rows or of rows' JSON strings, or one row)
// agrees with Fetch's on accepted values and on refusals.
func TestSQLValueMatchesFetch(t *testing.T) {
	for _, text := range sqlValueCases {
		checkSQLValue(t, text)
	}
}

func FuzzSQLValue(f *testing.F) {
	for _, text := range sqlValueCases {
		f.Add(text)
	}
	f.Fuzz(checkSQLValue)
}

func checkSQLValue(t *testing.T, text string) {
	want, ok := refSQLValue([]byte(text))
	nkeys := max(len(want), 1)
	c := &Conn{rows: make([]any, nkeys)}
	fd := pgconn.FieldDescription{DataTypeOID: pgtype.JSONOID}
	c.sqlStart()
	err := c.sqlRow([]byte(text), &fd, pgtype.TextFormatCode, len(want))
	if err == nil {
		err = c.sqlEnd(len(want))
	}
	switch {
	case ok != (err == nil):
		t.Errorf("%q: hot path error %v, Fetch accepts: %v", text, err, ok)
	case ok && !reflect.DeepEqual(c.rows[:len(want)], want):
		t.Errorf("%q: hot path rows %v, Fetch %v", text, c.rows[:len(want)], want)
	}
}

// FuzzSQLBinaryArray: any bytes as a binary text[] value are decoded or
// refused without a panic, placing only objects and nil.
func FuzzSQLBinaryArray(f *testing.F) {
	_, textArray, _, _ := decodeShapes()
	f.Add(textArray)
	f.Add(textArray[:30])
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 25})
	f.Fuzz(func(t *testing.T, raw []byte) {
		c := &Conn{rows: make([]any, 64)}
		fd := pgconn.FieldDescription{DataTypeOID: pgtype.TextArrayOID}
		c.sqlStart()
		if c.sqlRow(raw, &fd, pgtype.BinaryFormatCode, 64) != nil {
			return
		}
		for _, r := range c.rows {
			if _, isObj := r.(map[string]any); !isObj && r != nil {
				t.Fatalf("placed %v", r)
			}
		}
	})
}
