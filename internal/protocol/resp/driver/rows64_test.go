package resp

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/resp/resptest"
)

// The seeds' MGET: 64 keys in the template form, each value a ~165-byte
// JSON row. The key space (80) is not a multiple of the batch, so requests
// wrap around inside their 64 keys; every 9th key is missing.
const (
	rowsKeySpace = 80
	rowsTemplate = `CRUD:{db}.public.items:{"id":{id}}`
	rowsWrongID  = 42
)

// seedRow is row id as the seeds store it: about 165 bytes of JSON.
func seedRow(id int64) string {
	r := fmt.Sprintf(`{"id":%d,"name":"item-%d","price":%d.%02d,"payload":"`, id, id, id*3, id%100)
	return r + strings.Repeat(string(rune('a'+id%26)), 165-len(r)-2) + `"}`
}

func rowsMissing(id int64) bool { return id%9 == 0 }

// seedRowsServer is a test server holding the seeds' rows, except that it
// returns a wrong row for key rowsWrongID (one byte differs, same length).
func seedRowsServer(t *testing.T) *resptest.Server {
	srv := startTestServer(t, resptest.Options{})
	for id := int64(1); id <= rowsKeySpace; id++ {
		if rowsMissing(id) {
			continue
		}
		v := seedRow(id)
		if id == rowsWrongID {
			v = strings.Replace(v, `"price":126`, `"price":127`, 1)
		}
		srv.Set(fmt.Sprintf(`CRUD:bench.public.items:{"id":%d}`, id), []byte(v))
	}
	return srv
}

// seedReference is what the cache should hold: the right row for every key.
func seedReference(id int64) ([]byte, bool) {
	if id < 1 || id > rowsKeySpace || rowsMissing(id) {
		return nil, false
	}
	return []byte(seedRow(id)), true
}

// shortReads hands the reply parser at most max bytes per read, so that
// replies end mid-header and mid-value and the element-by-element path runs
// between the buffered passes.
type shortReads struct {
	net.Conn
	max int
}

func (s shortReads) Read(p []byte) (int, error) { return s.Conn.Read(p[:min(len(p), s.max)]) }

// TestRows64HitsExactAndWrongRowCaught runs 64-key MGETs of the seeds' rows
// at several pipeline depths, over whole and short reads, with every value
// validated, with a sample of them, and with a workload's own key order:
// hits and nils must be exactly those of the keys asked for, and the one
// wrong row must be caught in exactly the requests that read it (and only
// in validated ones).
func TestRows64HitsExactAndWrongRowCaught(t *testing.T) {
	srv := seedRowsServer(t)
	if n := len(seedRow(rowsWrongID)); n < 160 || n > 170 {
		t.Fatalf("rows of %d bytes, want ~165", n)
	}
	reversed := func(seq uint64, i int) int64 { return int64((seq*64+uint64(63-i))%rowsKeySpace) + 1 }
	defaultKeys := func(seq uint64, i int) int64 { return int64((seq*64+uint64(i))%rowsKeySpace) + 1 }
	for _, tc := range []struct {
		name    string
		sampled float64
		keys    func(uint64, int) int64
		short   int
		whole   bool // some replies are validated in one comparison
	}{
		{"all validated", 1, nil, 0, true},
		{"all validated, short reads", 1, nil, 97, false},
		{"a quarter validated", 0.25, nil, 0, true},
		{"none validated", 0, nil, 0, false},
		{"workload keys, short reads", 1, reversed, 61, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Config{Addr: srv.Addr(), KeyTemplate: rowsTemplate, DB: "bench", Batch: 64,
				KeySpace: rowsKeySpace, Keys: tc.keys, Timeout: 10 * time.Second}
			if tc.sampled > 0 {
				cfg.ValidateSampled, cfg.Reference = tc.sampled, seedReference
			}
			d := newDriver(t, cfg)
			keys := tc.keys
			if keys == nil {
				keys = defaultKeys
			}
			var c driver.Conn = open(t, d)
			var wantWholeMax int64 // validated replies without the wrong row
			if tc.short > 0 {
				c.(*conn).rd.Reset(shortReads{Conn: c.(*conn).nc, max: tc.short})
			}
			var wantHits, wantNils, wantValidated, wantMismatches int64
			seq := uint64(0)
			for _, depth := range []int{1, 1, 4, 16, 3, 16} {
				seqs := make([]uint64, depth)
				for i := range seqs {
					seqs[i], seq = seq, seq+1
				}
				out, err := do(t, c, seqs...)
				if err != nil {
					t.Fatal(err)
				}
				for i, s := range seqs {
					wrong, missed := false, false
					for k := 0; k < 64; k++ {
						id := keys(s, k)
						if rowsMissing(id) {
							wantNils++
							missed = true
						} else {
							wantHits++
						}
						wrong = wrong || id == rowsWrongID
					}
					validated := d.sampled(s)
					if validated {
						wantValidated += 64
					}
					wantMsg := ""
					if validated && wrong {
						wantMismatches++
						wantMsg = msgValueMismatch
					}
					if validated && !wrong {
						wantWholeMax++
					}
					wantClass := driver.OK
					switch {
					case wantMsg != "":
						wantClass = driver.Unexpected
					case missed: // a nil element: a miss (issue 26, item 6)
						wantClass, wantMsg = driver.Miss, msgMiss
					}
					if out[i].Msg != wantMsg || out[i].Class != wantClass {
						t.Fatalf("request %d: %v %q, want %v %q", s, out[i].Class, out[i].Msg, wantClass, wantMsg)
					}
				}
			}
			st := d.Stats()
			if st.Hits != wantHits || st.Nils != wantNils || st.Hits+st.Nils != int64(seq)*64 {
				t.Fatalf("%d hits and %d nils over %d requests, want %d and %d", st.Hits, st.Nils, seq, wantHits, wantNils)
			}
			if st.Validated != wantValidated || st.Mismatches != wantMismatches {
				t.Fatalf("validated %d, mismatches %d; want %d and %d", st.Validated, st.Mismatches, wantValidated, wantMismatches)
			}
			if w := c.(*conn).wholeMatches; w > wantWholeMax || (w > 0) != tc.whole {
				t.Fatalf("%d replies validated in one comparison (at most %d could be), want some: %v", w, wantWholeMax, tc.whole)
			}
			if tc.sampled > 0 && wantMismatches == 0 {
				t.Fatal("no validated request read the wrong row: the test proves nothing")
			}
		})
	}
}

// TestReferenceTable checks that the table of reference values answers as
// Reference does, for every key and beyond the key space, and that it is
// not built where keys are not 1…KeySpace in order.
func TestReferenceTable(t *testing.T) {
	base := Config{Addr: "127.0.0.1:1", Batch: 64, KeySpace: rowsKeySpace, ValidateSampled: 1, Reference: seedReference}
	withKeys := base
	withKeys.Keys = func(seq uint64, i int) int64 { return int64(i) + 1 }
	for name, tc := range map[string]struct {
		cfg   Config
		table bool
	}{"default keys": {base, true}, "workload keys": {withKeys, false}} {
		d := newDriver(t, tc.cfg)
		if got := len(d.ref.end) == rowsKeySpace+1; got != tc.table {
			t.Fatalf("%s: table built %v, want %v", name, got, tc.table)
		}
		for id := int64(-1); id <= rowsKeySpace+2; id++ {
			got, gotOK := d.reference(id)
			want, wantOK := seedReference(id)
			if gotOK != wantOK || string(got) != string(want) {
				t.Fatalf("%s: key %d: %q %v, want %q %v", name, id, got, gotOK, want, wantOK)
			}
		}
	}
}
