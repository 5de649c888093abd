package pgclient_test

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/pgclient"
)

func TestRedactIsThePolicy(t *testing.T) {
	// The cases live with the policy (internal/secret TestDSN, FuzzRedact).
	if got := pgclient.Redact("postgres://bench:s3cret@db/app"); got != "postgres://bench:"+pgclient.Redacted+"@db/app" {
		t.Errorf("Redact = %q", got)
	}
}

func TestParseDSNErrorHidesPassword(t *testing.T) {
	for _, dsn := range []string{
		"postgres://bench:Sup3rSecret@db:notaport/app",
		"host=db port=notaport password=Sup3rSecret",
		"host=db password='Sup3rSecret",
	} {
		_, err := pgclient.ParseDSN(dsn)
		if err == nil {
			t.Errorf("ParseDSN(%q) accepted it", dsn)
			continue
		}
		if strings.Contains(err.Error(), "Sup3rSecret") {
			t.Errorf("ParseDSN error shows the password: %v", err)
		}
		if !strings.Contains(err.Error(), "parse DSN") {
			t.Errorf("ParseDSN error %q does not say what failed", err)
		}
	}
}

func TestWrongPasswordNotInError(t *testing.T) {
	s := needServer(t)
	ctx := testCtx(t)
	conn, err := pgclient.Connect(ctx, s.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	const right, wrong = "R1ght-Pa55word", "Wr0ng-Pa55word"
	if _, err := conn.Exec(ctx, "DROP ROLE IF EXISTS pwtest; CREATE ROLE pwtest LOGIN PASSWORD '"+right+"'"); err != nil {
		t.Fatal(err)
	}
	base := "127.0.0.1:" + strconv.Itoa(s.Port()) + "/postgres?sslmode=disable"
	for _, dsn := range []string{
		"postgres://pwtest:" + wrong + "@" + base,
		"host=127.0.0.1 port=" + strconv.Itoa(s.Port()) + " user=pwtest dbname=postgres sslmode=disable password='" + wrong + "'",
	} {
		_, err := pgclient.Connect(ctx, dsn)
		if err == nil {
			t.Fatalf("connected with a wrong password")
		}
		if msg := err.Error(); strings.Contains(msg, wrong) || strings.Contains(msg, right) {
			t.Errorf("connect error shows a password: %v", msg)
		}
		if !strings.Contains(err.Error(), "password authentication failed") {
			t.Errorf("connect error %q does not say why", err)
		}
		if !strings.Contains(err.Error(), pgclient.Redacted) {
			t.Errorf("connect error %q does not name the redacted DSN", err)
		}
	}
	t.Setenv("PGPASSWORD", right)
	c2, err := pgclient.Connect(ctx, "postgres://pwtest@"+base)
	if err != nil {
		t.Fatalf("right password from PGPASSWORD: %v", err)
	}
	c2.Close(ctx)
	t.Setenv("PGPASSWORD", wrong)
	if _, err := pgclient.Connect(ctx, "postgres://pwtest@"+base); err == nil || strings.Contains(err.Error(), wrong) {
		t.Errorf("wrong PGPASSWORD: error %v (must fail without showing it)", err)
	}
}

func TestUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*1e9)
	defer cancel()
	_, err = pgclient.Connect(ctx, "postgres://u:Hidd3nPw@127.0.0.1:"+strconv.Itoa(port)+"/db?connect_timeout=2")
	if err == nil {
		t.Fatal("connected to a closed port")
	}
	if strings.Contains(err.Error(), "Hidd3nPw") {
		t.Errorf("error shows the password: %v", err)
	}
	if !strings.Contains(err.Error(), "connect to postgres://u:"+pgclient.Redacted+"@127.0.0.1:"+strconv.Itoa(port)) {
		t.Errorf("error %q does not name the redacted server", err)
	}
}

func TestScrub(t *testing.T) {
	err := pgclient.Scrub(context.DeadlineExceeded, "deadline")
	if strings.Contains(err.Error(), "deadline") {
		t.Errorf("scrub left the secret: %v", err)
	}
	if !errorsIs(err, context.DeadlineExceeded) {
		t.Errorf("scrub lost the deadline classification")
	}
	plain := net.UnknownNetworkError("x")
	if pgclient.Scrub(plain, "secret") != error(plain) {
		t.Errorf("scrub wrapped an error that held no secret")
	}
}
