package pg

import (
	"reflect"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/workload"
)

func TestFormConfig(t *testing.T) {
	wl := workload.Config{Batch: 3}
	for _, tc := range []struct {
		cfg       Config
		label     string
		where     string // in the read statement
		wantError string
	}{
		{cfg: Config{Path: Any, Workload: wl}, label: "any[param]", where: `t."id" = ANY($1::bigint[])`},
		{cfg: Config{Path: Any, Form: "ARRAY", Workload: wl}, label: "any[array]", where: `t."id" = ANY(ARRAY[$1,$2,$3]::bigint[])`},
		{cfg: Config{Path: Any, Form: FormIn, Workload: wl}, label: "any[in]", where: `t."id" IN ($1,$2,$3)`},
		{cfg: Config{Path: Any, Form: FormArray, PlanCacheMode: PlanGeneric, Workload: wl}, label: "any[array]/generic"},
		{cfg: Config{Path: Any, PlanCacheMode: "Force_Custom_Plan", Workload: wl}, label: "any[param]/custom"},
		{cfg: Config{Path: PreparedOne, PlanCacheMode: PlanAuto, Workload: wl}, label: "prepared-one"},
		{cfg: Config{Path: PreparedOne, BatchMode: Pipeline, PlanCacheMode: PlanCustom, Workload: wl}, label: "prepared-one/pipeline/custom"},
		{cfg: Config{Path: Any, Form: "list", Workload: wl}, wantError: `pg.form "list": accepted forms are param, array, in`},
		{cfg: Config{Path: PreparedOne, Form: FormIn, Workload: wl}, wantError: `pg.form "in": only the any path has a statement form, not prepared-one`},
		{cfg: Config{Path: Any, Form: FormIn, Workload: workload.Config{Batch: 70000}}, wantError: "pg.form in: workload.batch 70000 needs 70000 parameters, at most 65535"},
		{cfg: Config{Path: Any, PlanCacheMode: "generic", Workload: wl}, wantError: `pg.plan_cache_mode "generic": accepted modes are auto, force_generic_plan, force_custom_plan`},
		{cfg: Config{Path: Any, MaxMessage: 100, Workload: wl}, wantError: "pg.max_message 100: must be 4096 … 1073741824 bytes"},
		{cfg: Config{Path: Any, MaxMessage: 2 << 30, Workload: wl}, wantError: "pg.max_message 2147483648: must be 4096 … 1073741824 bytes"},
	} {
		tc.cfg.DSN = secret.NewDSN("postgres://bench@127.0.0.1:1/bench")
		d, err := New(tc.cfg)
		if tc.wantError != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantError) {
				t.Errorf("%+v: error %v, want %q", tc.cfg, err, tc.wantError)
			}
			continue
		}
		if err != nil {
			t.Errorf("%+v: %v", tc.cfg, err)
			continue
		}
		if got := d.Config().Label(); got != tc.label {
			t.Errorf("label %q, want %q", got, tc.label)
		}
		if !strings.Contains(d.ReadSQL(), tc.where) {
			t.Errorf("%s: read statement %q, want %q in it", tc.label, d.ReadSQL(), tc.where)
		}
		if tc.cfg.PlanCacheMode != "" && d.conn.RuntimeParams["plan_cache_mode"] != strings.ToLower(string(tc.cfg.PlanCacheMode)) {
			t.Errorf("%s: startup parameters %v, want plan_cache_mode", tc.label, d.conn.RuntimeParams)
		}
		if d.Config().MaxMessage != DefaultMaxMessage {
			t.Errorf("%s: max_message %d, want the default", tc.label, d.Config().MaxMessage)
		}
	}
}

// TestFormsReturnIdenticalRows: every statement form gives the same rows
// for the same keys, duplicates, NULL and missing keys included, through
// Fetch (pgx) and the hot path (Do's decoder); with fewer keys than the
// form's parameters and more (Fetch runs the statement per k keys).
func TestFormsReturnIdenticalRows(t *testing.T) {
	s := needServer(t)
	ctx := testCtx(t)
	k := func(v int64) *int64 { return &v }
	keys := []*int64{k(42), k(7), k(42), nil, k(999999), k(1), k(testRows)}
	want := []any{wantRow(42), wantRow(7), wantRow(42), nil, nil, wantRow(1), wantRow(testRows)}
	var paths []Config
	for _, form := range Forms {
		for _, batch := range []int{1, 4, 7, 16} {
			cfg := Config{Path: Any, Form: form, Workload: workload.Config{Rows: testRows, Batch: batch}}
			paths = append(paths, cfg)
			c := openCfg(t, cfg)
			got, err := c.Fetch(ctx, keys)
			if err != nil {
				t.Fatalf("%s batch %d: %v", cfg.Label(), batch, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s batch %d: Fetch =\n%v\nwant\n%v", cfg.Label(), batch, got, want)
			}
			if c.read1 == nil {
				t.Fatalf("%s: the hot path does not run the statement", cfg.Label())
			}
			ks := []int64{42, 7, 42, 999999, 1, 256, 3}[:min(batch, 7)]
			c.rows = append(c.rows[:0], make([]any, len(ks))...)
			if err := c.readAnyFast(ks); err != nil {
				t.Fatalf("%s batch %d: hot path: %v", cfg.Label(), batch, err)
			}
			wantFast := []any{wantRow(42), wantRow(7), wantRow(42), nil, wantRow(1), wantRow(256), wantRow(3)}[:len(ks)]
			if !reflect.DeepEqual(c.rows, wantFast) {
				t.Errorf("%s batch %d: hot path rows\n%v\nwant\n%v", cfg.Label(), batch, c.rows, wantFast)
			}
		}
	}
	if err := Preflight(ctx, secret.NewDSN(s.DSN()), paths); err != nil {
		t.Errorf("Preflight of every form: %v", err)
	}
}

// TestReadArgsExplain: every read path's statement explains with the
// arguments ReadArgs gives, as the runner records plans.
func TestReadArgsExplain(t *testing.T) {
	s := needServer(t)
	ctx := testCtx(t)
	ctl, err := pgclient.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close(ctx)
	wl := workload.Config{Rows: testRows, Batch: 4}
	for _, cfg := range []Config{
		{Path: PreparedOne, Workload: wl}, {Path: Any, Workload: wl}, {Path: Any, Form: FormArray, Workload: wl},
		{Path: Any, Form: FormIn, Workload: wl}, {Path: SQL, SQL: sqlTextArray, Workload: wl},
	} {
		cfg.DSN = secret.NewDSN(s.DSN())
		d, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, keys := range [][]int64{{3, 1, 3, 2}, {5}} {
			plan, err := pgclient.Explain(ctx, ctl, d.ReadSQL(), d.ReadArgs(keys)...)
			if err != nil || !strings.Contains(plan, `"Plan"`) {
				t.Errorf("%s %v: plan %q, %v", cfg.Label(), keys, plan, err)
			}
		}
	}
}
