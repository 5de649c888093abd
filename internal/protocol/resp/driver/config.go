package resp

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	wire "github.com/benchrig/benchrig/internal/resp"
	"github.com/benchrig/benchrig/internal/secret"
)

// Commands the driver knows. A custom command is given by Config.Args.
const (
	CommandMGET   = "MGET"   // one MGET of Batch keys per request
	CommandGET    = "GET"    // one GET per request
	CommandSET    = "SET"    // one SET key value per request
	CommandCustom = "custom" // Config.Args, with placeholders substituted
)

// Config configures the driver. It is plain data: the resolved Config
// (Driver.Config) goes into results files. Secrets are never stored in it:
// the AUTH token is read from the file or environment variable named in Auth.
type Config struct {
	// Addr is the server's "host:port".
	Addr string `json:"addr"`
	// TLS configures TLS; off by default.
	TLS TLSConfig `json:"tls"`
	// Auth says where the AUTH token comes from; no AUTH when empty.
	Auth AuthConfig `json:"auth"`
	// Command is MGET (default), GET, SET or custom.
	Command string `json:"command"`
	// Args is the argv of a custom command, each argument a template with
	// the placeholders {id} (key number), {key} (KeyTemplate rendered) and
	// {db}; e.g. ["HGET", "{key}", "name"].
	Args []string `json:"args,omitempty"`
	// KeyTemplate renders a key from its number: {id} is the number, {db}
	// is DB. Default "item:{id}".
	KeyTemplate string `json:"key_template"`
	// DB fills {db} in templates, e.g. a database name in
	// `CRUD:{db}.public.items:{"id":{id}}`.
	DB string `json:"db,omitempty"`
	// Value is the SET value template ({id}, {db}). Default "value:{id}".
	Value string `json:"value,omitempty"`
	// Batch is the number of keys per MGET; 1 for other commands.
	Batch int `json:"batch"`
	// KeySpace is the number of distinct keys (1…KeySpace) the default key
	// source cycles through. Default 128.
	KeySpace int64 `json:"key_space"`
	// Keys gives the key number of the i-th key of request seq; a workload
	// sets it. Default: (seq*Batch+i) % KeySpace + 1.
	Keys func(seq uint64, i int) int64 `json:"-"`
	// DialTimeout bounds connection setup: dial, TLS handshake, AUTH and
	// the opening PING. Nanoseconds in JSON.
	DialTimeout time.Duration `json:"dial_timeout"`
	// Timeout bounds each Do (all of a pipeline's replies); 0 means none.
	// Nanoseconds in JSON.
	Timeout time.Duration `json:"timeout"`
	// NoPing skips the PING that Open sends to check that the peer speaks
	// RESP (and that AUTH was enough).
	NoPing bool `json:"no_ping,omitempty"`
	// ValidateSampled is the fraction (0…1) of requests whose values are
	// compared with Reference; the sample is a deterministic function of
	// the sequence number.
	ValidateSampled float64 `json:"validate_sampled,omitempty"`
	// Reference returns the value expected for a key number, and false
	// when the key should be missing. Required when ValidateSampled > 0.
	Reference func(key int64) ([]byte, bool) `json:"-"`
	// Limits bound what the reply parser accepts.
	Limits wire.Limits `json:"limits"`
}

// TLSConfig configures TLS to the server.
type TLSConfig struct {
	// Enabled turns TLS on.
	Enabled bool `json:"enabled"`
	// CAFile is a PEM file of certificates to trust instead of the
	// system's.
	CAFile string `json:"ca_file,omitempty"`
	// ServerName is the name to verify; default the host of Addr.
	ServerName string `json:"server_name,omitempty"`
	// InsecureSkipVerify accepts any certificate (encryption only).
	InsecureSkipVerify bool `json:"insecure_skip_verify,omitempty"`
}

// AuthConfig says how to authenticate. Only where the token comes from is
// recorded; the token itself never is.
type AuthConfig struct {
	// User is the ACL user for "AUTH user token"; empty sends "AUTH token".
	User string `json:"user,omitempty"`
	// TokenFile is a file holding the token (a trailing newline is
	// dropped).
	TokenFile string `json:"token_file,omitempty"`
	// TokenEnv is an environment variable holding the token.
	TokenEnv string `json:"token_env,omitempty"`
	// Token is the token itself, for callers that already hold it (tests,
	// an ephemeral server's password). Never serialized; printed, it
	// shows as the placeholder of package secret.
	Token secret.Value `json:"-"`
}

// Defaults.
const (
	DefaultKeyTemplate = "item:{id}"
	DefaultValue       = "value:{id}"
	DefaultKeySpace    = 128
	DefaultDialTimeout = 5 * time.Second
	DefaultTimeout     = 10 * time.Second
	// MaxPipeline is the most operations one Do accepts.
	MaxPipeline = 1024
)

// DefaultConfig returns a Config with every default filled in and no
// address.
func DefaultConfig() Config {
	return Config{
		Command:     CommandMGET,
		KeyTemplate: DefaultKeyTemplate,
		Batch:       1,
		KeySpace:    DefaultKeySpace,
		DialTimeout: DefaultDialTimeout,
		Timeout:     DefaultTimeout,
	}
}

