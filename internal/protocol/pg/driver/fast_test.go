package pg

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/workload"
)

// execCtl runs statements on a control connection of the test server.
func execCtl(t *testing.T, stmts ...string) {
	t.Helper()
	ctl, err := pgclient.Connect(testCtx(t), needServer(t).DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close(context.Background())
	for _, q := range stmts {
		if _, err := ctl.Exec(testCtx(t), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestHotPathMatchesFetch checks that Do's hot path (pgconn, binary
// parameters, the reusing decoder) returns the rows Fetch (pgx,
// encoding/json) returns, for bigint and integer keys.
func TestHotPathMatchesFetch(t *testing.T) {
	execCtl(t, "CREATE TABLE IF NOT EXISTS items4 (id integer PRIMARY KEY, revision bigint NOT NULL, payload text NOT NULL)",
		"INSERT INTO items4 SELECT id, revision, payload FROM items ON CONFLICT DO NOTHING")
	for _, table := range []string{"items", "items4"} {
		for _, path := range []Path{PreparedOne, Any} {
			t.Run(table+"/"+string(path), func(t *testing.T) {
				c := openCfg(t, Config{Path: path, Table: table, Workload: workload.Config{Kind: workload.Uniform, Batch: 8}})
				if c.read1 == nil {
					t.Fatal("the hot path is not used")
				}
				out := make([]driver.Outcome, 1)
				for seq := uint64(0); seq < 5; seq++ {
					if err := c.Do(testCtx(t), []driver.Request{{Seq: seq}}, out); err != nil || out[0].Class != driver.OK {
						t.Fatalf("Do: %+v %v", out[0], err)
					}
					_, keys := c.d.wl.Keys(seq, nil)
					got := append([]any(nil), c.rows[:len(keys)]...)
					ptrs := make([]*int64, len(keys))
					for i := range keys {
						ptrs[i] = &keys[i]
					}
					want, err := c.Fetch(testCtx(t), ptrs)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("seq %d keys %v: Do rows\n%v\nFetch rows\n%v", seq, keys, got, want)
					}
				}
				if path == Any {
					if err := c.encodeArray(c.read1, nil); err != nil {
						t.Fatal(err)
					}
					if _, err := c.exec(c.read1).Close(); err != nil {
						t.Errorf("empty key array: %v", err)
					}
				}
			})
		}
	}
}

// TestHotPathTimeout checks the timer-based timeout on the hot path: the
// statement is cancelled on the server, the outcome is a Timeout, and the
// connection serves the next request.
func TestHotPathTimeout(t *testing.T) {
	execCtl(t, "CREATE OR REPLACE VIEW slow_items AS SELECT i.* FROM items i CROSS JOIN LATERAL pg_sleep(CASE WHEN i.id = 1 THEN 30 ELSE 0 END) s")
	for _, path := range []Path{PreparedOne, Any} {
		t.Run(string(path), func(t *testing.T) {
			c := openCfg(t, Config{Path: path, Table: "slow_items", Timeout: 200 * time.Millisecond,
				Workload: workload.Config{Kind: workload.Hot, Hot: 2}})
			if c.read1 == nil {
				t.Fatal("the hot path is not used")
			}
			start := time.Now()
			o, err := doOne(t, c, 0) // key 1: sleeps
			if err != nil || o.Class != driver.Timeout || o.Msg != "timeout" {
				t.Fatalf("outcome %+v, %v; want a timeout on a live connection", o, err)
			}
			if d := time.Since(start); d > 15*time.Second { // half the sleep: the timeout fired, not the query's end
				t.Errorf("the timeout took %s", d)
			}
			if o, err := doOne(t, c, 1); err != nil || o.Class != driver.OK { // key 2
				t.Errorf("next request: %+v, %v; want OK on the same connection", o, err)
			}
		})
	}
}

// decoderCases are JSON texts the decoder must read exactly as
// encoding/json does (or refuse as it does).
var decoderCases = []string{
	`{"id":42,"revision":0,"payload":"item-42-abc"}`,
	` { "a" : [1, -2.5e3, 0, true, false, null, {"b": {}}, []], "c": "\u00e9\ud83d\ude00\"\\\/\b\f\n\r\t" } `,
	`{"dup":1,"dup":2}`,
	`"lone \ud800 high" `, `"lone \udc00\udc01 low"`, `"bad \ud800\u0041 pair"`, "\"raw \xff bytes\"",
	`[]`, `{}`, `null`, `-0`, `1E+2`, `0.5`, `123456789012345678901234567890`,
	``, `{`, `{"a"}`, `{"a":}`, `[1,]`, `01`, `-`, `1.`, `1e`, `+1`, `"\x"`, "\"ctl \x01\"", `tru`, `{"a":1}x`, `1e400`,
}

// checkDecoder decodes text into a slot that held another row, then again
// into the same slot (the second time, a row of the same shape only
// writes its values), as encoding/json decodes it.
func checkDecoder(t *testing.T, text string) {
	t.Helper()
	var want any
	wantErr := json.Unmarshal([]byte(text), &want)
	var d rowDecoder
	slot := newRowSlot(0)
	if _, err := d.decode([]byte(`{"stale":1,"id":"x"}`), slot); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		d.reset()
		got, err := d.decode([]byte(text), slot)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("decode(%q): error %v, encoding/json %v", text, err, wantErr)
		}
		if err == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("decode(%q) = %#v, encoding/json %#v", text, got, want)
		}
	}
}

