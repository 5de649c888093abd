package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"strings"

	"github.com/benchrig/benchrig/internal/plan"
	"github.com/benchrig/benchrig/internal/quick"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/suite"
)

// Secrets at benchrig's edges. One policy (package secret) decides what a
// credential is; one Set per invocation holds every credential benchrig
// was given or found, and scrubs them from everything it writes: the
// recorded command line (and the one ps shows, see reexec.go), stdout and
// stderr, error texts, and each results-file line.

// ArgPolicy is the redaction policy of a command line: the default one
// widened by its --secret-header and --secret-param names, read before
// cobra parses anything (so the earliest error is already redacted).
func ArgPolicy(args []string) secret.Policy {
	var headers, params []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		for _, f := range []struct {
			name string
			dst  *[]string
		}{{"--secret-header", &headers}, {"--secret-param", &params}} {
			switch {
			case a == f.name && i+1 < len(args):
				*f.dst = append(*f.dst, args[i+1])
			case strings.HasPrefix(a, f.name+"="):
				*f.dst = append(*f.dst, strings.TrimPrefix(a, f.name+"="))
			}
		}
	}
	return secret.NewPolicy(headers, params)
}

// dsnFlags are benchrig's flags whose value is a connection string.
var dsnFlags = map[string]bool{"--dsn": true, "--fill-from-pg-dsn": true}

// headerFlags are benchrig's flags whose value is a "Name: value" header.
var headerFlags = map[string]bool{"-H": true, "--header": true}

// RedactArgs returns benchrig's command line with every credential hidden
// by policy p, adding each one to found: the values of --dsn and
// --fill-from-pg-dsn (passwords), of secret -H headers (Authorization,
// X-Upstream-Key, a --secret-header name), credentials inside the --target
// command (--password=x, --db-password x, URLs), and the userinfo and
// secret query parameters of every URL (the http mode's, with or without
// a scheme). Other text of an argument is shown redacted, but only
// credentials of URLs, DSNs, headers and target commands are collected:
// free text (an --sql's key=1) is never taken for a secret.
func RedactArgs(args []string, p secret.Policy, found *secret.Set) []string {
	return RedactArgsFrom(args, p, found, nil)
}

// RedactArgsFrom is redactArgs telling from (when not nil) the flag of each
// argument a credential was taken from: its name ("--dsn", "-H",
// "--target"), or "" for a positional argument or another flag's value
// (a URL).
func RedactArgsFrom(args []string, p secret.Policy, found *secret.Set, from func(flag string)) []string {
	out := make([]string, len(args))
	redact := func(flag, v string, found *secret.Set) string {
		switch {
		case dsnFlags[flag]:
			return p.DSN(v, found)
		case headerFlags[flag]:
			return p.HeaderLine(v, found)
		case flag == "--target":
			return redactCommand(p, v, found)
		}
		return p.Text(p.URL(urlish(v), found)+rest(v), nil)
	}
	value := func(flag, v string) string {
		var mine secret.Set
		shown := redact(flag, v, &mine)
		if mine.Len() > 0 {
			redact(flag, v, found)
			if from != nil {
				if !dsnFlags[flag] && !headerFlags[flag] && flag != "--target" {
					flag = ""
				}
				from(flag)
			}
		}
		return shown
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, v, eq := strings.Cut(a, "=")
		switch {
		case strings.HasPrefix(a, "--") && eq:
			out[i] = name + "=" + value(name, v)
		case (dsnFlags[a] || headerFlags[a] || a == "--target") && i+1 < len(args):
			out[i], out[i+1] = a, value(a, args[i+1])
			i++
		case strings.HasPrefix(a, "-H") && len(a) > 2:
			out[i] = "-H" + value("-H", a[2:])
		default:
			out[i] = value("", a)
		}
	}
	return out
}

