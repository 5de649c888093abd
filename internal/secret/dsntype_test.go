package secret_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/secret/secrettest"
)

func TestDSNTypeRenderings(t *testing.T) {
	for _, tt := range []struct{ raw, want, pw string }{
		{"postgres://bench:s3cret-pw@db:5432/app?sslmode=disable", "postgres://bench:[redacted]@db:5432/app?sslmode=disable", "s3cret-pw"},
		{"postgres://bench:p%40ss%2Fw0rd@db/app", "postgres://bench:[redacted]@db/app", "p@ss/w0rd"},
		{"postgres://db/app?user=u&password=s3cret-pw&application_name=x", "postgres://db/app?user=u&password=[redacted]&application_name=x", "s3cret-pw"},
		{"host=db port=5432 user=bench password='se cret pw' dbname=app", "host=db port=5432 user=bench password=[redacted] dbname=app", "se cret pw"},
		{"host=db user=bench password=s3cret-pw dbname=app sslmode=disable", "host=db user=bench password=[redacted] dbname=app sslmode=disable", "s3cret-pw"},
	} {
		d := secret.NewDSN(tt.raw)
		if d.Reveal() != tt.raw || d.IsZero() {
			t.Errorf("NewDSN(%q): Reveal %q, IsZero %v", tt.raw, d.Reveal(), d.IsZero())
		}
		if d.String() != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.raw, d.String(), tt.want)
		}
		type rec struct {
			DSN secret.DSN `json:"dsn"`
		}
		b, err := json.Marshal(rec{d})
		if err != nil {
			t.Fatal(err)
		}
		wantJSON, _ := json.Marshal(struct {
			DSN string `json:"dsn"`
		}{tt.want})
		if string(b) != string(wantJSON) {
			t.Errorf("JSON %s, want %s", b, wantJSON)
		}
		text, _ := d.MarshalText()
		outs := map[string]string{
			"String": d.String(), "GoString": d.GoString(), "text": string(text), "json": string(b),
			"Sprint": fmt.Sprint(d), "Sprintln": fmt.Sprintln(d),
		}
		for _, verb := range []string{"%s", "%v", "%+v", "%#v", "%q", "%x", "%X", "%d", "%10s", "%-40v", "%.3s", "%t", "%p", "%T"} {
			outs[verb] = fmt.Sprintf(verb, d)
			outs["ptr "+verb] = fmt.Sprintf(verb, &d)
			outs["struct "+verb] = fmt.Sprintf(verb, rec{d})
		}
		for how, o := range outs {
			if strings.Contains(o, tt.pw) || strings.Contains(o, url.QueryEscape(tt.pw)) || strings.Contains(o, url.PathEscape(tt.pw)) {
				t.Errorf("%s of %q shows the password: %s", how, tt.raw, o)
			}
		}
		for _, verb := range []string{"%s", "%v", "%+v", "%x", "%d"} {
			if got := fmt.Sprintf(verb, d); got != tt.want {
				t.Errorf("Sprintf(%s) = %q, want %q", verb, got, tt.want)
			}
		}
		if got := fmt.Sprintf("%q", d); got != fmt.Sprintf("%q", tt.want) {
			t.Errorf("%%q = %s", got)
		}
		if got := fmt.Sprintf("%#v", d); got != "secret.DSN("+fmt.Sprintf("%q", tt.want)+")" {
			t.Errorf("%%#v = %s", got)
		}
		secrettest.NoLeak(t, rec{d}, tt.pw)
		secrettest.NoLeak(t, &rec{d}, tt.pw)
	}
}

func TestDSNTypeWithoutPassword(t *testing.T) {
	for _, raw := range []string{
		"postgres://bench@127.0.0.1:5432/bench?sslmode=disable",
		"postgresql://db/app",
		"host=/tmp/pg port=5433 user=bench dbname=bench",
		"",
	} {
		d := secret.NewDSN(raw)
		text, _ := d.MarshalText()
		if d.String() != raw || fmt.Sprint(d) != raw || string(text) != raw {
			t.Errorf("%q shown as %q / %q", raw, d.String(), text)
		}
		if d.IsZero() != (raw == "") {
			t.Errorf("IsZero(%q) = %v", raw, d.IsZero())
		}
	}
}

// TestDSNTypeJSONLikeString: the JSON of a DSN is the JSON of its
// redacted string, byte for byte, with and without HTML escaping, so that
// records written from a plain string field read the same.
func TestDSNTypeJSONLikeString(t *testing.T) {
	raw := "postgres://u:pw<&>@db/app?application_name=a&b<c>&password=x\u2028y"
	type typed struct {
		DSN secret.DSN `json:"dsn"`
	}
	type plain struct {
		DSN string `json:"dsn"`
	}
	shown := secret.Policy{}.DSN(raw, nil)
	a, _ := json.Marshal(typed{secret.NewDSN(raw)})
	b, _ := json.Marshal(plain{shown})
	if string(a) != string(b) {
		t.Errorf("json.Marshal: %s, want %s", a, b)
	}
	var ea, eb strings.Builder
	for _, c := range []struct {
		w *strings.Builder
		v any
	}{{&ea, typed{secret.NewDSN(raw)}}, {&eb, plain{shown}}} {
		enc := json.NewEncoder(c.w)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(c.v); err != nil {
			t.Fatal(err)
		}
	}
	if ea.String() != eb.String() {
		t.Errorf("Encoder without HTML escaping: %s, want %s", ea.String(), eb.String())
	}
}

