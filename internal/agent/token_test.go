package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/secret/secrettest"
)

func TestLoadToken(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	short := filepath.Join(dir, "short")
	_ = os.WriteFile(good, []byte("a-token-of-enough-bytes\n"), 0o600)
	_ = os.WriteFile(short, []byte("tiny\n"), 0o600)
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == TokenEnv {
				return v
			}
			return ""
		}
	}
	cases := []struct {
		name, file, env, err string
	}{
		{"file", good, "", ""},
		{"env", "", "another-token-of-enough-bytes", ""},
		{"short file", short, "", "4 bytes, want 16"},
		{"short env", "", "tiny", "$" + TokenEnv + ": 4 bytes"},
		{"none", "", "", "no token"},
		{"missing file", filepath.Join(dir, "nope"), "", "token file"},
	}
	for _, c := range cases {
		tok, err := LoadToken(c.file, env(c.env))
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		case err != nil && (strings.Contains(err.Error(), "tiny")):
			t.Errorf("%s: the error shows the token: %v", c.name, err)
		}
		if err == nil && tok.String() != "[redacted]" {
			t.Errorf("%s: a token prints as %q", c.name, tok.String())
		}
	}
	a, _ := LoadToken(good, env(""))
	if !a.verify("agent", []byte("n"), a.mac("agent", []byte("n"))) || a.verify("coordinator", []byte("n"), a.mac("agent", []byte("n"))) {
		t.Error("a proof is not bound to its role")
	}
}

func TestTokenNeverPrints(t *testing.T) {
	const raw = "a-token-of-enough-bytes-7f3c"
	tok, err := NewToken([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []any{tok, &tok, Config{Token: tok}, &CoordinatorConfig{Token: tok}, struct{ tok Token }{tok}} {
		secrettest.NoLeak(t, v, raw)
	}
	if got := fmt.Sprintf("%s %v %q %#v", tok, tok, tok, tok); got != `[redacted] [redacted] "[redacted]" agent.Token("[redacted]")` {
		t.Errorf("printed as %s", got)
	}
	if b, err := json.Marshal(tok); err != nil || string(b) != `"[redacted]"` {
		t.Errorf("JSON %s, %v", b, err)
	}
	if !tok.verify("agent", []byte("n"), tok.mac("agent", []byte("n"))) {
		t.Error("the token does not verify its own proof")
	}
}
