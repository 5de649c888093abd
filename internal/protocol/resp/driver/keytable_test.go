package resp

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	wire "github.com/benchrig/benchrig/internal/resp"
)

// TestEncodedKeysMatchRendered checks that requests built from the table of
// encoded keys are byte for byte the commands rendered key by key, for keys
// inside and outside the table, and without a table.
func TestEncodedKeysMatchRendered(t *testing.T) {
	render := func(tmpl string, id int64) string {
		return strings.ReplaceAll(strings.ReplaceAll(tmpl, "{db}", "bench"), "{id}", strconv.FormatInt(id, 10))
	}
	for _, tc := range []struct {
		name string
		cfg  Config
	}{
		{"mget in table", Config{Batch: 5, KeySpace: 8}},
		{"mget of the whole table", Config{Batch: 8, KeySpace: 8}},
		{"mget round the table twice", Config{Batch: 19, KeySpace: 8}},
		{"mget of one key", Config{Batch: 1, KeySpace: 3}},
		{"mget, key space of one", Config{Batch: 4, KeySpace: 1, KeyTemplate: "only"}},
		{"mget beyond table", Config{Batch: 3, KeySpace: 8, Keys: func(seq uint64, i int) int64 { return int64(seq)*7 + int64(i) }}},
		{"get with db", Config{Command: "GET", KeySpace: 16, KeyTemplate: `CRUD:{db}.public.items:{"id":{id}}`, DB: "bench"}},
		{"mget without table", Config{Batch: 2, KeySpace: keyTableMax}},
	} {
		tc.cfg.Addr = "127.0.0.1:1"
		d := newDriver(t, tc.cfg)
		if tc.cfg.KeySpace == keyTableMax && d.keyTab != nil {
			t.Fatalf("%s: a table for %d keys", tc.name, keyTableMax)
		}
		c := &codec{d: d}
		for seq := uint64(0); seq < 10; seq++ {
			args := []string{d.cfg.Command}
			for i := 0; i < d.cfg.Batch; i++ {
				args = append(args, render(d.cfg.KeyTemplate, d.keys(seq, i)))
			}
			want := wire.AppendCommandString(nil, args...)
			if got := c.appendRequest(nil, seq); !bytes.Equal(got, want) {
				t.Fatalf("%s: seq %d: %q, want %q", tc.name, seq, got, want)
			}
		}
	}
}
