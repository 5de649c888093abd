package agent

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/benchrig/benchrig/internal/secret"
)

// TokenEnv is the environment variable an agent or coordinator reads the
// shared token from when no token file is given.
const TokenEnv = "BENCHRIG_AGENT_TOKEN"

// Token bounds, in bytes (after trimming a file's trailing newline).
const (
	MinTokenBytes = 16
	MaxTokenBytes = 4096
)

// Token is the shared secret of a coordinator and its agents. It holds
// a secret.Value: printed (String, every fmt verb, %#v) or encoded (JSON,
// text) it shows the placeholder of package secret, never the value.
type Token struct{ v secret.Value }

// String is the placeholder ("" for no token).
func (t Token) String() string { return t.v.String() }

// GoString is the %#v form, redacted.
func (t Token) GoString() string { return "agent.Token(" + strconv.Quote(t.v.String()) + ")" }

// Format prints the token as secret.Value does: the placeholder for every
// verb.
func (t Token) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		fmt.Fprint(f, t.GoString())
		return
	}
	t.v.Format(f, verb)
}

// MarshalJSON writes the placeholder as a JSON string.
func (t Token) MarshalJSON() ([]byte, error) { return t.v.MarshalJSON() }

// MarshalText writes the placeholder.
func (t Token) MarshalText() ([]byte, error) { return t.v.MarshalText() }

// LoadToken reads the token from file (when not "") or else from the
// environment variable TokenEnv, looked up with getenv. Errors name the
// source, never the value.
func LoadToken(file string, getenv func(string) string) (Token, error) {
	var b []byte
	src := file
	if file != "" {
		st, err := os.Stat(file)
		if err != nil {
			return Token{}, fmt.Errorf("token file: %w", err)
		}
		if st.Size() > MaxTokenBytes+2 {
			return Token{}, fmt.Errorf("token file %s: %d bytes, at most %d accepted", file, st.Size(), MaxTokenBytes)
		}
		if b, err = os.ReadFile(file); err != nil {
			return Token{}, fmt.Errorf("token file: %w", err)
		}
		b = bytes.TrimRight(b, "\r\n")
	} else {
		src = "$" + TokenEnv
		b = []byte(getenv(TokenEnv))
		if len(b) == 0 {
			return Token{}, fmt.Errorf("no token: give --token-file FILE or set %s (at least %d bytes, the same on the coordinator and every agent)", TokenEnv, MinTokenBytes)
		}
	}
	if len(b) < MinTokenBytes || len(b) > MaxTokenBytes {
		return Token{}, fmt.Errorf("token from %s: %d bytes, want %d to %d", src, len(b), MinTokenBytes, MaxTokenBytes)
	}
	return Token{v: secret.New(string(b))}, nil
}

// NewToken wraps raw bytes as a token (tests, --local runs).
func NewToken(b []byte) (Token, error) {
	if len(b) < MinTokenBytes || len(b) > MaxTokenBytes {
		return Token{}, fmt.Errorf("token: %d bytes, want %d to %d", len(b), MinTokenBytes, MaxTokenBytes)
	}
	return Token{v: secret.New(string(b))}, nil
}

// RandomToken returns a fresh random token (for --local).
func RandomToken() (Token, []byte) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	hex := fmt.Appendf(nil, "%x", b)
	return Token{v: secret.New(string(hex))}, hex
}

// mac is the proof of holding the token for a nonce, bound to a role so a
// proof cannot be reflected back.
func (t Token) mac(role string, nonce []byte) []byte {
	h := hmac.New(sha256.New, []byte(t.v.Reveal()))
	h.Write([]byte(role))
	h.Write(nonce)
	return h.Sum(nil)
}

// verify checks a proof in constant time.
func (t Token) verify(role string, nonce, proof []byte) bool {
	return hmac.Equal(t.mac(role, nonce), proof)
}

func (t Token) empty() bool { return t.v.IsZero() }

func nonce() []byte {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return b
}

// ErrRefused is what an agent gets from a coordinator that refused it.
var ErrRefused = errors.New("refused by the coordinator")