// urlish is the part of an argument that may be a URL: all of it, unless
// it holds a space (then nothing is taken as one).
func urlish(v string) string {
	if strings.ContainsAny(v, " \t\n") || !(strings.Contains(v, "://") || strings.Contains(v, "@") || strings.Contains(v, "?")) {
		return ""
	}
	return v
}

// rest is what urlish left of an argument.
func rest(v string) string {
	if urlish(v) == "" {
		return v
	}
	return ""
}

// redactCommand hides the credentials of a command line given as one
// string (--target 'node server.js --db-password x'): it is split as
// quick splits it, redacted as argv, and joined again quoted.
func redactCommand(p secret.Policy, cmd string, found *secret.Set) string {
	argv, err := quick.SplitCommand(cmd)
	if err != nil {
		return p.Text(cmd, nil)
	}
	shown := p.Argv(argv, found)
	changed := false
	for i := range argv {
		if shown[i] != argv[i] {
			changed = true
		}
	}
	if !changed {
		return cmd
	}
	for i, w := range shown {
		shown[i] = shellQuote(w)
	}
	return strings.Join(shown, " ")
}

// shellQuote quotes a word for SplitCommand when it needs quotes.
func shellQuote(w string) string {
	if w != "" && !strings.ContainsAny(w, " \t\n'\"\\$`*?;&|<>()#~") {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// suiteSecrets adds to found what a suite's record hides (by the suite's
// policy) and the credentials its targets read from the environment or
// files: DSNs (dsn_env: the password), RESP tokens (token_env,
// token_file). The variables they are read from are withheld from every
// process benchrig starts (secret.Withhold): they are benchrig's, and a
// sidecar is given its endpoint's token explicitly.
func suiteSecrets(s *suite.Suite, found *secret.Set, getenv func(string) string) {
	s.CollectSecrets(found)
	p := s.Policy()
	dsn := func(name string) {
		if name != "" {
			secret.Withhold(name)
			p.DSN(getenv(name), found)
		}
	}
	token := func(env, file string) {
		if env != "" {
			secret.Withhold(env)
			found.Add(getenv(env))
		}
		if file != "" {
			found.Add(readToken(file))
		}
	}
	for _, t := range s.Targets {
		if t == nil {
			continue
		}
		if pg := t.Postgres; pg != nil {
			dsn(pg.DSNEnv)
			if pg.RESP != nil {
				token(pg.RESP.TokenEnv, pg.RESP.TokenFile)
			}
		}
		if r := t.Redis; r != nil {
			token(r.TokenEnv, r.TokenFile)
			for _, f := range []*suite.FillFromPG{r.FillFromPG, r.SourcePG} {
				if f != nil {
					dsn(f.DSNEnv)
				}
			}
		}
	}
}

// readToken reads a token file as the drivers do (first 64 KiB, trimmed);
// an unreadable file holds no secret to scrub.
func readToken(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 64<<10))
	return strings.TrimSpace(string(b))
}

// scrubSink scrubs every sample of a run before it is stored (the results
// file) or shown: each text of the record in which a known secret stands
// as a token is replaced by the placeholder. It is the last line of
// defence, behind the redaction at the source.
type scrubSink struct {
	next interface {
		Done(key string) bool
		Append(s *result.Sample) error
	}
	set *secret.Set
}

// Done reports whether the wrapped sink holds the sample.
func (s scrubSink) Done(key string) bool { return s.next.Done(key) }

// Append scrubs the sample in place and stores it.
func (s scrubSink) Append(smp *result.Sample) error {
	scrubRecord(smp, s.set)
	return s.next.Append(smp)
}

// scrubRecord replaces the set's secrets in every string value of a record
// (a sample, a header), through its JSON form, so no field is forgotten;
// object keys are left alone. Nothing is done when the record holds none.
func scrubRecord[T any](rec *T, set *secret.Set) {
	if rec == nil || set.Len() == 0 {
		return
	}
	b, err := json.Marshal(rec)
	if err != nil || set.Scrub(string(b)) == string(b) {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return
	}
	clean, err := json.Marshal(scrubValue(v, set))
	if err != nil {
		return
	}
	var out T
	if json.Unmarshal(clean, &out) == nil {
		*rec = out
	}
}

