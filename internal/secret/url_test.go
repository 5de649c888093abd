package secret

import (
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	p := NewPolicy(nil, []string{"cb"})
	for _, tt := range []struct{ in, want, hidden string }{
		{"http://u:hunter2@127.0.0.1:8080/x", "http://u:[redacted]@127.0.0.1:8080/x", "hunter2"},
		{"https://u:hunter2@example.com/", "https://u:[redacted]@example.com/", "hunter2"},
		{"https://example.com/x?token=abc&q=1", "https://example.com/x?token=[redacted]&q=1", "abc"},
		{"http://h/x?api_key=K1&access_token=T1;cb=C1#frag", "http://h/x?api_key=[redacted]&access_token=[redacted];cb=[redacted]#frag", "K1"},
		{"http://h/cb#access_token=T2", "http://h/cb#access_token=[redacted]", "T2"},
		{"http://h/?X-Amz-Signature=S1&X-Amz-Credential=C2", "http://h/?X-Amz-Signature=[redacted]&X-Amz-Credential=[redacted]", "S1"},
		{"http://h/?keyspace=10&author=me", "http://h/?keyspace=10&author=me", ""},
		{"u:hunter2@127.0.0.1:8080/x", "u:[redacted]@127.0.0.1:8080/x", "hunter2"},
		{"//u:hunter2@h/x", "//u:[redacted]@h/x", "hunter2"},
		{"http://u:hunter2@h:notaport/", "http://u:[redacted]@h:notaport/", "hunter2"},
		{"http://u:hun ter2@h/", "http://u:[redacted]@h/", "hun ter2"},
		{"http://u:pa/ss@w@rd@h/app", "http://u:[redacted]@h/app", "pa/ss@w@rd"},
		{"http://u:pa?ss@h/app", "http://u:[redacted]@h/app", "pa?ss"},
		{"http://u:p%40ss@h/", "http://u:[redacted]@h/", "p@ss"},
		{"http://h/users/@me", "http://h/users/@me", ""},
		{"http://user@h/", "http://user@h/", ""},
		{"redis://:pw9@127.0.0.1:6379/0", "redis://:[redacted]@127.0.0.1:6379/0", "pw9"},
		{"postgres://db/app?password=p@ss&user=u", "postgres://db/app?password=[redacted]&user=u", "p@ss"},
		{"postgres://db/app?application_name=a@b", "postgres://db/app?application_name=a@b", ""},
		{"not a url at all", "not a url at all", ""},
		{"", "", ""},
	} {
		var found Set
		got := p.URL(tt.in, &found)
		if got != tt.want {
			t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if tt.hidden != "" && !strings.Contains(found.Scrub("<"+tt.hidden+">"), Placeholder) {
			t.Errorf("URL(%q) did not report %q as found", tt.in, tt.hidden)
		}
	}
}

func TestText(t *testing.T) {
	var p Policy
	for _, tt := range []struct{ in, want string }{
		{`GET "https://u:hunter2@h/x": dial tcp: refused`, `GET "https://u:[redacted]@h/x": dial tcp: refused`},
		{`parse "http://u:pw1@h:port/": invalid port`, `parse "http://u:[redacted]@h:port/": invalid port`},
		{`URL "u:pw2@127.0.0.1:1/": no scheme`, `URL "u:[redacted]@127.0.0.1:1/": no scheme`},
		{"connect to postgres://bench:pw3@db/app failed", "connect to postgres://bench:[redacted]@db/app failed"},
		{"host=db password='se cret' dbname=app", "host=db password=[redacted] dbname=app"},
		{"node server.js --db-password pw4 --port 3000", "node server.js --db-password [redacted] --port 3000"},
		{"node server.js --password=pw5 API_KEY=k6", "node server.js --password=[redacted] API_KEY=[redacted]"},
		{"the key space is 10 and context is fine", "the key space is 10 and context is fine"},
		{"mail me at bob@example.com", "mail me at bob@example.com"},
	} {
		if got := p.Text(tt.in, nil); got != tt.want {
			t.Errorf("Text(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
}

func TestArgvAndEnv(t *testing.T) {
	p := NewPolicy(nil, []string{"p"})
	var found Set
	got := p.Argv([]string{"server", "--password=pw1", "--db-password", "pw2", "-p", "pw3", "--port", "3000",
		"TOKEN=pw4", "postgres://u:pw5@h/db", "--verbose", "requirepass", "pw6", "--no-auth", "--other", "x"}, &found)
	want := []string{"server", "--password=[redacted]", "--db-password", "[redacted]", "-p", "[redacted]", "--port", "3000",
		"TOKEN=[redacted]", "postgres://u:[redacted]@h/db", "--verbose", "requirepass", "[redacted]", "--no-auth", "--other", "x"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("Argv\n got %q\nwant %q", got, want)
	}
	if d := (Policy{}).Argv([]string{"-p", "8080"}, nil); d[1] != "8080" {
		t.Errorf("-p is hidden by the default policy: %q", d)
	}
	env := p.Env([]string{"DATABASE_URL=postgres://u:pw7@h/db", "API_TOKEN=pw8", "PORT=3000", "DSN=host=h password=pw9", "EMPTY="}, &found)
	wantEnv := []string{"DATABASE_URL=postgres://u:[redacted]@h/db", "API_TOKEN=[redacted]", "PORT=3000", "DSN=host=h password=[redacted]", "EMPTY="}
	if strings.Join(env, " ") != strings.Join(wantEnv, " ") {
		t.Errorf("Env\n got %q\nwant %q", env, wantEnv)
	}
	text := "pw1 pw2 pw3 pw4 pw5 pw6 pw7 pw8 pw9"
	if got := found.Scrub(text); strings.Contains(got, "pw") {
		t.Errorf("not every hidden value was found: %q", got)
	}
	h := p.Headers(map[string]string{"Authorization": "Bearer tk1", "X-Upstream-Key": "k2", "Accept": "text/html"}, &found)
	if h["Authorization"] != Placeholder || h["X-Upstream-Key"] != Placeholder || h["Accept"] != "text/html" {
		t.Errorf("Headers %v", h)
	}
	if got := found.Scrub("token tk1 and k2"); got != "token [redacted] and [redacted]" {
		t.Errorf("header values not found: %q", got)
	}
	if got := p.HeaderLine("X-Custom: v", nil); got != "X-Custom: v" {
		t.Errorf("HeaderLine changed a plain header: %q", got)
	}
	if got := NewPolicy([]string{"X-Custom"}, nil).HeaderLine("X-Custom: v", nil); got != "X-Custom: [redacted]" {
		t.Errorf("HeaderLine kept an added secret header: %q", got)
	}
}
