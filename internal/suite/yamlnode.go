package suite

import (
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// Helpers that read goccy/go-yaml nodes and the schema's struct tags.

// scalarKey returns a mapping key's text.
func scalarKey(n ast.Node) (string, bool) {
	switch n.(type) {
	case *ast.StringNode, *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.NullNode:
		if tk := n.GetToken(); tk != nil {
			return tk.Value, true
		}
	}
	return "", false
}

// describe names a node's kind and, for scalars, its value, for messages.
func describe(n ast.Node) string {
	switch x := n.(type) {
	case nil:
		return "nothing"
	case *ast.NullNode:
		return "null (no value)"
	case *ast.StringNode:
		return "string " + strconv.Quote(x.Value)
	case *ast.LiteralNode:
		return "a block string"
	case *ast.IntegerNode:
		return "integer " + x.GetToken().Value
	case *ast.FloatNode:
		return "number " + x.GetToken().Value
	case *ast.BoolNode:
		return "boolean " + x.GetToken().Value
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	}
	return strings.ToLower(strings.TrimSuffix(n.Type().String(), "Type"))
}

// nodePos is where a reader finds a node: a block mapping at its first key, a
// flow collection at its bracket, a scalar at its first character.
func nodePos(n ast.Node) pos {
	switch x := n.(type) {
	case nil:
		return pos{}
	case *ast.MappingNode:
		if !x.IsFlowStyle && len(x.Values) > 0 && x.Values[0].Key != nil {
			return nodePos(x.Values[0].Key)
		}
	case *ast.MappingValueNode:
		if x.Key != nil {
			return nodePos(x.Key)
		}
	}
	return tokenPos(n.GetToken())
}

func tokenPos(tk *token.Token) pos {
	if tk == nil || tk.Position == nil {
		return pos{}
	}
	return pos{tk.Position.Line, tk.Position.Column}
}

// yamlFields maps the YAML key of each decodable field of struct type t (its
// json tag name; yaml:"-" and unexported fields are not read from YAML) to
// the field index.
func yamlFields(t reflect.Type) map[string]int {
	out := map[string]int{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() || f.Tag.Get("yaml") == "-" {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out[name] = i
	}
	return out
}

// fieldNames lists the accepted keys of struct type t, sorted.
func fieldNames(t reflect.Type) []string {
	var names []string
	for name := range yamlFields(t) {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}