// scrubValue scrubs the strings of a decoded JSON value.
func scrubValue(v any, set *secret.Set) any {
	switch x := v.(type) {
	case string:
		return set.Scrub(x)
	case []any:
		for i := range x {
			x[i] = scrubValue(x[i], set)
		}
	case map[string]any:
		for k := range x {
			x[k] = scrubValue(x[k], set)
		}
	}
	return v
}

// WithSecretNames adds the --secret-header and --secret-param names to a
// quick mode's suite document (secret_headers, secret_params).
func (a *App) WithSecretNames(d quick.Doc) quick.Doc {
	if len(a.SecretHeaders) > 0 {
		d["secret_headers"] = a.SecretHeaders
	}
	if len(a.SecretParams) > 0 {
		d["secret_params"] = a.SecretParams
	}
	return d
}

// resumePlan is the plan a --resume continues. The recorded suite has its
// credentials redacted, so when the suite file is still there with the
// recorded SHA-256 and, with the recorded overrides applied, resolves to
// the recorded suite, that file (credentials and all) is what runs;
// otherwise the recorded suite runs, with a warning when it holds redacted
// values (the targets then get the placeholder, not the credential).
func resumePlan(hdr *result.Header, stderr io.Writer) (*suite.Plan, error) {
	if s, err := suite.Load(hdr.Suite.File); err == nil && s.SHA256() == hdr.Suite.SHA256 {
		env, sets := map[string]string{}, []string(nil)
		for _, o := range hdr.Suite.Overrides {
			from, kv, _ := strings.Cut(o, ":")
			k, v, _ := strings.Cut(kv, "=")
			if from == "env" {
				env[k] = v
			} else {
				sets = append(sets, kv)
			}
		}
		if suite.ApplyOverrides(s, func(k string) string { return env[k] }, sets) == nil {
			if resolved, err := s.Resolved(); err == nil && sameJSON(resolved, hdr.Suite.Resolved) {
				if p, err := s.Plan(); err == nil {
					if hdr.Smoke {
						p = p.Smoke()
					}
					return p, nil
				}
			}
		}
	}
	if bytes.Contains(hdr.Suite.Resolved, []byte(secret.Placeholder)) {
		fmt.Fprintf(stderr, "benchrig: warning: the recorded suite holds redacted credentials (%s) and its file %q is gone or changed: the resumed samples get the placeholder in their place\n",
			secret.Placeholder, hdr.Suite.File)
	}
	return plan.Recorded(hdr.Suite.Resolved, hdr.Smoke)
}

// liveResume returns the plan of the suite this command was given (the
// quick mode's flags, or the suite file with this run's overrides) when it
// resolves, redacted and scrubbed as the header was, to the suite the file
// recorded: then the resumed samples get the real credentials, not the
// record's placeholders. nil when there is none or it differs.
func liveResume(s *suite.Suite, p *suite.Plan, hdr *result.Header, set *secret.Set) *suite.Plan {
	if s == nil || p == nil {
		return nil
	}
	resolved, err := s.Resolved()
	if err != nil {
		return nil
	}
	rec := struct {
		R json.RawMessage `json:"r"`
	}{resolved}
	scrubRecord(&rec, set)
	if !sameJSON(rec.R, hdr.Suite.Resolved) {
		return nil
	}
	if hdr.Smoke != p.IsSmoke {
		if !hdr.Smoke {
			return nil
		}
		p = p.Smoke()
	}
	return p
}

// sameJSON reports whether two JSON texts hold the same value, whatever
// their key order and escaping.
func sameJSON(a, b []byte) bool {
	decode := func(b []byte) (any, bool) {
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var v any
		return v, dec.Decode(&v) == nil
	}
	va, oka := decode(a)
	vb, okb := decode(b)
	return oka && okb && reflect.DeepEqual(va, vb)
}
