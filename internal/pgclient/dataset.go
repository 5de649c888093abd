package pgclient

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// Dataset defaults.
const (
	DefaultTable        = "items"
	DefaultRows         = 4096
	DefaultPayloadBytes = 128
	// MaxPayloadBytes bounds one payload.
	MaxPayloadBytes = 1 << 20
)

// Dataset describes the benchmark table:
//
//	items(id bigint primary key, revision bigint not null, payload text not null)
//
// with ids 1 … Rows, revisions 0 and deterministic payloads.
type Dataset struct {
	// Table is the table's name, optionally schema-qualified (default items).
	Table string `json:"table"`
	// Rows is the number of rows (default 4096).
	Rows int64 `json:"rows"`
	// PayloadBytes is the length of every payload (default 128).
	PayloadBytes int `json:"payload_bytes"`
}

// WithDefaults returns d with zero fields set to their defaults.
func (d Dataset) WithDefaults() Dataset {
	if d.Table == "" {
		d.Table = DefaultTable
	}
	if d.Rows == 0 {
		d.Rows = DefaultRows
	}
	if d.PayloadBytes == 0 {
		d.PayloadBytes = DefaultPayloadBytes
	}
	return d
}

// Validate reports the first invalid field.
func (d Dataset) Validate() error {
	if _, err := ParseIdent("dataset.table", d.Table); err != nil {
		return err
	}
	if d.Rows < 1 || d.Rows > 1<<31 {
		return fmt.Errorf("dataset.rows %d: must be between 1 and %d", d.Rows, int64(1)<<31)
	}
	if d.PayloadBytes < 1 || d.PayloadBytes > MaxPayloadBytes {
		return fmt.Errorf("dataset.payload_bytes %d: must be between 1 and %d", d.PayloadBytes, MaxPayloadBytes)
	}
	return nil
}

// payloadAlphabet is cycled through by Payload.
const payloadAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// Payload returns row id's payload: "item-<id>-" followed by letters and
// digits starting at an id-dependent offset, n bytes of ASCII in all. The
// same id and n always give the same payload.
func Payload(id int64, n int) string {
	b := make([]byte, 0, n)
	b = append(b, "item-"...)
	b = strconv.AppendInt(b, id, 10)
	b = append(b, '-')
	off := int(id % int64(len(payloadAlphabet)))
	for i := 0; len(b) < n; i++ {
		b = append(b, payloadAlphabet[(off+i)%len(payloadAlphabet)])
	}
	return string(b[:n])
}

// CreateDataset creates the table when it does not exist, then resets it.
func CreateDataset(ctx context.Context, conn *pgx.Conn, d Dataset) error {
	d = d.WithDefaults()
	if err := d.Validate(); err != nil {
		return err
	}
	table, _ := QuoteIdent("dataset.table", d.Table)
	_, err := conn.Exec(ctx, "CREATE TABLE IF NOT EXISTS "+table+
		" (id bigint PRIMARY KEY, revision bigint NOT NULL DEFAULT 0, payload text NOT NULL)")
	if err != nil {
		return fmt.Errorf("postgres: create table %s: %w", d.Table, err)
	}
	return ResetDataset(ctx, conn, d)
}

// ResetDataset brings the table back to its initial state so that every
// sample starts alike: TRUNCATE and COPY of all rows in one transaction,
// VACUUM (FREEZE, ANALYZE) so that visibility, hint bits and statistics are
// settled, then a sequential and an index scan to warm shared buffers.
func ResetDataset(ctx context.Context, conn *pgx.Conn, d Dataset) error {
	d = d.WithDefaults()
	if err := d.Validate(); err != nil {
		return err
	}
	id, _ := ParseIdent("dataset.table", d.Table)
	table := id.Sanitize()
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "TRUNCATE "+table); err != nil {
			return err
		}
		n, err := tx.CopyFrom(ctx, id, []string{"id", "revision", "payload"}, &rowSource{d: d})
		if err != nil {
			return err
		}
		if n != d.Rows {
			return fmt.Errorf("copied %d rows, want %d", n, d.Rows)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("postgres: reset dataset %s (%d rows): %w", d.Table, d.Rows, err)
	}
	if _, err := conn.Exec(ctx, "VACUUM (FREEZE, ANALYZE) "+table); err != nil {
		return fmt.Errorf("postgres: vacuum dataset %s: %w", d.Table, err)
	}
	return warm(ctx, conn, table, d.Rows)
}

// warm reads the whole heap and the whole primary-key index once.
func warm(ctx context.Context, conn *pgx.Conn, table string, rows int64) error {
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		var n, sum int64
		if err := tx.QueryRow(ctx, "SELECT count(*), coalesce(sum(length(payload)), 0) FROM "+table).Scan(&n, &sum); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off"); err != nil {
			return err
		}
		return tx.QueryRow(ctx, "SELECT count(*), coalesce(sum(revision), 0) FROM "+table+" WHERE id BETWEEN 1 AND $1", rows).Scan(&n, &sum)
	})
	if err != nil {
		return fmt.Errorf("postgres: warm dataset %s: %w", table, err)
	}
	return nil
}

// rowSource feeds CopyFrom the dataset's rows without holding them all.
type rowSource struct {
	d   Dataset
	id  int64
	row [3]any
}

func (r *rowSource) Next() bool {
	if r.id >= r.d.Rows {
		return false
	}
	r.id++
	return true
}

func (r *rowSource) Values() ([]any, error) {
	r.row = [3]any{r.id, int64(0), Payload(r.id, r.d.PayloadBytes)}
	return r.row[:], nil
}

func (r *rowSource) Err() error { return nil }
