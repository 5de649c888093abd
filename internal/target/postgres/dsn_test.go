package postgres

import (
	"context"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"postgres://bench:s3cret@db:5432/app?sslmode=disable", "postgres://bench:xxxxx@db:5432/app?sslmode=disable"},
		{"postgresql://bench@db/app", "postgresql://bench@db/app"},
		{"postgres://bench:@db/app", "postgres://bench:xxxxx@db/app"},
		{"postgres://db/app?user=u&password=s3cret&sslpassword=k3y", "postgres://db/app?user=u&password=xxxxx&sslpassword=xxxxx"},
		{"postgres://db/app?pass%77ord=s3cret", "postgres://db/app?pass%77ord=xxxxx"},
		{"postgres://bench:pa/ss@w@rd@db/app", "postgres://bench:xxxxx@db/app"},
		{"postgres://u:p%40ss@h1:5432,h2:5433/app", "postgres://u:xxxxx@h1:5432,h2:5433/app"},
		{"postgres://u:pa?ss@db/app", "postgres://u:xxxxx@db/app"},
		{"postgres://db:5432/app?password=p@ss&user=u", "postgres://db:5432/app?password=xxxxx&user=u"},
		{"postgres://db/app?application_name=a@b", "postgres://db/app?application_name=a@b"},
		{"host=db user=bench password=s3cret dbname=app", "host=db user=bench password=xxxxx dbname=app"},
		{"host=db password = s3cret", "host=db password = xxxxx"},
		{"host=db password='se cret\\' x' dbname=app", "host=db password=xxxxx dbname=app"},
		{"PASSWORD=s3cret host=db", "PASSWORD=xxxxx host=db"},
		{"host=db sslpassword=k3y", "host=db sslpassword=xxxxx"},
		{"host=db password='unterminated s3cret", "host=db xxxxx"},
		{"host=db password", "host=db xxxxx"},
		{"host=db user=bench", "host=db user=bench"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzRedact(f *testing.F) {
	f.Add("s3cret")
	f.Add("a b'c\\d")
	f.Add("p@ss/w:rd")
	f.Fuzz(func(t *testing.T, pw string) {
		if len(pw) < 4 || strings.ContainsAny(pw, "\x00") {
			return
		}
		quoted := "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw) + "'"
		for _, dsn := range []string{
			"host=db user=u password=" + quoted + " dbname=app",
			"password=" + quoted,
			"postgres://" + url.UserPassword("u", pw).String() + "@db/app",
			"postgres://db/app?password=" + url.QueryEscape(pw),
			"postgres://db/app?sslmode=disable&password=" + url.QueryEscape(pw) + "&user=u",
		} {
			// The mask itself, or the mask beside its neighbours ("xxxxx "
			// holds "xxx "), is no leak: look for the password with the mask
			// cut out.
			out := strings.ReplaceAll(Redact(dsn), Redacted, "\x00")
			if strings.Contains(out, url.QueryEscape(pw)) && !strings.Contains(strings.Replace(dsn, url.QueryEscape(pw), "", 1), url.QueryEscape(pw)) && len(url.QueryEscape(pw)) > 5 {
				t.Errorf("Redact(%q) = %q still holds the escaped password", dsn, out)
			}
			// A password that is also part of the fixed text proves nothing.
			fixed := strings.Replace(dsn, pw, "", 1)
			if strings.Contains(out, pw) && !strings.Contains(fixed, pw) {
				t.Errorf("Redact(%q) = %q still holds the password", dsn, out)
			}
		}
	})
}

func TestParseDSNErrorHidesPassword(t *testing.T) {
	for _, dsn := range []string{
		"postgres://bench:Sup3rSecret@db:notaport/app",
		"host=db port=notaport password=Sup3rSecret",
		"host=db password='Sup3rSecret",
	} {
		_, err := ParseDSN(dsn)
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
	conn, err := Connect(ctx, s.DSN())
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
		_, err := Connect(ctx, dsn)
		if err == nil {
			t.Fatalf("connected with a wrong password")
		}
		if msg := err.Error(); strings.Contains(msg, wrong) || strings.Contains(msg, right) {
			t.Errorf("connect error shows a password: %v", msg)
		}
		if !strings.Contains(err.Error(), "password authentication failed") {
			t.Errorf("connect error %q does not say why", err)
		}
		if !strings.Contains(err.Error(), Redacted) {
			t.Errorf("connect error %q does not name the redacted DSN", err)
		}
	}
	t.Setenv("PGPASSWORD", right)
	c2, err := Connect(ctx, "postgres://pwtest@"+base)
	if err != nil {
		t.Fatalf("right password from PGPASSWORD: %v", err)
	}
	c2.Close(ctx)
	t.Setenv("PGPASSWORD", wrong)
	if _, err := Connect(ctx, "postgres://pwtest@"+base); err == nil || strings.Contains(err.Error(), wrong) {
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
	_, err = Connect(ctx, "postgres://u:Hidd3nPw@127.0.0.1:"+strconv.Itoa(port)+"/db?connect_timeout=2")
	if err == nil {
		t.Fatal("connected to a closed port")
	}
	if strings.Contains(err.Error(), "Hidd3nPw") {
		t.Errorf("error shows the password: %v", err)
	}
	if !strings.Contains(err.Error(), "connect to postgres://u:xxxxx@127.0.0.1:"+strconv.Itoa(port)) {
		t.Errorf("error %q does not name the redacted server", err)
	}
}

func TestScrub(t *testing.T) {
	err := scrub(context.DeadlineExceeded, "dead")
	if strings.Contains(err.Error(), "dead") {
		t.Errorf("scrub left the secret: %v", err)
	}
	if !errorsIs(err, context.DeadlineExceeded) {
		t.Errorf("scrub lost the deadline classification")
	}
	plain := net.UnknownNetworkError("x")
	if scrub(plain, "secret") != error(plain) {
		t.Errorf("scrub wrapped an error that held no secret")
	}
}
