package history

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/benchrig/benchrig/internal/report"
	"github.com/benchrig/benchrig/internal/secret"
)

// Location is where the commands' database is: an SQLite file (Path, ""
// for DefaultPath) or the PostgreSQL whose DSN the environment variable
// Env holds (never a DSN on the command line).
type Location struct {
	Path, Env string
}

// envName reports whether s is what --db-env accepts: an environment
// variable's name of at most 128 bytes.
func envName(s string) bool { return len(s) <= 128 && secret.IsEnvName(s) }

// Open opens the database l names. The DSN of a PostgreSQL history and
// its password are added to found, so that nothing the caller writes
// shows them.
func Open(ctx context.Context, l Location, found *secret.Set) (*Store, error) {
	switch {
	case l.Path != "" && l.Env != "":
		return nil, errors.New("--db and --db-env: give one (--db PATH for an SQLite file, --db-env VAR for PostgreSQL)")
	case l.Env != "":
		if !envName(l.Env) {
			// the value is not echoed: it may be a DSN given by mistake.
			return nil, errors.New("--db-env: the name of an environment variable (letters, digits, _; at most 128) is accepted, never a DSN (the value given is not shown)")
		}
		dsn := os.Getenv(l.Env)
		if dsn == "" {
			return nil, fmt.Errorf("--db-env %s: $%s is not set or empty: it must hold the PostgreSQL connection string", l.Env, l.Env)
		}
		found.Add(dsn)
		secret.NewPolicy(nil, nil).DSN(dsn, found)
		return OpenPostgres(ctx, l.Env, dsn)
	}
	path := l.Path
	if path == "" {
		p, err := DefaultPath()
		if err != nil {
			return nil, err
		}
		path = p
	}
	return OpenSQLite(ctx, path)
}

// AddFiles imports each file, printing a line per file: imported (its
// run and samples) or already imported. A file that is refused does not
// stop the others; the error then names every refused file and why.
func (s *Store) AddFiles(ctx context.Context, paths []string, o AddOptions, w io.Writer) error {
	var errs []error
	for _, p := range paths {
		a, err := s.Add(ctx, p, o)
		switch {
		case err != nil:
			errs = append(errs, err)
		case a.Already:
			fmt.Fprintf(w, "already imported: %s (run %d): nothing added\n", p, a.Run)
		default:
			fmt.Fprintf(w, "imported %s: run %d, %d samples\n", p, a.Run, a.Samples)
		}
		if ctx.Err() != nil {
			break
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d of %d files not imported:\n%w", len(errs), len(paths), errors.Join(errs...))
	}
	return nil
}

// ShowOptions are `history show`'s.
type ShowOptions struct {
	Filter
	// Figures to show; text shows the first only.
	Figures []Figure
	// HTML, when set, is the trends page to write instead of text.
	HTML string
	// Marks finds change points (nil: none).
	Marks ChangePoints
}

// ShowTo prints the series (text to w), or writes the trends page.
func (s *Store) ShowTo(ctx context.Context, o ShowOptions, w io.Writer) error {
	var all []Series
	for i, f := range o.Figures {
		sr, err := s.Series(ctx, f, o.Filter)
		if err != nil {
			return err
		}
		if o.HTML == "" {
			return Show(w, sr, o.Marks)
		}
		if i == 0 && len(sr) == 0 {
			break
		}
		all = append(all, sr...)
	}
	all = byCell(all)
	if err := WriteFile(o.HTML, func(out io.Writer) error { return report.HTML(out, Doc(all, o.Marks)) }); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "%d charts written to %s\n", len(all), o.HTML)
	return err
}

// byCell orders series by suite, cell, host and branch, keeping the
// order of the figures within each: the page's sections, a chart per
// figure.
func byCell(all []Series) []Series {
	var keys []string
	groups := map[string][]Series{}
	for _, s := range all {
		k := s.Suite + "\x00" + s.Cell + "\x00" + s.Host + "\x00" + s.Branch
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], s)
	}
	out := make([]Series, 0, len(all))
	for _, k := range keys {
		out = append(out, groups[k]...)
	}
	return out
}
