package pg

import (
	"cmp"
	"regexp"
	"strings"

	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/suite"
)

// Path is a PostgreSQL path of a suite (paths.NAME.pg): one of the pg
// driver's named access paths (Path, e.g. "prepared-one", "any"), or a
// custom SQL statement whose $1 is bound to the batch of keys.
type Path struct {
	// Path names a pg driver access path.
	Path string `json:"path,omitempty"`
	// SQL is a statement whose $1 is bound to the batch of keys.
	SQL string `json:"sql,omitempty"`
	// Batching is how prepared-one sends a batch of keys: roundtrips
	// (default, one statement after the other) or pipeline (one batch).
	Batching string `json:"batching,omitempty"`
	// Table is the table the driver's access paths read (default items).
	Table string `json:"table,omitempty"`
	// Form is how the any path binds its keys: param (default,
	// `= ANY($1::bigint[])` as pgx and node-postgres users write it), array
	// (`= ANY(ARRAY[$1,…,$k])` as pgbench scripts write it) or in
	// (`IN ($1,…,$k)`). It is in the path's label: any[array].
	Form string `json:"form,omitempty"`
	// PlanCacheMode is set on every benchmark connection: auto,
	// force_generic_plan or force_custom_plan (default: the server's).
	PlanCacheMode string `json:"plan_cache_mode,omitempty"`
	// Timeout bounds each request (default 10s; 0s: none).
	Timeout *suite.Duration `json:"timeout,omitempty"`
	// SkipDecode reads, frames, counts and places the prepared-one and
	// any paths' rows without parsing their JSON, as pgbench discards
	// rows: what decoding costs the client, measured apart. A missing
	// row is still a miss; its values are not checked.
	SkipDecode bool `json:"skip_decode,omitempty"`
}

var (
	pathRE  = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)
	identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)
)

// Defaults: a pg path has none to fill.
func (q *Path) Defaults(suite.Field) {}

// Validate checks the section.
func (q *Path) Validate(at suite.Field) {
	at.Exclusive([]string{"path", "sql"}, []bool{q.Path != "", q.SQL != ""}, "name a driver access path or give a statement")
	switch {
	case q.Path == "" && strings.TrimSpace(q.SQL) == "":
		at.Errf("needs one of path (a driver access path, e.g. prepared-one, any) or sql (a statement whose $1 is the batch of keys)")
	case q.Path != "" && !pathRE.MatchString(q.Path):
		at.Child("path").Errf("invalid access path %q; accepted: lower-case letters, digits and '-', e.g. prepared-one", q.Path)
	}
	at.Child("batching").CheckOneOf(q.Batching, "", "roundtrips", "pipeline")
	switch q.Form {
	case "":
	case "param", "array", "in":
		if q.Path != "any" {
			at.Child("form").Errf("form is how the any path binds its keys; path %q takes none", q.Path)
		}
	default:
		at.Child("form").Errf("must be param, array or in, got %q", q.Form)
	}
	at.Child("plan_cache_mode").CheckOneOf(q.PlanCacheMode, "", "auto", "force_generic_plan", "force_custom_plan")
	if q.Table != "" && !identRE.MatchString(q.Table) {
		at.Child("table").Errf("invalid table %q; accepted: a plain or schema-qualified identifier, e.g. items or public.items", q.Table)
	}
	at.Child("timeout").CheckTimeout(q.Timeout)
	if q.SkipDecode && q.Path != "prepared-one" && q.Path != "any" {
		at.Child("skip_decode").Errf("skips decoding the rows of the prepared-one and any paths; path %q takes none", cmp.Or(q.Path, "sql"))
	}
}

// BatchProblem: any batch is sent (the access path decides how).
func (q *Path) BatchProblem(string, int) string { return "" }

// Redacted: a pg path holds no credential (the DSN is the target's).
func (q *Path) Redacted(secret.Policy, *secret.Set) suite.PathSpec { c := *q; return &c }
