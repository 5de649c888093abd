package resp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/secret/secrettest"
)

func TestConfigErrorsNameTheField(t *testing.T) {
	ref := func(int64) ([]byte, bool) { return nil, false }
	tests := []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"no addr", func(c *Config) { c.Addr = "" }, "addr: required"},
		{"bad addr", func(c *Config) { c.Addr = "localhost" }, `addr: want host:port, got "localhost"`},
		{"bad command", func(c *Config) { c.Command = "HGETALL" }, `command: want MGET, GET, SET or custom`},
		{"custom without args", func(c *Config) { c.Command = "custom" }, "args: a custom command needs"},
		{"args with MGET", func(c *Config) { c.Args = []string{"PING"} }, "args: only for a custom command"},
		{"negative batch", func(c *Config) { c.Batch = -1 }, "batch: want 1 to"},
		{"batch for GET", func(c *Config) { c.Command = "GET"; c.Batch = 4 }, "batch: only MGET"},
		{"key space", func(c *Config) { c.KeySpace = -3 }, "key_space: want 1 or more"},
		{"timeouts", func(c *Config) { c.Timeout = -1 }, "timeout"},
		{"fraction", func(c *Config) { c.ValidateSampled = 1.5 }, "validate_sampled: want a fraction"},
		{"no reference", func(c *Config) { c.ValidateSampled = 0.5 }, "validate_sampled: needs a Reference"},
		{"validate SET", func(c *Config) { c.Command = "SET"; c.ValidateSampled = 1; c.Reference = ref }, "only MGET and GET"},
		{"max array", func(c *Config) { c.Batch = 64; c.Limits.MaxArray = 10 }, "limits.max_array: 10 is less than batch 64"},
		{"two token sources", func(c *Config) { c.Auth.TokenEnv = "X"; c.Auth.TokenFile = "y" }, "auth: set only one"},
		{"missing env", func(c *Config) { c.Auth.TokenEnv = "BENCHRIG_TEST_NO_SUCH_VAR" }, "auth.token_env: environment variable BENCHRIG_TEST_NO_SUCH_VAR is not set"},
		{"missing file", func(c *Config) { c.Auth.TokenFile = "/nonexistent/token" }, "auth.token_file: open /nonexistent/token"},
		{"user without token", func(c *Config) { c.Auth.User = "bob" }, "auth.user: needs a token"},
		{"key template without id", func(c *Config) { c.KeyTemplate = "constant" }, "key_template: \"constant\" has no {id}"},
		{"db missing", func(c *Config) { c.KeyTemplate = "{db}:{id}" }, "key_template: uses {db} but db is not set"},
		{"ca file missing", func(c *Config) { c.TLS = TLSConfig{Enabled: true, CAFile: "/nonexistent/ca.pem"} }, "tls.ca_file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Addr = "127.0.0.1:6379"
			tt.mod(&cfg)
			_, err := New(cfg)
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

func TestCAFileWithoutPEM(t *testing.T) {
	f := filepath.Join(t.TempDir(), "ca.pem")
	os.WriteFile(f, []byte("not a certificate"), 0o600)
	_, err := New(Config{Addr: "127.0.0.1:1", TLS: TLSConfig{Enabled: true, CAFile: f}})
	if err == nil || !strings.Contains(err.Error(), "holds no PEM certificate") {
		t.Fatalf("got %v", err)
	}
}

func TestConfigDefaultsAndTokenNeverSerialized(t *testing.T) {
	const tok = "tok-3f9a1c"
	f := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(f, []byte(tok+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := New(Config{Addr: "127.0.0.1:6379", Auth: AuthConfig{TokenFile: f}, TLS: TLSConfig{Enabled: true}})
	if err != nil {
		t.Fatal(err)
	}
	if d.token.Reveal() != tok {
		t.Fatalf("token read from file: %q", d.token.Reveal())
	}
	cfg := d.Config()
	if cfg.Command != CommandMGET || cfg.Batch != 1 || cfg.KeySpace != DefaultKeySpace ||
		cfg.KeyTemplate != DefaultKeyTemplate || cfg.DialTimeout != DefaultDialTimeout || cfg.TLS.ServerName != "127.0.0.1" {
		t.Fatalf("defaults not filled: %+v", cfg)
	}
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), tok) {
		t.Fatalf("token in JSON: %s", js)
	}
	if !strings.Contains(string(js), `"token_file":"`+f+`"`) {
		t.Fatalf("JSON does not record where the token came from: %s", js)
	}

	// A token set directly is not serialized either, nor printed.
	cfg.Auth = AuthConfig{Token: secret.New(tok)}
	js, _ = json.Marshal(cfg)
	if strings.Contains(string(js), tok) {
		t.Fatalf("token in JSON: %s", js)
	}
	for _, v := range []any{cfg, &cfg, cfg.Auth, d} {
		secrettest.NoLeak(t, v, tok)
	}

	t.Setenv("BENCHRIG_TEST_TOKEN", tok)
	d, err = New(Config{Addr: "127.0.0.1:6379", Auth: AuthConfig{TokenEnv: "BENCHRIG_TEST_TOKEN"}})
	if err != nil || d.token.Reveal() != tok {
		t.Fatalf("token from env: %q, %v", d.token.Reveal(), err)
	}
	if got := d.redact("WRONGPASS " + tok); strings.Contains(got, tok) {
		t.Fatalf("redact left the token: %q", got)
	}
}

func TestTemplates(t *testing.T) {
	tests := []struct {
		tmpl, db string
		id       int64
		want     string
	}{
		{"item:{id}", "", 42, "item:42"},
		{`CRUD:{db}.public.items:{"id":{id}}`, "bench", 7, `CRUD:bench.public.items:{"id":7}`},
		{"{id}", "", -3, "-3"},
		{"a{b}{id}{c}{id}", "", 5, "a{b}5{c}5"},
		{"no holes", "", 1, "no holes"},
		{"{", "", 1, "{"},
		{"{key}", "", 1, "{key}"}, // {key} is literal in a key template
	}
	for _, tt := range tests {
		tp, err := compileTemplate("key_template", tt.tmpl, tt.db, false)
		if err != nil {
			t.Fatalf("%q: %v", tt.tmpl, err)
		}
		if got := string(tp.appendTo(nil, tt.id, nil)); got != tt.want {
			t.Errorf("%q with id %d: got %q, want %q", tt.tmpl, tt.id, got, tt.want)
		}
	}
	key, _ := compileTemplate("key_template", "user:{id}", "", false)
	arg, err := compileTemplate("args[1]", "{key}/{id}", "", true)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(arg.appendTo(nil, 9, &key)); got != "user:9/9" {
		t.Fatalf("{key} template: got %q", got)
	}
}

func TestDefaultKeys(t *testing.T) {
	d, err := New(Config{Addr: "127.0.0.1:1", Batch: 4, KeySpace: 10})
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for seq := uint64(0); seq < 3; seq++ {
		for i := 0; i < 4; i++ {
			got = append(got, d.keys(seq, i))
		}
	}
	want := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 1, 2}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("keys: got %v, want %v", got, want)
		}
	}
}

func TestSampled(t *testing.T) {
	for _, f := range []float64{0, 0.1, 0.5, 1} {
		d := &Driver{cfg: Config{ValidateSampled: f}}
		n := 0
		const total = 100000
		for seq := uint64(0); seq < total; seq++ {
			if d.sampled(seq) {
				n++
			}
		}
		got := float64(n) / total
		if got < f-0.01 || got > f+0.01 {
			t.Errorf("fraction %v: sampled %v", f, got)
		}
	}
}

// TestAddrNamesTheServer: the driver says its server's address.
func TestAddrNamesTheServer(t *testing.T) {
	c := DefaultConfig()
	c.Addr = "127.0.0.1:6380"
	d, err := New(c)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Addr(); got != "127.0.0.1:6380" {
		t.Errorf("Addr = %q, want 127.0.0.1:6380", got)
	}
}
