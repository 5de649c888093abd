package history

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	_ "modernc.org/sqlite"             // database/sql driver "sqlite"

	"github.com/benchrig/benchrig/internal/secret"
)

// Store is an open history database: SQLite or PostgreSQL, one schema.
type Store struct {
	db *sql.DB
	pg bool
	// where names the database in messages: the SQLite file, or "the
	// PostgreSQL database of $VAR" (never the DSN).
	where string
	// secrets are the DSN and its password, scrubbed from every error.
	secrets *secret.Set
}

// DefaultPath is where the SQLite history lives unless --db says:
// $XDG_DATA_HOME/benchrig/history.db, else ~/.local/share/benchrig/history.db.
func DefaultPath() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "benchrig", "history.db"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("history: no home directory for the default database (%v): give --db PATH", err)
	}
	return filepath.Join(home, ".local", "share", "benchrig", "history.db"), nil
}

// busyTimeout is how long an SQLite statement waits for another
// importer's write transaction before it fails with SQLITE_BUSY.
const busyTimeout = 60 * time.Second

// OpenSQLite opens (creating it and its directory when missing) the
// SQLite history at path, in WAL mode with a busy timeout so that
// importers run side by side, and migrates its schema.
func OpenSQLite(ctx context.Context, path string) (*Store, error) {
	if path == "" || strings.ContainsAny(path, "?#") || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("history: --db %q: a file path without '?' or '#' (and not a file: URI) is accepted", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("history: --db %s: %w", path, err)
	}
	dsn := path + fmt.Sprintf("?_pragma=busy_timeout(%d)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)&_txlock=immediate", busyTimeout.Milliseconds())
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("history: open %s: %w", path, err)
	}
	s := &Store{db: db, where: path}
	if err := s.init(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// OpenPostgres opens the PostgreSQL history whose DSN is dsn, read by the
// caller from the environment variable env (named in messages instead of
// the DSN, which no message shows), and migrates its schema.
func OpenPostgres(ctx context.Context, env, dsn string) (*Store, error) {
	secrets := &secret.Set{}
	secrets.Add(dsn)
	secret.NewPolicy(nil, nil).DSN(dsn, secrets)
	where := "the PostgreSQL database of $" + env
	if _, err := pgx.ParseConfig(dsn); err != nil {
		return nil, fmt.Errorf("history: $%s does not hold a PostgreSQL connection string pgx accepts (URL or key=value): %w", env, secrets.Error(err))
	}
	if cfg, _ := pgx.ParseConfig(dsn); cfg != nil {
		secrets.Add(cfg.Password)
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, fmt.Errorf("history: %s: %w", where, secrets.Error(err))
	}
	db.SetMaxOpenConns(4)
	s := &Store{db: db, pg: true, where: where, secrets: secrets}
	if err := s.init(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Where names the database in messages.
func (s *Store) Where() string { return s.where }

// errf is an error about the store, its secrets scrubbed.
func (s *Store) errf(format string, args ...any) error {
	return s.secrets.Error(fmt.Errorf("history: "+s.where+": "+format, args...))
}

// q rewrites a statement written with ? placeholders for the store's
// driver: $1, $2… for PostgreSQL.
func (s *Store) q(stmt string) string {
	if !s.pg {
		return stmt
	}
	var b strings.Builder
	n := 0
	for _, r := range stmt {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// init checks the connection and migrates, retrying while another
// process migrates the same database.
func (s *Store) init(ctx context.Context) error {
	var err error
	for attempt := 1; attempt <= maxRetries; attempt++ {
		if err = s.migrate(ctx); err == nil || !s.retryable(err) {
			break
		}
		pause(ctx, attempt)
	}
	var newer *NewerSchemaError
	if errors.As(err, &newer) {
		return err
	}
	if err != nil {
		return s.errf("%w", err)
	}
	return nil
}

// maxRetries bounds the attempts of a transaction that lost a race with
// another importer (PostgreSQL: serialization failure, deadlock, a unique
// key taken; SQLite: busy past the timeout).
const maxRetries = 8

// retryable reports whether err is a lost race worth another attempt.
func (s *Store) retryable(err error) bool {
	msg := err.Error()
	if s.pg {
		for _, code := range []string{"40001", "40P01", "23505"} {
			if strings.Contains(msg, "SQLSTATE "+code) {
				return true
			}
		}
		return false
	}
	return strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked")
}

// pause waits before attempt+1: 50 ms, 100 ms… up to 2 s, or until ctx ends.
func pause(ctx context.Context, attempt int) {
	d := min(50*time.Millisecond<<attempt, 2*time.Second)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
