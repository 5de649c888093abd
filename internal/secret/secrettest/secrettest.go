// Package secrettest checks, in the tests beside each credential-holding
// type, that a value holding a secret never shows it: printed with the
// common fmt verbs and encoded as JSON. It is used by tests only.
package secrettest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Renderings returns v printed with %v, %+v, %#v, %s and %q, and encoded
// by json.Marshal (when it encodes), each named by its verb or "json".
func Renderings(v any) map[string]string {
	out := map[string]string{}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		out[verb] = fmt.Sprintf(verb, v)
	}
	if b, err := json.Marshal(v); err == nil {
		out["json"] = string(b)
	}
	return out
}

// NoLeak fails t when any rendering of v (Renderings) holds one of the raw
// secrets; JSON is also checked with the secrets JSON-escaped.
func NoLeak(t testing.TB, v any, raw ...string) {
	t.Helper()
	r := Renderings(v)
	for _, how := range []string{"%v", "%+v", "%#v", "%s", "%q", "json"} {
		out, ok := r[how]
		if !ok {
			continue
		}
		for _, s := range raw {
			if s == "" {
				continue
			}
			forms := []string{s}
			if b, err := json.Marshal(s); err == nil {
				forms = append(forms, strings.Trim(string(b), `"`))
			}
			for _, f := range forms {
				if strings.Contains(out, f) {
					t.Errorf("%T printed with %s shows the secret %q: %s", v, how, s, out)
				}
			}
		}
	}
}
