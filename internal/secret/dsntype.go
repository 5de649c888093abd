package secret

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// DSN is a connection string (a PostgreSQL URL or libpq key=value form)
// that holds a credential. Printing it in any way (fmt verbs, JSON, text
// marshalling) shows the DSN with its passwords hidden by Policy{}.DSN,
// host, port, database, user and options still visible; the raw string is
// only returned by Reveal. Like Value, it holds the raw text behind a
// pointer, so that reflection (an unexported field, %p) shows an address.
type DSN struct{ p *string }

// NewDSN wraps a raw connection string.
func NewDSN(raw string) DSN { return DSN{p: hold(raw)} }

// Reveal returns the raw connection string, for the one place that must
// connect with it.
func (d DSN) Reveal() string {
	if d.p == nil {
		return ""
	}
	return *d.p
}

// IsZero reports whether no connection string is held.
func (d DSN) IsZero() bool { return d.p == nil }

// String is the DSN with its passwords replaced by Placeholder.
func (d DSN) String() string { return Policy{}.DSN(d.Reveal(), nil) }

// GoString is the %#v form: the redacted DSN, never the raw one.
func (d DSN) GoString() string { return "secret.DSN(" + strconv.Quote(d.String()) + ")" }

// Format prints the redacted DSN for every verb (%s, %v, %x, %d…; %q
// quotes it, %#v is GoString), as Value.Format prints its placeholder: no
// verb encodes the text, so none can spell the raw value another way.
func (d DSN) Format(f fmt.State, verb rune) {
	switch {
	case verb == 'v' && f.Flag('#'):
		fmt.Fprint(f, d.GoString())
	case verb == 'q':
		fmt.Fprint(f, strconv.Quote(d.String()))
	default:
		fmt.Fprint(f, d.String())
	}
}

// MarshalJSON writes the redacted DSN as a JSON string. HTML characters
// are left to the encoder: json.Marshal escapes them as it would for a
// plain string, an Encoder with SetEscapeHTML(false) keeps them.
func (d DSN) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d.String()); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// MarshalText writes the redacted DSN (YAML, map keys, encoding.Text users).
func (d DSN) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads a DSN back from JSON or text as it stands: a
// recorded DSN reads back redacted, as it was written.
func (d *DSN) UnmarshalText(b []byte) error { d.p = hold(string(b)); return nil }

// Set makes *DSN a command-line flag value (flag.Value, pflag.Value): the
// flag's argument is the raw connection string; the flag's default and
// help show String, redacted.
func (d *DSN) Set(raw string) error { d.p = hold(raw); return nil }

// Type names the flag's argument in help as a string flag's is named.
func (*DSN) Type() string { return "string" }

var (
	_ fmt.Stringer   = DSN{}
	_ fmt.GoStringer = DSN{}
	_ fmt.Formatter  = DSN{}
	_ json.Marshaler = DSN{}
)
