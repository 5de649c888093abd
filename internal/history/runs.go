package history

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"
)

// Run is one imported results file, as `history list` shows it.
type Run struct {
	ID       int64
	Started  time.Time
	Suite    string
	Branch   string
	Revision string
	Host     string
	Samples  int
	File     string
}

// Runs lists every run, oldest first.
func (s *Store) Runs(ctx context.Context) ([]Run, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, started, suite, branch, revision, host, samples, file_name FROM runs ORDER BY started_ns, id`)
	if err != nil {
		return nil, s.errf("%w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		var r Run
		var started string
		if err := rows.Scan(&r.ID, &started, &r.Suite, &r.Branch, &r.Revision, &r.Host, &r.Samples, &r.File); err != nil {
			return nil, s.errf("%w", err)
		}
		r.Started, _ = time.Parse(time.RFC3339Nano, started)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.errf("%w", err)
	}
	return out, nil
}

// WriteRuns prints runs as `history list` does: a table, one run a line.
func WriteRuns(w io.Writer, runs []Run) error {
	if len(runs) == 0 {
		_, err := fmt.Fprintln(w, "no runs: import results files with benchrig history add FILE…")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED\tSUITE\tBRANCH\tREVISION\tHOST\tSAMPLES\tFILE")
	for _, r := range runs {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.ID, r.Started.UTC().Format("2006-01-02 15:04:05Z"), r.Suite, r.Branch, r.Revision, r.Host, r.Samples, r.File)
	}
	return tw.Flush()
}

// MaxReason bounds a removal's reason, in bytes.
const MaxReason = 1000

// ErrNoRun is the error for a run id the database does not hold.
var ErrNoRun = errors.New("no such run")

// CheckReason refuses an empty removal reason or one past MaxReason.
func CheckReason(reason string) error {
	if reason == "" || len(reason) > MaxReason {
		return fmt.Errorf("--reason: %d bytes: why the run is dropped, 1–%d bytes, is required", len(reason), MaxReason)
	}
	return nil
}

// Remove drops run id and its samples, and records in the removed table
// when and why (reason). The file may be imported again later.
func (s *Store) Remove(ctx context.Context, id int64, reason string) error {
	if err := CheckReason(reason); err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		err := s.remove(ctx, id, reason)
		if err == nil || errors.Is(err, ErrNoRun) {
			return err
		}
		if attempt >= maxRetries || !s.retryable(err) {
			return s.errf("remove run %d: %w", id, err)
		}
		pause(ctx, attempt)
	}
}

func (s *Store) remove(ctx context.Context, id int64, reason string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var sha, suite, started string
	err = tx.QueryRowContext(ctx, s.q(`SELECT file_sha256, suite, started FROM runs WHERE id = ?`), id).Scan(&sha, &suite, &started)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("run %d: %w in %s (benchrig history list shows the runs)", id, ErrNoRun, s.where)
	}
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO removed (run_id, file_sha256, suite, started, removed_at, reason) VALUES (?, ?, ?, ?, ?, ?)`),
		id, sha, suite, started, stamp(time.Now()), reason); err != nil {
		return err
	}
	for _, stmt := range []string{`DELETE FROM samples WHERE run_id = ?`, `DELETE FROM targets WHERE run_id = ?`, `DELETE FROM runs WHERE id = ?`} {
		if _, err := tx.ExecContext(ctx, s.q(stmt), id); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Export writes run id's results file as it was imported, byte for byte:
// the stored bytes are decompressed and checked against the file's
// SHA-256 before anything is written.
func (s *Store) Export(ctx context.Context, id int64, w io.Writer) error {
	var original []byte
	var sha string
	var size int64
	err := s.db.QueryRowContext(ctx, s.q(`SELECT original, file_sha256, file_size FROM runs WHERE id = ?`), id).Scan(&original, &sha, &size)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("run %d: %w in %s (benchrig history list shows the runs)", id, ErrNoRun, s.where)
	}
	if err != nil {
		return s.errf("export run %d: %w", id, err)
	}
	if size < 0 || size > MaxFileBytes {
		return s.errf("run %d: stored size %d outside 0–%d", id, size, MaxFileBytes)
	}
	zr, err := gzip.NewReader(bytes.NewReader(original))
	if err != nil {
		return s.errf("run %d: stored file: %w", id, err)
	}
	data, err := io.ReadAll(io.LimitReader(zr, size+1))
	if err != nil {
		return s.errf("run %d: stored file: %w", id, err)
	}
	sum := sha256.Sum256(data)
	if got := hex.EncodeToString(sum[:]); int64(len(data)) != size || got != sha {
		return s.errf("run %d: the stored file hashes to %s (%d bytes), imported as %s (%d bytes): the database was changed", id, got[:12], len(data), sha[:min(12, len(sha))], size)
	}
	_, err = w.Write(data)
	return err
}

// ParseRun parses a run id as the commands take it: 1 to 2^53.
func ParseRun(s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 || id > 1<<53 || s != strconv.FormatInt(id, 10) {
		return 0, fmt.Errorf("run %q: a run id as benchrig history list shows it (an integer 1–%d) is accepted", s, int64(1)<<53)
	}
	return id, nil
}