func TestRowDecoderMatchesEncodingJSON(t *testing.T) {
	for _, text := range decoderCases {
		checkDecoder(t, text)
	}
	// Strings are scanned 8 bytes at a time: a special byte (quote,
	// backslash, control, non-ASCII) at every offset of a 24-byte string,
	// and strings cut short, read as encoding/json reads them.
	for _, sp := range []string{`\"`, `\n`, `\u00e9`, "\x01", "é", "\xff", `"`} {
		for i := 0; i <= 24; i++ {
			s := strings.Repeat("a", i) + sp + strings.Repeat("b", 24-i)
			checkDecoder(t, `"`+s+`"`)
			checkDecoder(t, `"`+s)
		}
	}
	// Integers take a short cut below 16 digits.
	for _, n := range []string{"0", "-0", "7", "-7", "999999999999999", "-999999999999999", "9999999999999999", "12345678901234567"} {
		checkDecoder(t, n)
	}

	// One slot through rows of changing shapes: each decoded as
	// encoding/json decodes it, and the row before it, kept, unchanged
	// until the next request (reset) starts.
	var d rowDecoder
	slot := newRowSlot(0)
	var prev any
	var prevWant any
	for i, text := range slotSequence {
		if i%2 == 0 {
			d.reset()
			prev = nil
		}
		var want any
		if err := json.Unmarshal([]byte(text), &want); err != nil {
			t.Fatal(err)
		}
		got, err := d.decode([]byte(text), slot)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("row %d %s: %#v, %v; want %#v", i, text, got, err, want)
		}
		if prev != nil {
			if s, ok := prev.(string); !ok || s != prevWant {
				t.Fatalf("row %d: the request's previous value became %#v, want %#v", i, prev, prevWant)
			}
		}
		// A value of the same request that is not the slot's: a string
		// in the slab, which the next decode must leave alone.
		prevWant = "held " + text
		held, _ := json.Marshal(prevWant)
		if prev, err = d.decode(held, nil); err != nil {
			t.Fatal(err)
		}
	}
}

// slotSequence is rows one slot decodes in turn: the same shape (values
// written in place), then new keys, fewer keys, another order, kinds
// changing (null, bool, number, string, nested), a repeated key, an empty
// object and a row that is not an object.
var slotSequence = []string{
	`{"id":1,"revision":0,"payload":"a"}`,
	`{"id":2,"revision":5,"payload":"bb"}`,
	`{"id":3,"revision":-0,"payload":""}`,
	`{"id":4,"revision":6,"payload":"dd","extra":true}`,
	`{"id":5,"revision":7}`,
	`{"revision":8,"id":6}`,
	`{"revision":null,"id":"seven"}`,
	`{"revision":false,"id":8}`,
	`{"revision":[1,"x"],"id":{"n":9}}`,
	`{"revision":[2],"id":{"n":10}}`,
	`{"a":1,"a":2}`,
	`{"a":3,"a":4}`,
	`{"a":"x","a":[5]}`,
	`{}`,
	`{"id":11,"revision":0,"payload":"k"}`,
	`[1,2]`,
	`{"id":12,"revision":0,"payload":"l"}`,
	`{"id":13,"revision":0,"payload":"m"}`,
}

func FuzzRowDecoder(f *testing.F) {
	for _, text := range decoderCases {
		f.Add(text)
	}
	f.Fuzz(checkDecoder)
}

func BenchmarkRowDecoder(b *testing.B) {
	raw := []byte(`{"id":1234,"revision":0,"payload":"` + pgclient.Payload(1234, 128) + `"}`)
	b.Run("rowDecoder", func(b *testing.B) {
		var d rowDecoder
		slot := newRowSlot(0)
		b.ReportAllocs()
		for b.Loop() {
			d.reset()
			if _, err := d.decode(raw, slot); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
