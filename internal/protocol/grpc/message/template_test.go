package message

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"math"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// rest is the part of a Scalars template that holds no {id}: a field of
// every other kind, so the prefix Append copies is not empty.
const rest = `"fDouble": 1.5, "fBool": true, "inner": {"id": 7, "name": "in"}, "ids": [1, 2, 300],
	"labels": {"a": 1, "b": 2}, "color": "COLOR_BLUE", "choiceName": "c", "at": "2024-01-02T03:04:05Z",
	"ref": {"kind": "k", "number": 3}`

// ids are the key numbers each template is rendered for (those over a
// field's bound are skipped for it).
var ids = []int64{0, 1, 127, 128, 255, 300, 16383, 16384, math.MaxInt32, math.MaxUint32, 1 << 40, math.MaxInt64}

// reference parses jsonText with {id} replaced by id as protojson does: the
// message a template must render. For a bytes field (b64 true) the
// rendered text is base64-encoded first, as protojson wants bytes.
func reference(t *testing.T, md protoreflect.MessageDescriptor, jsonText string, id int64, b64 bool) proto.Message {
	t.Helper()
	dec := strconv.FormatInt(id, 10)
	if b64 {
		start := strings.Index(jsonText, `"fBytes": "`) + len(`"fBytes": "`)
		end := start + strings.IndexByte(jsonText[start:], '"')
		text := strings.ReplaceAll(jsonText[start:end], "{id}", dec)
		jsonText = jsonText[:start] + base64.StdEncoding.EncodeToString([]byte(text)) + jsonText[end:]
	}
	m := dynamicpb.NewMessage(md)
	if err := protojson.Unmarshal([]byte(strings.ReplaceAll(jsonText, "{id}", dec)), m); err != nil {
		t.Fatalf("reference for id %d: %v", id, err)
	}
	return m
}

// decode checks a gRPC message's prefix and decodes its protobuf bytes.
func decode(t *testing.T, md protoreflect.MessageDescriptor, b []byte) proto.Message {
	t.Helper()
	if len(b) < 5 || b[0] != 0 || int(binary.BigEndian.Uint32(b[1:5])) != len(b)-5 {
		t.Fatalf("a gRPC message with a bad prefix: % x", b[:min(len(b), 5)])
	}
	m := dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(b[5:], m); err != nil {
		t.Fatalf("the message does not decode: %v", err)
	}
	return m
}

func TestTemplateKinds(t *testing.T) {
	md := scalars(t)
	type tc struct {
		json string
		max  int64 // the field's bound
		b64  bool
	}
	var cases []tc
	for _, f := range []struct {
		name string
		max  int64
	}{
		{"fInt32", math.MaxInt32}, {"fInt64", math.MaxInt64}, {"fUint32", math.MaxUint32}, {"fUint64", math.MaxInt64},
		{"fSint32", math.MaxInt32}, {"fSint64", math.MaxInt64}, {"fFixed32", math.MaxUint32}, {"fFixed64", math.MaxInt64},
		{"fSfixed32", math.MaxInt32}, {"fSfixed64", math.MaxInt64}, {"optId", math.MaxInt64}, {"farId", math.MaxInt64},
		{"f_int64", math.MaxInt64}, // the proto name
	} {
		cases = append(cases,
			tc{`{"` + f.name + `": {id}, ` + rest + `}`, f.max, false},
			tc{`{` + rest + `, "` + f.name + `": "{id}"}`, f.max, false})
	}
	cases = append(cases,
		tc{`{"fString": "user-{id}", ` + rest + `}`, math.MaxInt64, false},
		tc{`{"fString": "{id}{id}-\u00e9-{id}", "fInt64": {id}, ` + rest + `}`, math.MaxInt64, false},
		tc{`{"fString": "{id}", "choiceId": {id}, "fSint64": "{id}", "fBytes": "k{id}"}`, math.MaxInt64, true},
		tc{`{"fBytes": "key:{id}:end", ` + rest + `}`, math.MaxInt64, true},
		tc{`{"fFloat": 2.5, "fInt32": {id}, "fUint32": {id}, "fSint32": {id}, "fFixed32": {id}, "fSfixed32": {id}}`, math.MaxInt32, false},
	)
	for _, c := range cases {
		tmpl, err := NewTemplate(md, c.json)
		if err != nil {
			t.Fatalf("NewTemplate(%s): %v", c.json, err)
		}
		if !tmpl.Keyed() {
			t.Errorf("%s: Keyed() false", c.json)
		}
		for _, id := range ids {
			if id > c.max {
				continue
			}
			want := reference(t, md, c.json, id, c.b64)
			got := decode(t, md, tmpl.Append(nil, id))
			if !proto.Equal(got, want) {
				t.Errorf("%s, id %d:\nAppend decodes to %v\nwant %v", c.json, id, got, want)
			}
			m, err := tmpl.Message(id)
			if err != nil || !proto.Equal(m, want) {
				t.Errorf("%s, id %d: Message %v, %v; want %v", c.json, id, m, err, want)
			}
			j, err := tmpl.JSON(id)
			if err != nil {
				t.Fatal(err)
			}
			back := dynamicpb.NewMessage(md)
			if err := protojson.Unmarshal(j, back); err != nil || !proto.Equal(back, want) {
				t.Errorf("%s, id %d: JSON %s parses to %v, %v", c.json, id, j, back, err)
			}
		}
	}
}

