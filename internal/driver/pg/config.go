package pg

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/target/postgres"
	"github.com/benchrig/benchrig/internal/workload"
)

// Path is an access path: how a batch of keys is read (or a row written).
type Path string

// The access paths.
const (
	// PreparedOne reads each key with its own prepared statement,
	// SELECT row_to_json(t) FROM <table> t WHERE <pk> = $1: k round trips, or
	// one pipelined round trip with BatchMode pipeline.
	PreparedOne Path = "prepared-one"
	// Any reads the batch with one prepared statement,
	// SELECT <pk>, row_to_json(t) FROM <table> t WHERE <pk> = ANY($1),
	// and restores the keys' order and duplicates on the client.
	Any Path = "any"
	// SQL runs the user's statement with the key array as $1 (bigint[]).
	// It returns either one row holding a JSON array (json, jsonb or text) or
	// a SQL array of JSON texts, one element per key in key order, or one row
	// per key in key order with a single JSON column. NULL stands for a
	// missing row.
	SQL Path = "sql"
	// Update writes only: every operation runs the update statement.
	Update Path = "update"
)

// Paths lists every accepted Path.
var Paths = []Path{PreparedOne, Any, SQL, Update}

// BatchMode says how PreparedOne sends the k statements of one request.
type BatchMode string

// The batch modes.
const (
	Roundtrips BatchMode = "roundtrips" // one statement, one round trip, at a time
	Pipeline   BatchMode = "pipeline"   // all k in one pgx.Batch: one round trip, one implicit transaction
)

// Defaults applied by Config.WithDefaults.
const (
	DefaultTable   = postgres.DefaultTable
	DefaultPK      = "id"
	DefaultTimeout = 10 * time.Second
)

// Config is the plain-data description of a pg driver. Its JSON form and its
// String never contain the DSN's password.
type Config struct {
	// DSN is the server's connection string (URL or key=value form).
	DSN string `json:"dsn"`
	// Path is the read path (default prepared-one; update for a writes
	// workload).
	Path Path `json:"path"`
	// Table and PK name the table and its integer primary-key column
	// (defaults items and id).
	Table string `json:"table"`
	PK    string `json:"pk"`
	// SQL is the statement of the sql path, taking the key array as $1.
	SQL string `json:"sql,omitempty"`
	// UpdateSQL is the write statement, taking one key as $1 (default
	// UPDATE <table> SET revision = revision + 1 WHERE <pk> = $1).
	UpdateSQL string `json:"update_sql,omitempty"`
	// BatchMode is roundtrips (default) or pipeline, for prepared-one.
	BatchMode BatchMode `json:"batch_mode,omitempty"`
	// Workload derives each operation's class and keys from its seq.
	Workload workload.Config `json:"workload"`
	// Timeout bounds one operation (default 10s).
	Timeout time.Duration `json:"timeout"`
}

// WithDefaults returns c with zero fields set to their defaults (the
// workload's too).
func (c Config) WithDefaults() Config {
	c.Workload = c.Workload.WithDefaults()
	if c.Path == "" {
		c.Path = PreparedOne
		if c.Workload.Kind == workload.Writes {
			c.Path = Update
		}
	}
	c.Path = Path(strings.ToLower(string(c.Path)))
	if c.Table == "" {
		c.Table = DefaultTable
	}
	if c.PK == "" {
		c.PK = DefaultPK
	}
	if c.BatchMode == "" && c.Path == PreparedOne {
		c.BatchMode = Roundtrips
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	return c
}

// Validate reports the first invalid field of a defaulted config, naming
// the field and what it accepts. It does not contact the server.
func (c Config) Validate() error {
	switch c.Path {
	case PreparedOne, Any, SQL, Update:
	default:
		return fmt.Errorf("pg.path %q: accepted paths are prepared-one, any, sql, update", c.Path)
	}
	if _, err := postgres.ParseIdent("pg.table", c.Table); err != nil {
		return err
	}
	if id, err := postgres.ParseIdent("pg.pk", c.PK); err != nil {
		return err
	} else if len(id) != 1 {
		return fmt.Errorf("pg.pk %q: a column name, not qualified", c.PK)
	}
	if c.Path == SQL && strings.TrimSpace(c.SQL) == "" {
		return fmt.Errorf("pg.sql: the sql path needs a statement taking the key array as $1")
	}
	if c.Path != SQL && c.SQL != "" {
		return fmt.Errorf("pg.sql: only the sql path runs a statement of its own, not %s", c.Path)
	}
	switch {
	case c.Path == PreparedOne && c.BatchMode != Roundtrips && c.BatchMode != Pipeline:
		return fmt.Errorf("pg.batch_mode %q: accepted modes are roundtrips, pipeline", c.BatchMode)
	case c.Path != PreparedOne && c.BatchMode != "":
		return fmt.Errorf("pg.batch_mode %q: only the prepared-one path has a batch mode, not %s", c.BatchMode, c.Path)
	}
	if c.Timeout < 0 {
		return fmt.Errorf("pg.timeout %v: must not be negative", c.Timeout)
	}
	if err := c.Workload.Validate(); err != nil {
		return fmt.Errorf("pg.%w", err)
	}
	if c.Path == Update && c.Workload.Kind != workload.Writes {
		return fmt.Errorf("pg.path update writes only, but workload.kind %s reads; use kind writes, or a read path with kind mixed", c.Workload.Kind)
	}
	return nil
}

// Label names the path for reports and errors: "prepared-one",
// "prepared-one/pipeline", "any", "sql", "update".
func (c Config) Label() string {
	if c.Path == PreparedOne && c.BatchMode == Pipeline {
		return string(c.Path) + "/" + string(c.BatchMode)
	}
	return string(c.Path)
}

// Redacted returns c with the DSN's password replaced by "xxxxx".
func (c Config) Redacted() Config {
	c.DSN = postgres.Redact(c.DSN)
	return c
}

// MarshalJSON writes the config with its DSN redacted.
func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config // no methods: no recursion
	return json.Marshal(plain(c.Redacted()))
}

// String describes the config with its DSN redacted, for %v and %+v.
func (c Config) String() string {
	return fmt.Sprintf("pg %s %s.%s on %s", c.Label(), c.Table, c.PK, postgres.Redact(c.DSN))
}

// GoString is String, so that %#v does not print the password either.
func (c Config) GoString() string { return c.String() }
