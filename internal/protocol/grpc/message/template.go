package message

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// MaxTemplate bounds the JSON text of a template, in bytes.
const MaxTemplate = 4 << 20

// whereID says where {id} may go, for the errors about where it may not.
const whereID = `{id} may stand only for the whole value of a top-level integer field ({"id": {id}} or {"id": "{id}"}) or inside the text of a top-level string or bytes field ({"name": "user-{id}"})`

// Template is a request message built from JSON (protojson syntax) in
// which the placeholder {id} may stand for a key number. It is made once
// (NewTemplate) and rendered per key without allocation (Append).
type Template struct {
	md     protoreflect.MessageDescriptor
	types  *dynamicpb.Types
	base   *dynamicpb.Message // the message without its {id} fields
	prefix []byte             // base, marshaled
	fields []idField
	text   bool // some field renders the id as text
}

// idField is a top-level field of a template whose value is the key
// number, or a text with it.
type idField struct {
	fd    protoreflect.FieldDescriptor
	tag   []byte   // the field's tag, encoded
	parts []string // string and bytes: the text around each {id}
	fixed int      // string and bytes: the length of parts together
}

// NewTemplate compiles the JSON text of a message of type md. {id} may
// appear (a) as the whole value of a top-level integer field (int32,
// int64, uint32, uint64, sint32, sint64, fixed32, fixed64, sfixed32,
// sfixed64), unquoted {"id": {id}} or quoted {"id": "{id}"}, or (b)
// anywhere inside the string value of a top-level string or bytes field
// ({"name": "user-{id}"}; for a bytes field the text's UTF-8 bytes, not
// base64). Anywhere else is an error naming the field's path. Unknown
// fields and malformed JSON are errors too, and the text is at most
// MaxTemplate bytes.
func NewTemplate(md protoreflect.MessageDescriptor, jsonText string) (*Template, error) {
	if len(jsonText) > MaxTemplate {
		return nil, fmt.Errorf("the JSON of a %s is %d bytes, over the bound of %d", md.FullName(), len(jsonText), MaxTemplate)
	}
	holes, err := scanHoles(jsonText)
	if err != nil {
		return nil, err
	}
	t := &Template{md: md, types: typesOf(md)}
	fields := md.Fields()
	for _, h := range holes {
		if !h.field {
			if h.path == "" {
				return nil, fmt.Errorf("{id} as the whole message: %s", whereID)
			}
			return nil, fmt.Errorf("{id} at %s: %s", h.path, whereID)
		}
		fd := fields.ByJSONName(h.key)
		if fd == nil {
			fd = fields.ByTextName(h.key)
		}
		if fd == nil {
			return nil, fmt.Errorf("unknown field %q of %s", h.key, md.FullName())
		}
		f, err := newIDField(fd, h)
		if err != nil {
			return nil, err
		}
		t.fields = append(t.fields, f)
		t.text = t.text || f.parts != nil
	}
	// protojson parses the rest, each hole made a null (the field left
	// unset) padded to the hole's length so protojson's positions hold.
	text := jsonText
	if len(holes) > 0 {
		var b strings.Builder
		b.Grow(len(jsonText))
		at := 0
		for _, h := range holes {
			b.WriteString(jsonText[at:h.start])
			b.WriteString("null")
			b.WriteString(strings.Repeat(" ", h.end-h.start-len("null")))
			at = h.end
		}
		b.WriteString(jsonText[at:])
		text = b.String()
	}
	t.base = dynamicpb.NewMessage(md)
	if err := (protojson.UnmarshalOptions{Resolver: t.types, AllowPartial: true}).Unmarshal([]byte(text), t.base); err != nil {
		return nil, fmt.Errorf("the JSON of a %s: %v", md.FullName(), err)
	}
	for i, f := range t.fields {
		od := f.fd.ContainingOneof()
		if od == nil || od.IsSynthetic() {
			continue
		}
		if set := t.base.WhichOneof(od); set != nil {
			return nil, fmt.Errorf("fields %s and %s are both set, and are of the same oneof %s", set.Name(), f.fd.Name(), od.Name())
		}
		for _, g := range t.fields[:i] {
			if g.fd.ContainingOneof() == od {
				return nil, fmt.Errorf("fields %s and %s are both set, and are of the same oneof %s", g.fd.Name(), f.fd.Name(), od.Name())
			}
		}
	}
	// The base lacks its {id} fields, which proto2 may require: whether
	// the whole message has its required fields is asked of the message
	// for id 0 (which every field holds).
	m0, err := t.Message(0)
	if err != nil {
		return nil, err
	}
	if err := proto.CheckInitialized(m0); err != nil {
		return nil, fmt.Errorf("a %s: %v", md.FullName(), err)
	}
	t.prefix, err = proto.MarshalOptions{Deterministic: true, AllowPartial: true}.Marshal(t.base)
	if err != nil {
		return nil, fmt.Errorf("a %s: %v", md.FullName(), err)
	}
	return t, nil
}

