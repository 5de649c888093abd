package message

import (
	"bytes"
	"fmt"

	"github.com/benchrig/benchrig/internal/textclip"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
)

// resolver returns m's types: those of its Set, or those of its service's
// file and its imports when m was not made by a Set.
func (m *Method) resolver() *dynamicpb.Types {
	if m.types != nil {
		return m.types
	}
	return typesOf(m.Desc)
}

// ResponseJSON decodes a response message of m's output type and renders
// it as compact protojson (field names in lowerCamelCase, fields at their
// default value left out, no space between tokens).
func (m *Method) ResponseJSON(msg []byte) ([]byte, error) {
	types := m.resolver()
	out := dynamicpb.NewMessage(m.Desc.Output())
	if err := (proto.UnmarshalOptions{Resolver: types}).Unmarshal(msg, out); err != nil {
		return nil, fmt.Errorf("a response does not decode as %s: %v", m.Desc.Output().FullName(), err)
	}
	return renderJSON(out, types)
}

// maxContainsQuoted bounds the expected substring an Expect's reason
// quotes, in bytes.
const maxContainsQuoted = 60

// Expect is an expected response: its JSON, compared semantically (parsed
// into the output message type and compared with proto.Equal, so field
// order and spacing do not matter), and/or a substring of the response's
// protojson rendering (as ResponseJSON renders it: compact).
type Expect struct {
	m        *Method
	types    *dynamicpb.Types
	want     proto.Message // nil: no json_equal
	contains []byte        // nil: no substring

	// The reasons Check returns, made once.
	differs, lacks, undecodable, unrenderable string
}

// NewExpect makes the expectation of m's responses: jsonEqual, when not
// empty, is the JSON of the whole response; contains, when not empty, a
// substring of its rendering. One of them must be given.
func NewExpect(m *Method, jsonEqual string, contains string) (*Expect, error) {
	if jsonEqual == "" && contains == "" {
		return nil, fmt.Errorf("an expected response needs json_equal or contains")
	}
	if len(jsonEqual) > MaxTemplate {
		return nil, fmt.Errorf("json_equal is %d bytes, over the bound of %d", len(jsonEqual), MaxTemplate)
	}
	out := m.Desc.Output()
	e := &Expect{
		m:            m,
		types:        m.resolver(),
		differs:      "response differs from json_equal",
		lacks:        fmt.Sprintf("response lacks %q", textclip.Cut(contains, maxContainsQuoted)),
		undecodable:  fmt.Sprintf("response does not decode as %s", out.FullName()),
		unrenderable: "response does not render as JSON",
	}
	if jsonEqual != "" {
		want := dynamicpb.NewMessage(out)
		if err := (protojson.UnmarshalOptions{Resolver: e.types}).Unmarshal([]byte(jsonEqual), want); err != nil {
			return nil, fmt.Errorf("json_equal does not parse as %s: %v", out.FullName(), err)
		}
		e.want = want
	}
	if contains != "" {
		e.contains = []byte(contains)
	}
	return e, nil
}

// Check returns "" when msg, a response message, matches; else a short
// reason, one of a few per Expect ("response differs from json_equal",
// "response lacks \"x\"", "response does not decode as pkg.Type",
// "response does not render as JSON"), which never quotes the response.
func (e *Expect) Check(msg []byte) string {
	got := dynamicpb.NewMessage(e.m.Desc.Output())
	// Unknown fields are dropped: json_equal cannot name them.
	if err := (proto.UnmarshalOptions{Resolver: e.types, DiscardUnknown: true}).Unmarshal(msg, got); err != nil {
		return e.undecodable
	}
	if e.want != nil && !proto.Equal(e.want, got) {
		return e.differs
	}
	if e.contains != nil {
		text, err := renderJSON(got, e.types)
		if err != nil {
			return e.unrenderable
		}
		if !bytes.Contains(text, e.contains) {
			return e.lacks
		}
	}
	return ""
}
