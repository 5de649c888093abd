package pg

import (
	"fmt"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/secret"
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
	// SELECT <pk>, row_to_json(t) FROM <table> t WHERE <pk> = ANY($1::bigint[])
	// (or another Form), and restores the keys' order and duplicates on
	// the client.
	Any Path = "any"
	// SQL runs the user's statement with the key array as $1 (bigint[]).
	// It returns either one row holding a JSON array (json, jsonb or text)
	// of objects or of JSON strings holding them (array_to_json(text[])),
	// or a SQL array (text[], varchar[], json[], jsonb[]) of JSON texts,
	// one element per key in key order, or one row per key in key order
	// with a single JSON column. NULL stands for a missing row.
	SQL Path = "sql"
	// Update writes only: every operation runs the update statement.
	Update Path = "update"
)

// Paths lists every accepted Path.
var Paths = []Path{PreparedOne, Any, SQL, Update}

// Form is how the any path writes its one statement for k keys; the
// server plans each form differently (issue 13: a bigint[] parameter is
// custom-planned on every call, k parameters switch to a generic plan after
// five executions).
type Form string

// The statement forms of the any path.
const (
	// FormParam is "<pk> = ANY($1::bigint[])": one array parameter, as pgx
	// and node-postgres users write it (the default; label "any[param]").
	FormParam Form = "param"
	// FormArray is "<pk> = ANY(ARRAY[$1,…,$k]::bigint[])": k integer
	// parameters, as pgbench scripts write it (label "any[array]").
	FormArray Form = "array"
	// FormIn is "<pk> IN ($1,…,$k)": k integer parameters (label
	// "any[in]").
	FormIn Form = "in"
)

// Forms lists every accepted Form.
var Forms = []Form{FormParam, FormArray, FormIn}

// PlanCacheMode is the server setting plan_cache_mode a path's connections
// run with (sent in the startup packet, so it holds for every statement of
// the connection).
type PlanCacheMode string

// The plan cache modes PostgreSQL (12 and later) accepts.
const (
	PlanAuto    PlanCacheMode = "auto"
	PlanGeneric PlanCacheMode = "force_generic_plan"
	PlanCustom  PlanCacheMode = "force_custom_plan"
)

// BatchMode says how PreparedOne sends the k statements of one request.
type BatchMode string

// The batch modes.
const (
	Roundtrips BatchMode = "roundtrips" // one statement, one round trip, at a time
	Pipeline   BatchMode = "pipeline"   // all k in one pgx.Batch: one round trip, one implicit transaction
)

// Defaults applied by Config.WithDefaults.
const (
	DefaultTable   = pgclient.DefaultTable
	DefaultPK      = "id"
	DefaultTimeout = 10 * time.Second
	// DefaultMaxMessage bounds one backend message on the event loop, as
	// the RESP driver bounds a reply.
	DefaultMaxMessage = 64 << 20
	// MaxMaxMessage is the largest accepted MaxMessage (PostgreSQL's own
	// bound on a field is 1 GiB).
	MaxMaxMessage = 1 << 30
	// MinMaxMessage is the smallest accepted MaxMessage.
	MinMaxMessage = 4096
	// MaxFormKeys bounds k for the forms with k parameters.
	MaxFormKeys = 65535
)

// Config is the plain-data description of a pg driver. Its JSON form and its
// String never contain the DSN's password: the DSN's type hides it.
type Config struct {
	// DSN is the server's connection string (URL or key=value form).
	DSN secret.DSN `json:"dsn"`
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
	// Form is the any path's statement form: param (default), array or
	// in. The forms with k parameters take k = Workload.Batch.
	Form Form `json:"form,omitempty"`
	// PlanCacheMode, when set (auto, force_generic_plan,
	// force_custom_plan), is set on every connection of the path at
	// connect; "" leaves the server's setting. PlanStats reads back what
	// the connections ran with.
	PlanCacheMode PlanCacheMode `json:"plan_cache_mode,omitempty"`
	// MaxMessage bounds one backend message in bytes (default 64 MiB,
	// 4 KiB … 1 GiB): a longer one fails the request and the connection
	// instead of being buffered.
	MaxMessage int64 `json:"max_message,omitempty"`
	// SkipDecode leaves the rows of the prepared-one and any paths
	// undecoded on the load's hot path: they are still read, framed,
	// counted and put back at their keys (a key without a row is still a
	// miss), but their JSON is not parsed, as pgbench discards the rows it
	// reads. For measuring what decoding costs the client, never for
	// comparing access paths (label "/nodecode"). Fetch and Preflight
	// decode as always.
	SkipDecode bool `json:"skip_decode,omitempty"`
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
	c.Form = Form(strings.ToLower(string(c.Form)))
	if c.Form == "" && c.Path == Any {
		c.Form = FormParam
	}
	c.PlanCacheMode = PlanCacheMode(strings.ToLower(string(c.PlanCacheMode)))
	if c.MaxMessage == 0 {
		c.MaxMessage = DefaultMaxMessage
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
	if _, err := pgclient.ParseIdent("pg.table", c.Table); err != nil {
		return err
	}
	if id, err := pgclient.ParseIdent("pg.pk", c.PK); err != nil {
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
	switch {
	case c.Path == Any && c.Form != FormParam && c.Form != FormArray && c.Form != FormIn:
		return fmt.Errorf("pg.form %q: accepted forms are param, array, in", c.Form)
	case c.Path != Any && c.Form != "":
		return fmt.Errorf("pg.form %q: only the any path has a statement form, not %s", c.Form, c.Path)
	case c.Path == Any && c.Form != FormParam && c.Workload.Batch > MaxFormKeys:
		return fmt.Errorf("pg.form %s: workload.batch %d needs %d parameters, at most %d", c.Form, c.Workload.Batch, c.Workload.Batch, MaxFormKeys)
	}
	switch c.PlanCacheMode {
	case "", PlanAuto, PlanGeneric, PlanCustom:
	default:
		return fmt.Errorf("pg.plan_cache_mode %q: accepted modes are auto, force_generic_plan, force_custom_plan", c.PlanCacheMode)
	}
	if c.SkipDecode && c.Path != PreparedOne && c.Path != Any {
		return fmt.Errorf("pg.skip_decode: only the prepared-one and any paths read rows without decoding them, not %s", c.Path)
	}
	if c.MaxMessage < MinMaxMessage || c.MaxMessage > MaxMaxMessage {
		return fmt.Errorf("pg.max_message %d: must be %d … %d bytes", c.MaxMessage, MinMaxMessage, MaxMaxMessage)
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
// "prepared-one/pipeline", "any[param]", "any[array]", "any[in]", "sql",
// "update"; a plan_cache_mode other than auto adds "/generic" or
// "/custom" ("any[array]/generic"), SkipDecode "/nodecode".
func (c Config) Label() string {
	l := string(c.Path)
	if c.Path == PreparedOne && c.BatchMode == Pipeline {
		l += "/" + string(c.BatchMode)
	}
	if c.Path == Any {
		// Every form is named, the default too: the forms are planned
		// differently, and a row must say which one it measured.
		f := c.Form
		if f == "" {
			f = FormParam
		}
		l += "[" + string(f) + "]"
	}
	switch c.PlanCacheMode {
	case PlanGeneric:
		l += "/generic"
	case PlanCustom:
		l += "/custom"
	}
	if c.SkipDecode {
		l += "/nodecode"
	}
	return l
}

// String describes the config, its DSN redacted, for %v and %+v.
func (c Config) String() string {
	return fmt.Sprintf("pg %s %s.%s on %s", c.Label(), c.Table, c.PK, c.DSN)
}