// newIDField checks that field fd may hold the hole h, and returns how to
// render it.
func newIDField(fd protoreflect.FieldDescriptor, h hole) (idField, error) {
	f := idField{fd: fd}
	kind := fd.Kind()
	if fd.IsList() || fd.IsMap() {
		return f, fmt.Errorf("{id} in field %s (%s): %s", fd.Name(), describe(fd), whereID)
	}
	switch {
	case intKind(kind):
		if h.quoted && h.text != placeholder {
			return f, fmt.Errorf("{id} in field %s (%s) must be its whole value ({id} or \"{id}\"), not %q", fd.Name(), kind, h.text)
		}
		f.tag = protowire.AppendTag(nil, fd.Number(), wireType(kind))
	case kind == protoreflect.StringKind || kind == protoreflect.BytesKind:
		if !h.quoted {
			return f, fmt.Errorf("{id} in field %s (%s) must be inside quotes (\"{id}\", \"user-{id}\")", fd.Name(), kind)
		}
		f.tag = protowire.AppendTag(nil, fd.Number(), protowire.BytesType)
		f.parts = strings.Split(h.text, placeholder)
		for _, p := range f.parts {
			f.fixed += len(p)
		}
	default:
		return f, fmt.Errorf("{id} in field %s (%s): %s", fd.Name(), describe(fd), whereID)
	}
	return f, nil
}

// describe names a field's type for an error: "double", "repeated int64",
// "map<string, int64>", "message pkg.Type".
func describe(fd protoreflect.FieldDescriptor) string {
	switch {
	case fd.IsMap():
		return fmt.Sprintf("map<%s, %s>", describe(fd.MapKey()), describe(fd.MapValue()))
	case fd.IsList():
		return "repeated " + describeKind(fd)
	}
	return describeKind(fd)
}

func describeKind(fd protoreflect.FieldDescriptor) string {
	switch fd.Kind() {
	case protoreflect.MessageKind, protoreflect.GroupKind:
		return "message " + string(fd.Message().FullName())
	case protoreflect.EnumKind:
		return "enum " + string(fd.Enum().FullName())
	}
	return fd.Kind().String()
}

// intKind reports whether a field of kind k may hold the key number.
func intKind(k protoreflect.Kind) bool {
	switch k {
	case protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Uint32Kind, protoreflect.Uint64Kind,
		protoreflect.Sint32Kind, protoreflect.Sint64Kind, protoreflect.Fixed32Kind, protoreflect.Fixed64Kind,
		protoreflect.Sfixed32Kind, protoreflect.Sfixed64Kind:
		return true
	}
	return false
}

// wireType is the wire type of an integer kind.
func wireType(k protoreflect.Kind) protowire.Type {
	switch k {
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind:
		return protowire.Fixed32Type
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
		return protowire.Fixed64Type
	}
	return protowire.VarintType
}

// maxOf is the largest key number a field of integer kind k holds.
func maxOf(k protoreflect.Kind) int64 {
	switch k {
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return math.MaxInt32
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return math.MaxUint32
	}
	return math.MaxInt64
}

// Keyed reports whether the template has {id}.
func (t *Template) Keyed() bool { return len(t.fields) > 0 }

// Check says whether every key number in 0..maxID fits the template's
// integer fields, naming the first field that some id would not fit and
// its bound. Append does not check: call Check with the largest id first.
func (t *Template) Check(maxID int64) error {
	if maxID < 0 {
		return fmt.Errorf("the largest id is %d: ids are 0 or more", maxID)
	}
	for _, f := range t.fields {
		if k := f.fd.Kind(); intKind(k) && maxID > maxOf(k) {
			return fmt.Errorf("{id} in field %s (%s): ids run to %d, the field holds at most %d", f.fd.Name(), k, maxID, maxOf(k))
		}
	}
	return nil
}

// decimalLen is the length of v in decimal.
func decimalLen(v int64) int {
	n, u := 1, uint64(v)
	if v < 0 {
		n, u = 2, -u
	}
	for ; u >= 10; u /= 10 {
		n++
	}
	return n
}