// TestTemplateBytes pins the exact bytes of the greeter's request.
func TestTemplateBytes(t *testing.T) {
	m, err := greeter(t).Method("benchrig.test.v1.Greeter/SayHello")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := NewTemplate(m.Desc.Input(), `{"name": "user-{id}", "id": {id}}`)
	if err != nil {
		t.Fatal(err)
	}
	got := tmpl.Append([]byte("x"), 5)
	want := []byte{'x', 0, 0, 0, 0, 10, 0x0a, 6, 'u', 's', 'e', 'r', '-', '5', 0x10, 5}
	if !bytes.Equal(got, want) {
		t.Errorf("Append(5) = % x, want % x", got, want)
	}
	got = tmpl.Append(nil, 1234567)
	want = []byte{0, 0, 0, 0, 18, 0x0a, 12, 'u', 's', 'e', 'r', '-', '1', '2', '3', '4', '5', '6', '7', 0x10, 0x87, 0xad, 0x4b}
	if !bytes.Equal(got, want) {
		t.Errorf("Append(1234567) = % x, want % x", got, want)
	}

	// No {id}: the message as protobuf marshals it.
	plain, err := NewTemplate(m.Desc.Input(), `{"name": "bob", "id": "42"}`)
	if err != nil {
		t.Fatal(err)
	}
	if plain.Keyed() {
		t.Error("a template without {id}: Keyed() true")
	}
	want = []byte{0, 0, 0, 0, 7, 0x0a, 3, 'b', 'o', 'b', 0x10, 42}
	for _, id := range []int64{0, 99} {
		if got := plain.Append(nil, id); !bytes.Equal(got, want) {
			t.Errorf("a template without {id}: Append(%d) = % x, want % x", id, got, want)
		}
	}
	empty, err := NewTemplate(m.Desc.Input(), `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if got := empty.Append(nil, 3); !bytes.Equal(got, []byte{0, 0, 0, 0, 0}) {
		t.Errorf("the empty message: % x", got)
	}
}

func TestTemplateCheck(t *testing.T) {
	md := scalars(t)
	for _, c := range []struct {
		field string
		max   int64
	}{
		{"fInt32", math.MaxInt32}, {"fSint32", math.MaxInt32}, {"fSfixed32", math.MaxInt32},
		{"fUint32", math.MaxUint32}, {"fFixed32", math.MaxUint32},
	} {
		tmpl, err := NewTemplate(md, `{"fInt64": {id}, "fString": "{id}", "`+c.field+`": {id}}`)
		if err != nil {
			t.Fatal(err)
		}
		if err := tmpl.Check(c.max); err != nil {
			t.Errorf("%s: Check(%d): %v", c.field, c.max, err)
		}
		err = tmpl.Check(c.max + 1)
		fd := md.Fields().ByJSONName(c.field)
		want := "{id} in field " + string(fd.Name()) + " (" + fd.Kind().String() + "): ids run to " +
			strconv.FormatInt(c.max+1, 10) + ", the field holds at most " + strconv.FormatInt(c.max, 10)
		if err == nil || err.Error() != want {
			t.Errorf("%s: Check(%d) = %v, want %q", c.field, c.max+1, err, want)
		}
		if _, err := tmpl.Message(c.max + 1); err == nil || err.Error() != want {
			t.Errorf("%s: Message(%d) = %v, want %q", c.field, c.max+1, err, want)
		}
	}
	tmpl, err := NewTemplate(md, `{"fInt64": {id}, "fUint64": {id}, "fBytes": "{id}"}`)
	if err != nil {
		t.Fatal(err)
	}
	if err := tmpl.Check(math.MaxInt64); err != nil {
		t.Errorf("64-bit fields: Check(MaxInt64): %v", err)
	}
	if err := tmpl.Check(-1); err == nil || err.Error() != "the largest id is -1: ids are 0 or more" {
		t.Errorf("Check(-1): %v", err)
	}
	if _, err := tmpl.Message(-1); err == nil || err.Error() != "id -1: ids are 0 or more" {
		t.Errorf("Message(-1): %v", err)
	}
}

func TestTemplateErrors(t *testing.T) {
	md := scalars(t)
	for _, c := range []struct{ json, want string }{
		{`{"inner": {"id": {id}}}`, "{id} at inner.id: " + whereID},
		{`{"inner": {"name": "n-{id}"}}`, "{id} at inner.name: " + whereID},
		{`{"ids": [1, {id}]}`, "{id} at ids[1]: " + whereID},
		{`{"labels": {"k": {id}}}`, "{id} at labels.k: " + whereID},
		{`{"labels": {"k": "{id}"}}`, "{id} at labels.k: " + whereID},
		{`{"ref": {"kind": "{id}"}}`, "{id} at ref.kind: " + whereID},
		{`{"ids": {id}}`, "{id} in field ids (repeated int64): " + whereID},
		{`{"labels": {id}}`, "{id} in field labels (map<string, int64>): " + whereID},
		{`{"color": {id}}`, "{id} in field color (enum benchrig.types.v1.Color): " + whereID},
		{`{"color": "{id}"}`, "{id} in field color (enum benchrig.types.v1.Color): " + whereID},
		{`{"fDouble": {id}}`, "{id} in field f_double (double): " + whereID},
		{`{"fFloat": "{id}"}`, "{id} in field f_float (float): " + whereID},
		{`{"fBool": {id}}`, "{id} in field f_bool (bool): " + whereID},
		{`{"inner": {id}}`, "{id} in field inner (message benchrig.types.v1.Scalars.Inner): " + whereID},
		{`{"at": "{id}"}`, "{id} in field at (message google.protobuf.Timestamp): " + whereID},
		{`{"{id}": 1}`, "{id} in a field name ({id}): " + whereID},
		{`{"inner": {"x{id}": 1}}`, "{id} in a field name (inner.x{id}): " + whereID},
		{`{id}`, "{id} as the whole message: " + whereID},
		{`[{id}]`, "{id} at [0]: " + whereID},
		{`{"fString": {id}}`, `{id} in field f_string (string) must be inside quotes ("{id}", "user-{id}")`},
		{`{"fInt64": "x{id}"}`, `{id} in field f_int64 (int64) must be its whole value ({id} or "{id}"), not "x{id}"`},
		{`{"nope": {id}}`, `unknown field "nope" of benchrig.types.v1.Scalars`},
		{`{"choiceName": "a", "choiceId": {id}}`, "fields choice_name and choice_id are both set, and are of the same oneof choice"},
		{`{"choiceId": {id}, "choiceName": "{id}"}`, "fields choice_id and choice_name are both set, and are of the same oneof choice"},
		{`{"fInt64": 1,}`, "malformed JSON at byte offset 13: want a field name in quotes"},
		{`{"fInt64": {id}`, "malformed JSON at byte offset 15: want ',' or '}' after a field's value"},
		{`{"fInt64" 1}`, "malformed JSON at byte offset 10: want ':' after a field name"},
		{`{"fString": "a{id}`, "malformed JSON at byte offset 12: a string without its closing quote"},
		{`{"fString": "\q{id}"}`, "malformed JSON at byte offset 12: a string with an invalid escape"},
		{"{\"fString\": \"\x01{id}\"}", "malformed JSON at byte offset 13: a control character in a string"},
		{"{\"fString\": \"\xff{id}\"}", "malformed JSON at byte offset 12: a string that is not valid UTF-8"},
		{`{} {}`, "malformed JSON at byte offset 3: text after the message"},
		{``, "malformed JSON at byte offset 0: unexpected end, want a value"},
		{strings.Repeat("[", maxDepth+1), "malformed JSON at byte offset 10000: nested deeper than 10000"},
	} {
		_, err := NewTemplate(md, c.json)
		if err == nil || err.Error() != c.want {
			t.Errorf("NewTemplate(%.40s):\n got %v\nwant %s", c.json, err, c.want)
		}
	}
	// Errors protojson finds, with the message it gives.
	for _, c := range []struct{ json, want string }{
		{`{"nope": 1}`, `unknown field "nope"`},
		{`{"fInt64": {id}, "f_int64": 2}`, `duplicate field "f_int64"`},
		{`{"fInt32": "{id}", "fInt64": true}`, `invalid value for int64 field fInt64: true`},
		{`{"fString": "user-{id}", "fInt32": 1e40}`, `invalid value for int32 field fInt32: 1e40`},
	} {
		_, err := NewTemplate(md, c.json)
		if err == nil || !strings.HasPrefix(err.Error(), "the JSON of a benchrig.types.v1.Scalars: ") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewTemplate(%s): %v, want protojson's %q", c.json, err, c.want)
		}
	}
	big := `{"fString": "` + strings.Repeat("a", MaxTemplate) + `"}`
	if _, err := NewTemplate(md, big); err == nil || err.Error() != "the JSON of a benchrig.types.v1.Scalars is 4194319 bytes, over the bound of 4194304" {
		t.Errorf("a template over the bound: %v", err)
	}
}

func TestTemplateAllocs(t *testing.T) {
	md := scalars(t)
	tmpl, err := NewTemplate(md, `{"fInt64": {id}, "fSint32": {id}, "fFixed64": {id}, "fString": "user-{id}-{id}", "fBytes": "{id}", `+rest+`}`)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 0, 1024)
	id := int64(0)
	allocs := testing.AllocsPerRun(1000, func() {
		buf = tmpl.Append(buf[:0], id)
		id += 7919
	})
	if allocs != 0 {
		t.Errorf("Append allocates %v times per call, want 0", allocs)
	}
}