func TestDSNTypeFlag(t *testing.T) {
	var d secret.DSN
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Var(&d, "dsn", "a DSN")
	if err := fs.Parse([]string{"--dsn", "postgres://u:s3cret-pw@db/app"}); err != nil {
		t.Fatal(err)
	}
	if d.Reveal() != "postgres://u:s3cret-pw@db/app" || fs.Lookup("dsn").Value.String() != "postgres://u:[redacted]@db/app" {
		t.Errorf("flag: %q shown as %q", d.Reveal(), fs.Lookup("dsn").Value.String())
	}
}

func TestDSNTypeReadsBack(t *testing.T) {
	var back struct {
		DSN secret.DSN `json:"dsn"`
	}
	if err := json.Unmarshal([]byte(`{"dsn":"postgres://u:[redacted]@db/app"}`), &back); err != nil || back.DSN.Reveal() != "postgres://u:[redacted]@db/app" {
		t.Errorf("Unmarshal: %q, %v", back.DSN.Reveal(), err)
	}
}

// TestTypedSecretsNeverPrint is the leak table of the two secret types, in
// a struct, by value and by pointer, nested and in a map.
func TestTypedSecretsNeverPrint(t *testing.T) {
	const pw = "Hunter2-s3cret"
	type creds struct {
		Token  secret.Value
		DSN    secret.DSN
		Ptr    *secret.DSN
		ByName map[string]secret.Value
		// fmt prints unexported fields by reflection, without their
		// methods: the pointer inside the types keeps these hidden too.
		token secret.Value
		dsn   secret.DSN
	}
	dsn := secret.NewDSN("postgres://bench:" + pw + "@db/app")
	for name, v := range map[string]any{
		"value":       secret.New(pw),
		"dsn":         dsn,
		"dsn kv":      secret.NewDSN("host=db password=" + pw),
		"struct":      creds{Token: secret.New(pw), DSN: dsn, Ptr: &dsn, ByName: map[string]secret.Value{"a": secret.New(pw)}, token: secret.New(pw), dsn: dsn},
		"struct ptr":  &creds{Token: secret.New(pw), DSN: dsn, token: secret.New(pw), dsn: dsn},
		"slice":       []secret.DSN{dsn, dsn},
		"map of dsns": map[secret.DSN]secret.Value{dsn: secret.New(pw)},
	} {
		t.Run(name, func(t *testing.T) { secrettest.NoLeak(t, v, pw) })
	}
}

// FuzzDSNType plants a password in every DSN form and fails when any
// rendering of the DSN type (fmt verbs, JSON, text) shows it outside the
// text the DSN holds anyway. Allocation is bounded by the input's size
// (internal/fuzzcheck).
func FuzzDSNType(f *testing.F) {
	f.Add("s3cret", "db")
	f.Add("a b'c\\d", "h1:5432,h2")
	f.Add("p@ss/w:rd", "127.0.0.1")
	f.Add("70617373", "x")
	fuzzcheck.Limit()
	f.Fuzz(func(t *testing.T, pw, host string) {
		if len(pw) < 4 || len(pw) > 256 || len(host) > 256 || strings.ContainsAny(pw, "\x00") ||
			strings.ContainsAny(host, "\x00 \t\n\r\f\v'\\/@?#=&%") || strings.Contains(secret.Placeholder, pw) {
			return
		}
		fuzzcheck.Bound(t, len(pw)+len(host), func() {
			quoted := "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(pw) + "'"
			userinfo := strings.TrimPrefix(url.UserPassword("u", pw).String(), "u:")
			for _, c := range []struct{ dsn, written string }{
				{"host=" + host + " user=u password=" + quoted + " dbname=app", quoted},
				{"password=" + quoted + " host=" + host, quoted},
				{"postgres://u:" + userinfo + "@" + host + "/app", userinfo},
				{"postgres://" + host + "/app?password=" + url.QueryEscape(pw), url.QueryEscape(pw)},
				{"postgresql://" + host + "/app?sslmode=disable&password=" + url.QueryEscape(pw) + "&user=u", url.QueryEscape(pw)},
			} {
				// What the DSN holds besides the password may spell it
				// (user "bench", password "bench"): that proves nothing.
				fixed := strings.Replace(c.dsn, c.written, "", 1)
				d := secret.NewDSN(c.dsn)
				j, err := json.Marshal(d)
				if err != nil {
					t.Fatalf("MarshalJSON(%q): %v", c.dsn, err)
				}
				text, _ := d.MarshalText()
				outs := []string{d.String(), d.GoString(), string(j), string(text)}
				for _, verb := range []string{"%s", "%v", "%+v", "%#v", "%q", "%x", "%d"} {
					outs = append(outs, fmt.Sprintf(verb, d))
				}
				// Quoting (%q, %#v, JSON) rewrites the fixed text as well.
				fj, _ := json.Marshal(fixed)
				fixedForms := fixed + "\x00" + strconv.Quote(fixed) + "\x00" + string(fj)
				for _, o := range outs {
					// the placeholder and the %#v wrapper's type name are
					// benchrig's text: a password may spell part of them
					// ("secr" is in "secret.DSN")
					o = strings.ReplaceAll(strings.ReplaceAll(o, secret.Placeholder, "\x00"), "secret.DSN", "\x00")
					for _, form := range []string{pw, c.written} {
						if len(form) >= 4 && strings.Contains(o, form) && !strings.Contains(fixedForms, form) &&
							!strings.Contains(secret.Placeholder, form) {
							t.Fatalf("DSN %q renders as %q, holding %q", c.dsn, o, form)
						}
					}
				}
			}
		})
	})
}
