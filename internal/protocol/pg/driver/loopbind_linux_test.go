//go:build linux

package pg

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// TestBindPatchEqualsBuild: a request patched into the previous one's
// messages is byte for byte the request built from scratch, for an array
// parameter of each integer type, one parameter per key (with NULLs past
// the last key), one key, and a statement returning no columns; a key out
// of a type's range fails as the encoder fails it, and the next request is
// right again.
func TestBindPatchEqualsBuild(t *testing.T) {
	fields := []pgconn.FieldDescription{{Name: "id", DataTypeOID: pgtype.Int8OID}, {Name: "row_to_json", DataTypeOID: pgtype.JSONOID}}
	repeat := func(oid uint32, n int) []uint32 {
		oids := make([]uint32, n)
		for i := range oids {
			oids[i] = oid
		}
		return oids
	}
	for _, tc := range []struct {
		name  string
		oids  []uint32
		array bool
		nkeys int
		limit int64 // largest key the type takes
	}{
		{"bigint[]", []uint32{pgtype.Int8ArrayOID}, true, 64, math.MaxInt64},
		{"integer[]", []uint32{pgtype.Int4ArrayOID}, true, 17, math.MaxInt32},
		{"smallint[]", []uint32{pgtype.Int2ArrayOID}, true, 5, math.MaxInt16},
		{"64 bigint parameters", repeat(pgtype.Int8OID, 64), false, 64, math.MaxInt64},
		{"8 integer parameters, 5 keys", repeat(pgtype.Int4OID, 8), false, 5, math.MaxInt32},
		{"mixed parameters", []uint32{pgtype.Int8OID, pgtype.Int4OID}, false, 2, math.MaxInt32},
		{"one key", []uint32{pgtype.Int8OID}, false, 1, math.MaxInt64},
	} {
		for _, cols := range [][]pgconn.FieldDescription{fields, nil} {
			name := tc.name
			if cols == nil {
				name += ", no columns"
			}
			t.Run(name, func(t *testing.T) {
				s := newStmt(&pgconn.StatementDescription{Name: "benchrig_read", ParamOIDs: tc.oids, Fields: cols})
				r := rand.New(rand.NewPCG(3, uint64(tc.nkeys)))
				key := func() int64 { return r.Int64N(2*tc.limit/3+1) - tc.limit/3 }
				var t1 bindTmpl
				c1, c2 := &Conn{}, &Conn{}
				for round := 0; round < 20; round++ {
					keys := make([]int64, tc.nkeys)
					for i := range keys {
						keys[i] = key()
					}
					if round == 7 && tc.limit < math.MaxInt64 {
						keys[tc.nkeys-1] = tc.limit + 1
						err := t1.encode(c1, s, keys, tc.array)
						if err == nil || !strings.Contains(err.Error(), "does not fit") {
							t.Fatalf("key %d out of range: %v", keys[tc.nkeys-1], err)
						}
						continue
					}
					if err := t1.encode(c1, s, keys, tc.array); err != nil {
						t.Fatal(err)
					}
					var t2 bindTmpl
					if err := t2.build(c2, s, keys, tc.array); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(t1.msg, t2.msg) {
						t.Fatalf("round %d: patched\n%x\nbuilt\n%x", round, t1.msg, t2.msg)
					}
				}
				if tc.name != "mixed parameters" && t1.size == 0 {
					t.Error("the template is built every time, never patched")
				}
			})
		}
	}
}
