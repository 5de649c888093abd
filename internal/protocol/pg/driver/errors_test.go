package pg

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/workload"
)

// doOne runs one request on a fresh connection of cfg.
func doOne(t *testing.T, c *Conn, seq uint64) (driver.Outcome, error) {
	t.Helper()
	out := make([]driver.Outcome, 1)
	err := c.Do(testCtx(t), []driver.Request{{Seq: seq}}, out)
	return out[0], err
}

func openCfg(t *testing.T, cfg Config) *Conn {
	t.Helper()
	cfg.DSN = secret.NewDSN(needServer(t).DSN())
	if cfg.Workload.Rows == 0 {
		cfg.Workload.Rows = testRows
	}
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.OpenConn(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestTimeoutKeepsConnection(t *testing.T) {
	// Key 1 (seq 0) sleeps well past the timeout; key 2 (seq 1) does not.
	c := openCfg(t, Config{Path: SQL, Timeout: 100 * time.Millisecond,
		SQL: sqlJSONArray + ` FROM pg_sleep(CASE WHEN ($1::bigint[])[1] = 1 THEN 5 ELSE 0 END)`})
	o, err := doOne(t, c, 0)
	if err != nil {
		t.Fatalf("Do after a timeout: %v (the connection should survive)", err)
	}
	if o.Class != driver.Timeout || o.Msg != "timeout" {
		t.Errorf("outcome %+v, want a timeout", o)
	}
	o, err = doOne(t, c, 1)
	if err != nil || o.Class != driver.OK {
		t.Errorf("next request: %+v, %v; want OK on the same connection", o, err)
	}
}

func TestServerErrorIsData(t *testing.T) {
	c := openCfg(t, Config{Path: SQL,
		SQL: `SELECT array_to_json(array(SELECT row_to_json(t) FROM items t WHERE t.id = ANY($1) AND 1 / (t.id - t.id) = 1))`})
	o, err := doOne(t, c, 0)
	if err != nil {
		t.Fatalf("Do: %v (a server error must not end the connection)", err)
	}
	if o.Class != driver.Error || !strings.HasPrefix(o.Msg, "SQLSTATE 22012: division by zero") {
		t.Errorf("outcome %+v, want an Error with SQLSTATE 22012", o)
	}
	if o, err := doOne(t, c, 1); err != nil || o.Class != driver.Error {
		t.Errorf("second request: %+v %v", o, err)
	}
}

func TestWrongRowCountIsUnexpected(t *testing.T) {
	c := openCfg(t, Config{Path: SQL, Workload: workload.Config{Batch: 4},
		SQL: `SELECT array_to_json(array(SELECT row_to_json(t) FROM items t WHERE t.id = ANY($1) LIMIT 3))`})
	o, err := doOne(t, c, 0)
	if err != nil {
		t.Fatal(err)
	}
	if o.Class != driver.Unexpected || o.Msg != "sql path returned 3 rows for 4 keys" {
		t.Errorf("outcome %+v, want Unexpected \"sql path returned 3 rows for 4 keys\"", o)
	}
	// A row the dataset should hold but the path does not return.
	ctl, err := pgclient.Connect(testCtx(t), needServer(t).DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close(context.Background())
	if _, err := ctl.Exec(testCtx(t), "CREATE TABLE IF NOT EXISTS gap AS SELECT * FROM items; DELETE FROM gap WHERE id = 2"); err != nil {
		t.Fatal(err)
	}
	c3 := openCfg(t, Config{Path: Any, Table: "gap", Workload: workload.Config{Kind: workload.Hot, Batch: 2}})
	o, err = doOne(t, c3, 0)
	// A miss: its own class, never a success (issue 26, item 6).
	if err != nil || o.Class != driver.Miss {
		t.Errorf("missing row: %+v %v; want a Miss", o, err)
	}
}

func TestUpdateOfMissingRowIsUnexpected(t *testing.T) {
	c := openCfg(t, Config{Workload: workload.Config{Kind: workload.Writes},
		UpdateSQL: "UPDATE items SET revision = revision + 1 WHERE id = $1 AND false"})
	o, err := doOne(t, c, 0)
	if err != nil || o.Class != driver.Unexpected || o.Msg != "update changed 0 rows, want 1" || o.Op != 0 {
		t.Errorf("outcome %+v %v; want Unexpected \"update changed 0 rows, want 1\" with op 0 (write)", o, err)
	}
}

func TestDeadConnectionEndsDo(t *testing.T) {
	c := openCfg(t, Config{Path: PreparedOne})
	ctl, err := pgclient.Connect(testCtx(t), needServer(t).DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer ctl.Close(context.Background())
	if _, err := ctl.Exec(testCtx(t), "SELECT pg_terminate_backend($1)", int64(c.PID())); err != nil {
		t.Fatal(err)
	}
	out := make([]driver.Outcome, 2)
	err = c.Do(testCtx(t), []driver.Request{{Seq: 0}, {Seq: 1}}, out)
	if err == nil {
		t.Fatal("Do on a terminated backend returned no error")
	}
	for i, o := range out {
		if o.Class != driver.Error || o.Msg == "" || o.Done == 0 {
			t.Errorf("outcome %d: %+v, want a stamped Error", i, o)
		}
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close after loss: %v", err)
	}
}

func TestCloseAbortsDo(t *testing.T) {
	c := openCfg(t, Config{Path: SQL, Timeout: time.Minute, SQL: sqlJSONArray + ` FROM pg_sleep(20)`})
	done := make(chan error, 1)
	go func() {
		out := make([]driver.Outcome, 1)
		done <- c.Do(context.Background(), []driver.Request{{Seq: 0}}, out)
	}()
	time.Sleep(200 * time.Millisecond)
	if err := c.Close(); err != nil {
		t.Errorf("Close during Do: %v", err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Error("aborted Do returned no error")
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Close did not abort Do")
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close after abort: %v", err)
	}
}

func TestOpenErrors(t *testing.T) {
	s := needServer(t)
	ctx := testCtx(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctl := controlConn(t, ctx, s)
	const pw = "Hunter2-Secret"
	if _, err := ctl.Exec(ctx, "DO $$BEGIN CREATE ROLE bench LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END$$; ALTER ROLE bench PASSWORD '"+pw+"'; GRANT SELECT, UPDATE ON items TO bench"); err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(s.Port())
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"unreachable", Config{DSN: secret.NewDSN("postgres://bench:" + pw + "@127.0.0.1:" + strconv.Itoa(closed) + "/postgres?connect_timeout=2")},
			"connect to postgres://bench:[redacted]@127.0.0.1:" + strconv.Itoa(closed)},
		{"wrong password", Config{DSN: secret.NewDSN("host=127.0.0.1 port=" + port + " user=bench dbname=postgres sslmode=disable password=not-" + pw)},
			"password authentication failed"},
		{"missing table", Config{DSN: secret.NewDSN(s.DSN()), Table: "itemz"}, `relation "itemz" does not exist`},
		{"missing column", Config{DSN: secret.NewDSN(s.DSN()), PK: "key"}, `column t.key does not exist`},
		{"bad update", Config{DSN: secret.NewDSN(s.DSN()), Workload: workload.Config{Kind: workload.Writes}, UpdateSQL: "UPDATE items SET nope = 1 WHERE id = $1"},
			`prepare update statement`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Workload.Rows = testRows
			d, err := New(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			_, err = d.Open(ctx, 3)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Open = %v, want an error containing %q", err, tc.want)
			}
			if strings.Contains(err.Error(), pw) {
				t.Errorf("error shows the password: %v", err)
			}
			if !strings.Contains(err.Error(), "worker 3") {
				t.Errorf("error %q does not name the worker", err)
			}
		})
	}
	// The right password works, and the role only reads and writes items.
	d, err := New(Config{DSN: secret.NewDSN("postgres://bench:" + pw + "@127.0.0.1:" + port + "/postgres?sslmode=disable"), Workload: workload.Config{Rows: testRows}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := d.Open(ctx, 0)
	if err != nil {
		t.Fatalf("right password: %v", err)
	}
	c.Close()
}

func TestCheckTable(t *testing.T) {
	s := needServer(t)
	ctx := testCtx(t)
	ctl := controlConn(t, ctx, s)
	if _, err := ctl.Exec(ctx, `DROP TABLE IF EXISTS nopk, twokey, textkey;
		CREATE TABLE nopk (id bigint, revision bigint, payload text);
		CREATE TABLE twokey (a int, b int, PRIMARY KEY (a, b));
		CREATE TABLE textkey (id text PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		table, pk string
		rows      int64
		want      string
	}{
		{"items", "id", testRows, ""},
		{"public.items", "id", 0, ""},
		{"itemz", "id", testRows, `postgres: table "itemz" does not exist`},
		{"nopk", "id", 0, `postgres: table "nopk" has no primary key; benchrig reads rows by primary key (ALTER TABLE "nopk" ADD PRIMARY KEY ("id"))`},
		{"twokey", "a", 0, `postgres: primary key of table "twokey" is (a, b), not "a"`},
		{"items", "revision", 0, `postgres: primary key of table "items" is (id), not "revision"`},
		{"textkey", "id", 0, `postgres: primary key "id" of table "textkey" is text`},
		{"items", "id", 100, `postgres: table "items" has 256 rows (ids 1…256), but the workload reads ids 1…100 (workload.rows 100)`},
		{"bad name!", "id", 0, `pg.table "bad name!"`},
	} {
		err := CheckTable(ctx, ctl, tc.table, tc.pk, tc.rows)
		if tc.want == "" && err != nil {
			t.Errorf("CheckTable(%s, %s, %d) = %v", tc.table, tc.pk, tc.rows, err)
		}
		if tc.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.want)) {
			t.Errorf("CheckTable(%s, %s, %d) = %v\nwant %q", tc.table, tc.pk, tc.rows, err, tc.want)
		}
	}
}

func TestCheckReserveForTooManyConnections(t *testing.T) {
	s := needServer(t)
	ctx := testCtx(t)
	ctl := controlConn(t, ctx, s)
	r, err := pgclient.ReadReserve(ctx, ctl)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("postgres: %d benchmark connections + 1 control connection need %d slots, but max_connections %d − %d reserved leaves %d",
		r.MaxConnections, r.MaxConnections+1, r.MaxConnections, r.Reserved, r.MaxConnections-r.Reserved)
	if err := pgclient.CheckReserve(ctx, ctl, r.MaxConnections); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("CheckReserve = %v, want %q", err, want)
	}
}

func TestConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Path: "mget"}, `pg.path "mget": accepted paths are prepared-one, any, sql, update`},
		{Config{Path: SQL}, "pg.sql: the sql path needs a statement"},
		{Config{Path: Any, SQL: "SELECT 1"}, "pg.sql: only the sql path"},
		{Config{BatchMode: "parallel"}, `pg.batch_mode "parallel": accepted modes are roundtrips, pipeline`},
		{Config{Path: Any, BatchMode: Pipeline}, "pg.batch_mode \"pipeline\": only the prepared-one path"},
		{Config{Path: Update}, "pg.path update writes only, but workload.kind hot reads"},
		{Config{Table: "a b"}, `pg.table "a b"`},
		{Config{PK: "t.id"}, `pg.pk "t.id": a column name`},
		{Config{Timeout: -time.Second}, "pg.timeout -1s"},
		{Config{Workload: workload.Config{Kind: "hotter"}}, `pg.workload.kind "hotter"`},
		{Config{DSN: secret.NewDSN("postgres://u:Secr3tPw@h:port/db")}, "pg.dsn: postgres: parse DSN postgres://u:[redacted]@h:port/db"},
	} {
		_, err := New(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%v) = %v\nwant an error containing %q", tc.cfg, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "Secr3tPw") {
			t.Errorf("error shows the password: %v", err)
		}
	}
	d, err := New(Config{DSN: secret.NewDSN("postgres://u:Secr3tPw@127.0.0.1/db"), Workload: workload.Config{Kind: workload.Writes}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := d.Config()
	if cfg.Path != Update || cfg.Table != "items" || cfg.PK != "id" || cfg.Timeout != DefaultTimeout {
		t.Errorf("defaults for writes: %+v", cfg)
	}
	if d.Name() != "pg" || d.MaxPipeline() != 1 || strings.Join(d.Ops(), ",") != "write" {
		t.Errorf("Name %q MaxPipeline %d Ops %v", d.Name(), d.MaxPipeline(), d.Ops())
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{string(b), fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg), fmt.Sprintf("%#v", cfg), fmt.Sprintf("%v", []Config{cfg})} {
		if strings.Contains(s, "Secr3tPw") {
			t.Errorf("password in %s", s)
		}
	}
	if !strings.Contains(string(b), `"dsn":"postgres://u:[redacted]@127.0.0.1/db"`) {
		t.Errorf("JSON %s lacks the redacted DSN", b)
	}
	var back Config
	if err := json.Unmarshal(b, &back); err != nil || back.Path != Update || back.Workload.Kind != workload.Writes {
		t.Errorf("round trip: %+v %v", back, err)
	}
	mixed, _ := New(Config{Workload: workload.Config{Kind: workload.Mixed}})
	if strings.Join(mixed.Ops(), ",") != "read,write" || mixed.UpdateSQL() == "" || mixed.ReadSQL() == "" {
		t.Errorf("mixed: ops %v update %q read %q", mixed.Ops(), mixed.UpdateSQL(), mixed.ReadSQL())
	}
	hot, _ := New(Config{Path: Any})
	if strings.Join(hot.Ops(), ",") != "read" || hot.UpdateSQL() != "" {
		t.Errorf("hot: ops %v update %q", hot.Ops(), hot.UpdateSQL())
	}
}
