package secret

import (
	"fmt"
	"strconv"
)

// Placeholder replaces a secret wherever one is hidden from output.
const Placeholder = "[redacted]"

// Value is a credential (a password, token, DSN). Printing it in any way
// (fmt verbs, JSON, text marshalling) shows Placeholder; an empty Value
// shows as empty, so "no password" stays visible. The raw value is only
// returned by Reveal.
type Value struct{ s string }

// New wraps a raw secret.
func New(raw string) Value { return Value{s: raw} }

// Reveal returns the raw secret, for the one place that must send it.
func (v Value) Reveal() string { return v.s }

// IsZero reports whether no secret is held.
func (v Value) IsZero() bool { return v.s == "" }

// String is Placeholder, or "" for an empty Value.
func (v Value) String() string {
	if v.s == "" {
		return ""
	}
	return Placeholder
}

// GoString is the %#v form: it never shows the raw value either.
func (v Value) GoString() string { return "secret.Value(" + strconv.Quote(v.String()) + ")" }

// Format prints the placeholder for every verb (%s, %v, %q, %x, %d…).
func (v Value) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		fmt.Fprint(f, v.GoString())
	case verb == 'q':
		fmt.Fprint(f, strconv.Quote(v.String()))
	default:
		fmt.Fprint(f, v.String())
	}
}

// MarshalJSON writes the placeholder as a JSON string.
func (v Value) MarshalJSON() ([]byte, error) { return []byte(strconv.Quote(v.String())), nil }

// MarshalText writes the placeholder (YAML, map keys, encoding.Text users).
func (v Value) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

var (
	_ fmt.Stringer   = Value{}
	_ fmt.GoStringer = Value{}
	_ fmt.Formatter  = Value{}
)
