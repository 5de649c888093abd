package pgclient_test

import (
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/pgclient"
)

func TestPayload(t *testing.T) {
	for _, tc := range []struct {
		id int64
		n  int
	}{{1, 128}, {42, 128}, {4096, 16}, {7, 3}, {123456789, 1000}} {
		p := pgclient.Payload(tc.id, tc.n)
		if len(p) != tc.n {
			t.Errorf("Payload(%d, %d) has %d bytes", tc.id, tc.n, len(p))
		}
		if p != pgclient.Payload(tc.id, tc.n) {
			t.Errorf("Payload(%d, %d) is not deterministic", tc.id, tc.n)
		}
		if tc.n >= 20 && !strings.HasPrefix(p, "item-") {
			t.Errorf("Payload(%d, %d) = %q", tc.id, tc.n, p)
		}
	}
	if pgclient.Payload(1, 128) == pgclient.Payload(2, 128) {
		t.Error("rows 1 and 2 have the same payload")
	}
}

func TestDatasetCreateAndReset(t *testing.T) {
	s := needServer(t)
	ctx := testCtx(t)
	conn, err := pgclient.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	d := pgclient.Dataset{Table: "public.ds_test", Rows: 300, PayloadBytes: 64}
	if err := pgclient.CreateDataset(ctx, conn, d); err != nil {
		t.Fatal(err)
	}
	check := func(stage string) {
		t.Helper()
		var n, minID, maxID, revs int64
		var bad int
		err := conn.QueryRow(ctx, "SELECT count(*), min(id), max(id), sum(revision) FROM ds_test").Scan(&n, &minID, &maxID, &revs)
		if err != nil {
			t.Fatal(err)
		}
		if n != d.Rows || minID != 1 || maxID != d.Rows || revs != 0 {
			t.Errorf("%s: %d rows, ids %d…%d, revisions sum %d; want %d rows 1…%d, revisions 0", stage, n, minID, maxID, revs, d.Rows, d.Rows)
		}
		rows, err := conn.Query(ctx, "SELECT id, payload FROM ds_test")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id int64
			var p string
			if err := rows.Scan(&id, &p); err != nil {
				t.Fatal(err)
			}
			if p != pgclient.Payload(id, d.PayloadBytes) {
				bad++
			}
		}
		if rows.Err() != nil || bad != 0 {
			t.Errorf("%s: %d payloads differ from Payload(); %v", stage, bad, rows.Err())
		}
	}
	check("created")
	if _, err := conn.Exec(ctx, "UPDATE ds_test SET revision = revision + 1 WHERE id <= 10; DELETE FROM ds_test WHERE id > 290; INSERT INTO ds_test VALUES (1000, 5, 'x')"); err != nil {
		t.Fatal(err)
	}
	if err := pgclient.ResetDataset(ctx, conn, d); err != nil {
		t.Fatal(err)
	}
	check("reset")
	// Creating again over an existing table resets it too.
	if err := pgclient.CreateDataset(ctx, conn, d); err != nil {
		t.Fatal(err)
	}
	check("created again")
}

func TestDatasetErrors(t *testing.T) {
	for _, tc := range []struct {
		d    pgclient.Dataset
		want string
	}{
		{pgclient.Dataset{Table: "a.b.c"}, `dataset.table "a.b.c": at most schema.name`},
		{pgclient.Dataset{Table: "bad name"}, `dataset.table "bad name": character ' ' needs the name in double quotes`},
		{pgclient.Dataset{Rows: -5}, "dataset.rows -5"},
		{pgclient.Dataset{PayloadBytes: -1}, "dataset.payload_bytes -1"},
		{pgclient.Dataset{PayloadBytes: pgclient.MaxPayloadBytes + 1}, "dataset.payload_bytes"},
	} {
		err := tc.d.WithDefaults().Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want an error containing %q", tc.d, err, tc.want)
		}
	}
}

func TestParseIdent(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{"items", `"items"`, ""},
		{"Items", `"items"`, ""},
		{"public.Items", `"public"."items"`, ""},
		{`"My Table"`, `"My Table"`, ""},
		{`s."a""b"`, `"s"."a""b"`, ""},
		{"", "", "empty name"},
		{"a..b", "", "empty name part"},
		{`"open`, "", "unterminated"},
		{`"a"b`, "", "expected '.'"},
		{"1abc", "", "cannot start with a digit"},
		{"a;drop", "", "needs the name in double quotes"},
	} {
		got, err := pgclient.QuoteIdent("table", tc.in)
		if tc.err == "" && (err != nil || got != tc.want) {
			t.Errorf("QuoteIdent(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("QuoteIdent(%q) = %q, %v; want an error containing %q", tc.in, got, err, tc.err)
		}
	}
}