// TestTemplateRequired: a proto2 required field may hold {id}; one left
// unset is an error.
func TestTemplateRequired(t *testing.T) {
	s, err := Load([]string{"testdata/proto/benchrig/legacy/v1/legacy.proto"}, []string{importPath})
	if err != nil {
		t.Fatal(err)
	}
	md, err := s.Message("benchrig.legacy.v1.Legacy")
	if err != nil {
		t.Fatal(err)
	}
	const ok = `{"id": {id}, "must": "m-{id}"}`
	tmpl, err := NewTemplate(md, ok)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{0, 300} {
		if got, want := decode(t, md, tmpl.Append(nil, id)), reference(t, md, ok, id, false); !proto.Equal(got, want) {
			t.Errorf("id %d: %v, want %v", id, got, want)
		}
	}
	_, err = NewTemplate(md, `{"name": "n-{id}", "must": "x"}`)
	// protobuf-go's messages vary their spacing on purpose (a space or a
	// no-break space after "proto:"): match the parts that say something.
	if err == nil || !strings.HasPrefix(err.Error(), "a benchrig.legacy.v1.Legacy: proto:") ||
		!strings.HasSuffix(err.Error(), "required field benchrig.legacy.v1.Legacy.id not set") {
		t.Errorf("a required field unset: %v, want the field benchrig.legacy.v1.Legacy.id named", err)
	}
}
