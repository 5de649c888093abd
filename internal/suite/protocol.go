package suite

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/goccy/go-yaml/ast"

	"github.com/benchrig/benchrig/internal/secret"
)

// Protocol names the wire protocol a path speaks and a target serves: the
// key its package registered (RegisterProtocol), which is also the key of
// the path's section in a suite (paths.NAME.KEY).
type Protocol string

// PathSpec is a path's request in its protocol: the type a protocol's
// package registers, decoded from the path's section (paths.NAME.KEY) by
// the suite's strict decoder (fields by their json tags, as every other
// section) and encoded in the recorded suite under the same key.
type PathSpec interface {
	// Defaults fills what the section left unset; at is the section.
	Defaults(at Field)
	// Validate reports every problem of the section through at.
	Validate(at Field)
	// BatchProblem says why the path cannot send batch keys per request
	// (batch > 1), or "" when it can. path is the path's name.
	BatchProblem(path string, batch int) string
	// Redacted is a copy with credentials hidden by p, each hidden value
	// added to found (which may be nil).
	Redacted(p secret.Policy, found *secret.Set) PathSpec
}

// StreamPacer is a PathSpec whose requests can be paced at a rate with
// more than one in flight per connection (HTTP/2's streams): a matrix with
// rates takes pipeline depths above 1 only for such paths.
type StreamPacer interface {
	PacesStreams() bool
}

// ProtocolInfo is what a protocol's package registers with the suite.
type ProtocolInfo struct {
	// Key is the protocol's name in suites and results: http, pg, resp.
	Key Protocol
	// NewPath returns an empty section of the protocol, a pointer to a
	// struct, for the decoder to fill.
	NewPath func() PathSpec
	// Generic: the generic target kinds (command, attach, address) serve
	// the protocol, its client needing nothing but an address; a server
	// kind's protocols are registered with RegisterKind.
	Generic bool
	// GenericDefault: what a generic target serves when it gives no
	// `serves` (one protocol sets it: http).
	GenericDefault bool
	// Keyed: a request reads keys of a workload (a batch of them), so
	// workloads and batches apply and a case's label names its keys.
	Keyed bool
	// ClientStats are the statistics the protocol's driver records itself
	// in every sample of the protocol, whatever serves it.
	ClientStats []string
}

var registry struct {
	sync.RWMutex
	protocols map[Protocol]ProtocolInfo
	kinds     map[string][]Protocol
}

// RegisterProtocol makes a protocol known to suites. It is called from the
// init function of the protocol's package (internal/protocol/KEY), which
// internal/protocol/all imports; registering a key twice panics.
func RegisterProtocol(p ProtocolInfo) {
	registry.Lock()
	defer registry.Unlock()
	if !pathKey(string(p.Key)) || p.NewPath == nil {
		panic(fmt.Sprintf("suite: bad protocol registration %q", p.Key))
	}
	if _, dup := registry.protocols[p.Key]; dup {
		panic(fmt.Sprintf("suite: protocol %q registered twice", p.Key))
	}
	if registry.protocols == nil {
		registry.protocols = map[Protocol]ProtocolInfo{}
	}
	registry.protocols[p.Key] = p
}

// RegisterKind adds p to the protocols a server kind (postgres, redis)
// serves. The kind's native protocol (native: true) is listed first: it
// is what the kind serves when a target gives no `serves`; the others
// follow in order of their keys, whatever the order of registration.
func RegisterKind(kind string, p Protocol, native bool) {
	registry.Lock()
	defer registry.Unlock()
	if registry.kinds == nil {
		registry.kinds = map[string][]Protocol{}
	}
	ps := append(registry.kinds[kind], p)
	first := ps[0]
	if native {
		first = p
	}
	sort.Slice(ps, func(i, j int) bool {
		if (ps[i] == first) != (ps[j] == first) {
			return ps[i] == first
		}
		return ps[i] < ps[j]
	})
	registry.kinds[kind] = ps
}

// LookupProtocol returns the registration of key.
func LookupProtocol(key Protocol) (ProtocolInfo, bool) {
	registry.RLock()
	defer registry.RUnlock()
	p, ok := registry.protocols[key]
	return p, ok
}

// Protocols lists the registered protocols in order of their keys.
func Protocols() []Protocol {
	registry.RLock()
	defer registry.RUnlock()
	return sortedProtocols(registry.protocols)
}

