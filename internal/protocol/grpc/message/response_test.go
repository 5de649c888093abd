package message

import (
	"strings"
	"testing"
)

// sayHello is the greeter's unary method.
func sayHello(t *testing.T) *Method {
	t.Helper()
	m, err := greeter(t).Method("benchrig.test.v1.Greeter/SayHello")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// reply is a HelloReply{message: "hello bob", id: 5}.
var reply = []byte{0x0a, 9, 'h', 'e', 'l', 'l', 'o', ' ', 'b', 'o', 'b', 0x10, 5}

func TestResponseJSON(t *testing.T) {
	m := sayHello(t)
	for _, c := range []struct {
		msg  []byte
		want string
	}{
		{reply, `{"message":"hello bob","id":"5"}`},
		{nil, `{}`},
		{append(reply[:len(reply):len(reply)], 0x98, 0x06, 1), `{"message":"hello bob","id":"5"}`}, // an unknown field 99
	} {
		got, err := m.ResponseJSON(c.msg)
		if err != nil || string(got) != c.want {
			t.Errorf("ResponseJSON(% x) = %s, %v; want %s", c.msg, got, err, c.want)
		}
	}
	_, err := m.ResponseJSON([]byte{0x0a, 20, 'x'})
	if want := "a response does not decode as benchrig.test.v1.HelloReply: "; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("ResponseJSON of a cut message: %v, want %q…", err, want)
	}

	// An Any is resolved through the Set's types (the other local file's
	// Ref), in a template and in a response.
	echo, err := loadTypes(t).Method("benchrig.types.v1.Types.Echo")
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := NewTemplate(echo.Desc.Input(), `{"fInt64": {id}, "any": {"@type": "type.googleapis.com/benchrig.common.v1.Ref", "kind": "k", "number": "3"}, "at": "2024-01-02T03:04:05Z"}`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := echo.ResponseJSON(tmpl.Append(nil, 9)[PrefixLen:])
	want := `{"fInt64":"9","at":"2024-01-02T03:04:05Z","any":{"@type":"type.googleapis.com/benchrig.common.v1.Ref","kind":"k","number":"3"}}`
	if err != nil || string(got) != want {
		t.Errorf("ResponseJSON with an Any: %s, %v; want %s", got, err, want)
	}

	// A Method not made by a Set resolves the types of its service's file.
	bare := &Method{Desc: echo.Desc, Path: echo.Path, Name: echo.Name}
	if got, err := bare.ResponseJSON(tmpl.Append(nil, 9)[PrefixLen:]); err != nil || string(got) != want {
		t.Errorf("ResponseJSON of a bare Method: %s, %v; want %s", got, err, want)
	}
}

func TestExpect(t *testing.T) {
	m := sayHello(t)
	unknown := append(reply[:len(reply):len(reply)], 0x98, 0x06, 1)
	other := []byte{0x0a, 3, 'b', 'o', 'b', 0x10, 5}
	cut := []byte{0x0a, 20, 'x'}
	long := strings.Repeat("x", 100)
	for _, c := range []struct {
		equal, contains string
		checks          map[string][]byte // the reason → a response
	}{
		{`{ "id": 5,
		    "message": "hello bob" }`, "", map[string][]byte{
			"":                                 reply,
			"response differs from json_equal": other,
			"response does not decode as benchrig.test.v1.HelloReply": cut,
		}},
		{`{"message": "hello bob", "id": "5"}`, "", map[string][]byte{"": unknown}},
		{"", `"message":"hello bob"`, map[string][]byte{
			"": reply,
			`response lacks "\"message\":\"hello bob\""`: other,
		}},
		{`{"id": 5, "message": "hello bob"}`, `"id":"5"`, map[string][]byte{
			"":                                 reply,
			"response differs from json_equal": other,
		}},
		{`{"message": "bob", "id": 5}`, `"hello`, map[string][]byte{"response lacks \"\\\"hello\"": other}},
		{"", long, map[string][]byte{`response lacks "` + strings.Repeat("x", 60) + `…"`: reply}},
	} {
		e, err := NewExpect(m, c.equal, c.contains)
		if err != nil {
			t.Fatalf("NewExpect(%q, %q): %v", c.equal, c.contains, err)
		}
		for want, msg := range c.checks {
			if got := e.Check(msg); got != want {
				t.Errorf("NewExpect(%q, %q).Check(% x) = %q, want %q", c.equal, c.contains, msg, got, want)
			}
		}
	}
	for _, c := range []struct{ equal, contains, want string }{
		{"", "", "an expected response needs json_equal or contains"},
		{`{"nope": 1}`, "", `json_equal does not parse as benchrig.test.v1.HelloReply: proto:`},
		{`{"id": `, "x", `json_equal does not parse as benchrig.test.v1.HelloReply: proto:`},
	} {
		_, err := NewExpect(m, c.equal, c.contains)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("NewExpect(%q, %q): %v, want %q…", c.equal, c.contains, err, c.want)
		}
	}
}
