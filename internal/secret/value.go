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
//
// The raw value is held behind a pointer: fmt prints a struct's unexported
// fields by reflection, without asking their methods, and shows a pointer
// there only as an address; so a Value in an unexported field (or printed
// with %p) never shows the secret either. Values compare equal when they
// are the same Value (copies of one New), or both empty.
type Value struct{ p *string }

// New wraps a raw secret.
func New(raw string) Value { return Value{p: hold(raw)} }

// hold is the pointer a secret type keeps its raw text behind; nil for "".
func hold(raw string) *string {
	if raw == "" {
		return nil
	}
	return &raw
}

// Reveal returns the raw secret, for the one place that must send it.
func (v Value) Reveal() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}

// IsZero reports whether no secret is held.
func (v Value) IsZero() bool { return v.p == nil }

// String is Placeholder, or "" for an empty Value.
func (v Value) String() string {
	if v.p == nil {
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