func sortedProtocols(m map[Protocol]ProtocolInfo) []Protocol {
	out := make([]Protocol, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// protocolNames are the registered keys as strings, in order.
func protocolNames() []string {
	var out []string
	for _, p := range Protocols() {
		out = append(out, string(p))
	}
	return out
}

// registered reports whether p is a registered protocol.
func registered(p Protocol) bool { _, ok := LookupProtocol(p); return ok }

// keyedList names the protocols whose requests read keys: "pg and resp".
func keyedList() string {
	var out []string
	for _, p := range Protocols() {
		if p.Keyed() {
			out = append(out, string(p))
		}
	}
	return andList(out)
}

// andList joins names as "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// Keyed reports whether a request of protocol p reads workload keys.
func (p Protocol) Keyed() bool {
	info, _ := LookupProtocol(p)
	return info.Keyed
}

// Path is one named request sent to a target: one section of one
// registered protocol, which decides the path's protocol.
type Path struct {
	// Spec is the request, in its protocol; nil when the path names none.
	Spec PathSpec
	// Assert are assertions (see ParseExpr) every sample of the path must
	// satisfy, e.g. cache_misses == 0; one that fails makes the sample
	// UNHEALTHY with the expression and both sides' values.
	Assert []string
	// proto is the key of Spec; given lists every protocol section the
	// suite gave (more than one is an error).
	proto Protocol
	given []string
}

// NewPath returns a path of protocol key with spec as its request.
func NewPath(key Protocol, spec PathSpec) *Path {
	return &Path{Spec: spec, proto: key, given: []string{string(key)}}
}

// Protocol returns the path's protocol, "" when it names none.
func (p *Path) Protocol() Protocol {
	if p.Spec == nil {
		return ""
	}
	return p.proto
}

// decodeYAML decodes a path: assert, and one section per registered
// protocol key.
func (p *Path) decodeYAML(d *decoder, field string, n ast.Node) {
	es, ok := d.entries(field, n)
	if !ok {
		return
	}
	for _, e := range es {
		f := child(field, e.key)
		if e.key == "assert" {
			d.record(f, e.at, e.value)
			d.decode(f, e.value, reflect.ValueOf(&p.Assert).Elem())
			continue
		}
		info, known := LookupProtocol(Protocol(e.key))
		if !known {
			d.errAt(e.at, field, "unknown key %q; accepted: %s", e.key, strings.Join(append(protocolNames(), "assert"), ", "))
			continue
		}
		d.record(f, e.at, e.value)
		if _, isNull := d.peek(e.value).(*ast.NullNode); isNull {
			continue
		}
		spec := info.NewPath()
		d.decode(f, e.value, reflect.ValueOf(spec).Elem())
		p.given = append(p.given, e.key)
		if p.Spec == nil {
			p.Spec, p.proto = spec, info.Key
		}
	}
}

// MarshalJSON encodes the path as a suite writes it: {"KEY": {…},
// "assert": […]}.
func (p Path) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	if p.Spec != nil {
		k, _ := json.Marshal(string(p.proto))
		v, err := json.Marshal(p.Spec)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	if len(p.Assert) > 0 {
		if p.Spec != nil {
			b.WriteByte(',')
		}
		v, err := json.Marshal(p.Assert)
		if err != nil {
			return nil, err
		}
		b.WriteString(`"assert":`)
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Field is where a protocol's section sits in a suite, and the suite's
// checks of its values: problems reported through it carry the field's
// path and the value's file position, as every other problem of the suite.
type Field struct {
	l    *located
	path string
}

// Path is the field's path in the suite, e.g. paths.home.http.
func (f Field) Path() string { return f.path }

// Child is the field key of f.
func (f Field) Child(key string) Field { return Field{f.l, child(f.path, key)} }

// Index is the list element i of f.
func (f Field) Index(i int) Field { return Field{f.l, index(f.path, i)} }

// Errf reports a problem of the field.
func (f Field) Errf(format string, args ...any) { f.l.errf(f.path, format, args...) }

// ErrOff reports a problem at byte off of the field's text value.
func (f Field) ErrOff(text string, off int, format string, args ...any) {
	f.l.errOff(f.path, text, off, format, args...)
}

// Present reports whether the suite gave the field.
func (f Field) Present() bool { return f.l.present(f.path) }

// Exclusive reports more than one of the named fields set: rule says why
// they exclude each other.
func (f Field) Exclusive(names []string, set []bool, rule string) {
	f.l.exclusive(f.path, setNames(names, set...), rule)
}

// CheckURL checks an absolute URL (http://, https://, h2c://).
func (f Field) CheckURL(raw string) { f.l.checkPathURL(f.path, raw) }

// CheckTemplate checks the placeholders of a path template: {port} and
// {id}.
func (f Field) CheckTemplate(s string) { f.l.checkPlaceholders(f.path, s, pathPlaceholders, nil) }

// CheckHeaders checks HTTP header names and values (one line each).
func (f Field) CheckHeaders(h map[string]string) { f.l.checkHeaders(f.path, h) }

// CheckTimeout checks an optional per-request timeout: 0s (none) to an
// hour.
func (f Field) CheckTimeout(d *Duration) { f.l.checkTimeout(f.path, d) }

// CheckMethod checks an HTTP method.
func (f Field) CheckMethod(m string) { f.l.checkMethod(f.path, m) }

// CheckStatus checks an HTTP status (100–599).
func (f Field) CheckStatus(s int) { f.l.checkStatus(f.path, s) }

// CheckOneOf reports v when it is none of accepted ("" is accepted when
// the first accepted value is "").
func (f Field) CheckOneOf(v string, accepted ...string) {
	var shown []string
	for _, a := range accepted {
		if v == a {
			return
		}
		if a != "" {
			shown = append(shown, a)
		}
	}
	f.Errf("must be %s, got %q", orList(shown), v)
}

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
