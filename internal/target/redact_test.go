package target

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestSpecRedacted(t *testing.T) {
	spec := Spec{
		Name: "pg",
		Argv: []string{
			"redis-server", "--port", "6379", "--requirepass", "s3cret1",
			"requirepass", "s3cret2", "--password=s3cret3", "--db-password", "s3cret4",
			"postgres://bench:s3cret5@127.0.0.1/db", "host=x password=s3cret6 user=y",
		},
		Env:   []string{"PGPASSWORD=s3cret7", "API_TOKEN=s3cret8", "DSN=postgres://u:s3cret9@h/db", "PORT=3000"},
		Ready: ProbeSpec{HTTP: "http://admin:s3cret10@127.0.0.1:3000/health"},
	}
	orig := spec
	origArgv := append([]string(nil), spec.Argv...)
	r := spec.Redacted()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "s3cret") {
		t.Errorf("redacted spec still holds a secret: %s", b)
	}
	for _, keep := range []string{`"--port","6379"`, `"PORT=3000"`, "postgres://bench:[redacted]@127.0.0.1/db", "user=y", "admin:[redacted]@127.0.0.1:3000/health", `"--requirepass","[redacted]"`} {
		if !strings.Contains(string(b), keep) {
			t.Errorf("redacted spec lost %s: %s", keep, b)
		}
	}
	if !reflect.DeepEqual(spec.Argv, origArgv) || spec.Env[0] != orig.Env[0] {
		t.Error("Redacted modified the original spec")
	}
}

func TestRedactText(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"redis://:pw@127.0.0.1:6379/0", "redis://:[redacted]@127.0.0.1:6379/0"},
		{"user=a password='x y' dbname=b", "user=a password=[redacted] dbname=b"},
		{"a=b", "a=b"},
		{"mail@example.com", "mail@example.com"},
	}
	for _, c := range cases {
		if got := redactText(c.in); got != c.want {
			t.Errorf("redactText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := redactURL("http://u:p@h/x"); got != "http://u:[redacted]@h/x" {
		t.Errorf("redactURL: %q", got)
	}
}