// resolve fills defaults, checks every field and reads the token. Errors
// name the field and say what is accepted.
func (c Config) resolve() (Config, secret.Value, error) {
	d := DefaultConfig()
	if c.Addr == "" {
		return c, secret.Value{}, errors.New("addr: required (host:port)")
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		return c, secret.Value{}, fmt.Errorf("addr: want host:port, got %q", c.Addr)
	}
	switch strings.ToUpper(c.Command) {
	case "":
		c.Command = CommandMGET
		if len(c.Args) > 0 {
			c.Command = CommandCustom
		}
	case CommandMGET, CommandGET, CommandSET:
		c.Command = strings.ToUpper(c.Command)
	case strings.ToUpper(CommandCustom):
		c.Command = CommandCustom
	default:
		return c, secret.Value{}, fmt.Errorf("command: want MGET, GET, SET or custom (with args), got %q", c.Command)
	}
	if c.Command == CommandCustom && len(c.Args) == 0 {
		return c, secret.Value{}, errors.New("args: a custom command needs at least one argument")
	}
	if c.Command != CommandCustom && len(c.Args) > 0 {
		return c, secret.Value{}, fmt.Errorf("args: only for a custom command, not %s", c.Command)
	}
	if c.KeyTemplate == "" {
		c.KeyTemplate = d.KeyTemplate
	}
	if c.Command == CommandSET && c.Value == "" {
		c.Value = DefaultValue
	}
	if c.Batch == 0 {
		c.Batch = 1
	}
	switch {
	case c.Batch < 1 || c.Batch > wire.DefaultMaxArray-1:
		return c, secret.Value{}, fmt.Errorf("batch: want 1 to %d keys, got %d", wire.DefaultMaxArray-1, c.Batch)
	case c.Batch > 1 && c.Command != CommandMGET:
		return c, secret.Value{}, fmt.Errorf("batch: only MGET takes more than one key; %s takes 1, got %d", c.Command, c.Batch)
	}
	if c.Limits.MaxArray > 0 && c.Limits.MaxArray < c.Batch {
		return c, secret.Value{}, fmt.Errorf("limits.max_array: %d is less than batch %d; MGET replies would be rejected", c.Limits.MaxArray, c.Batch)
	}
	if c.KeySpace == 0 {
		c.KeySpace = d.KeySpace
	}
	if c.KeySpace < 1 {
		return c, secret.Value{}, fmt.Errorf("key_space: want 1 or more keys, got %d", c.KeySpace)
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = d.DialTimeout
	}
	if c.DialTimeout < 0 || c.Timeout < 0 {
		return c, secret.Value{}, fmt.Errorf("dial_timeout, timeout: want 0 or more, got %v and %v", c.DialTimeout, c.Timeout)
	}
	if c.ValidateSampled < 0 || c.ValidateSampled > 1 {
		return c, secret.Value{}, fmt.Errorf("validate_sampled: want a fraction from 0 to 1, got %v", c.ValidateSampled)
	}
	if c.ValidateSampled > 0 && c.Reference == nil {
		return c, secret.Value{}, errors.New("validate_sampled: needs a Reference to compare values with")
	}
	if c.ValidateSampled > 0 && c.Command != CommandMGET && c.Command != CommandGET {
		return c, secret.Value{}, fmt.Errorf("validate_sampled: only MGET and GET replies can be validated, not %s", c.Command)
	}
	if c.TLS.ServerName == "" && c.TLS.Enabled {
		c.TLS.ServerName, _, _ = net.SplitHostPort(c.Addr)
	}
	token, err := c.Auth.token()
	if err != nil {
		return c, secret.Value{}, err
	}
	return c, token, nil
}

// token reads the AUTH token from where the config says it is.
func (a AuthConfig) token() (secret.Value, error) {
	n := 0
	for _, set := range []bool{!a.Token.IsZero(), a.TokenFile != "", a.TokenEnv != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return secret.Value{}, errors.New("auth: set only one of token_file, token_env and Token")
	}
	switch {
	case a.TokenFile != "":
		b, err := os.ReadFile(a.TokenFile)
		if err != nil {
			return secret.Value{}, fmt.Errorf("auth.token_file: %w", err)
		}
		t := strings.TrimRight(string(b), "\r\n")
		if t == "" {
			return secret.Value{}, fmt.Errorf("auth.token_file: %s is empty", a.TokenFile)
		}
		return secret.New(t), nil
	case a.TokenEnv != "":
		t, ok := os.LookupEnv(a.TokenEnv)
		if !ok || t == "" {
			return secret.Value{}, fmt.Errorf("auth.token_env: environment variable %s is not set or empty", a.TokenEnv)
		}
		return secret.New(t), nil
	case a.User != "" && a.Token.IsZero():
		return secret.Value{}, errors.New("auth.user: needs a token (token_file or token_env)")
	}
	return a.Token, nil
}