// size is the length of the field's encoding for key id, whose decimal
// text is digits long.
func (f *idField) size(id int64, digits int) int {
	n := len(f.tag)
	switch f.fd.Kind() {
	case protoreflect.StringKind, protoreflect.BytesKind:
		l := f.fixed + (len(f.parts)-1)*digits
		return n + protowire.SizeVarint(uint64(l)) + l
	case protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		return n + protowire.SizeVarint(protowire.EncodeZigZag(id))
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind:
		return n + 4
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
		return n + 8
	}
	return n + protowire.SizeVarint(uint64(id))
}

// appendTo appends the field's encoding for key id.
func (f *idField) appendTo(dst []byte, id int64, digits int) []byte {
	dst = append(dst, f.tag...)
	switch f.fd.Kind() {
	case protoreflect.StringKind, protoreflect.BytesKind:
		dst = protowire.AppendVarint(dst, uint64(f.fixed+(len(f.parts)-1)*digits))
		for i, p := range f.parts {
			if i > 0 {
				dst = strconv.AppendInt(dst, id, 10)
			}
			dst = append(dst, p...)
		}
		return dst
	case protoreflect.Sint32Kind, protoreflect.Sint64Kind:
		return protowire.AppendVarint(dst, protowire.EncodeZigZag(id))
	case protoreflect.Fixed32Kind, protoreflect.Sfixed32Kind:
		return protowire.AppendFixed32(dst, uint32(id))
	case protoreflect.Fixed64Kind, protoreflect.Sfixed64Kind:
		return protowire.AppendFixed64(dst, uint64(id))
	}
	return protowire.AppendVarint(dst, uint64(id))
}

// Append appends the gRPC message for key id to dst and returns it: the
// compressed flag 0, the 4-byte big-endian length, then the protobuf
// bytes. It does not allocate when dst has room. The bytes are the
// template's fields without {id}, then each {id} field's encoding (which
// protobuf decodes to the same message: fields may come in any order).
// Append checks nothing: an id out of a field's range (see Check) is
// encoded as is, and the server would read it cut to the field's width.
func (t *Template) Append(dst []byte, id int64) []byte {
	digits := 0
	if t.text {
		digits = decimalLen(id)
	}
	n := len(t.prefix)
	for i := range t.fields {
		n += t.fields[i].size(id, digits)
	}
	dst = append(dst, 0)
	dst = binary.BigEndian.AppendUint32(dst, uint32(n))
	dst = append(dst, t.prefix...)
	for i := range t.fields {
		dst = t.fields[i].appendTo(dst, id, digits)
	}
	return dst
}

// Message returns the message for key id as a dynamicpb message (for tests
// and logging; a request is sent with Append). An id that does not fit an
// integer field is an error.
func (t *Template) Message(id int64) (proto.Message, error) {
	if id < 0 {
		return nil, fmt.Errorf("id %d: ids are 0 or more", id)
	}
	if err := t.Check(id); err != nil {
		return nil, err
	}
	m := proto.Clone(t.base).(*dynamicpb.Message)
	for _, f := range t.fields {
		var v protoreflect.Value
		switch f.fd.Kind() {
		case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
			v = protoreflect.ValueOfInt32(int32(id))
		case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
			v = protoreflect.ValueOfUint32(uint32(id))
		case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
			v = protoreflect.ValueOfUint64(uint64(id))
		case protoreflect.StringKind:
			v = protoreflect.ValueOfString(strings.Join(f.parts, strconv.FormatInt(id, 10)))
		case protoreflect.BytesKind:
			v = protoreflect.ValueOfBytes([]byte(strings.Join(f.parts, strconv.FormatInt(id, 10))))
		default:
			v = protoreflect.ValueOfInt64(id)
		}
		m.Set(f.fd, v)
	}
	return m, nil
}

// JSON renders the message for key id as compact protojson.
func (t *Template) JSON(id int64) ([]byte, error) {
	m, err := t.Message(id)
	if err != nil {
		return nil, err
	}
	return renderJSON(m, t.types)
}

// renderJSON renders m as protojson, compacted: protojson sometimes adds a
// space after a colon or comma (on purpose, so that no one relies on its
// output's bytes); compacting makes the text the same from run to run, for
// substring checks.
func renderJSON(m proto.Message, types *dynamicpb.Types) ([]byte, error) {
	b, err := protojson.MarshalOptions{Resolver: types}.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
