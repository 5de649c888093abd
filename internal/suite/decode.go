package suite

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// The suite is decoded from goccy/go-yaml's syntax tree by this small strict
// decoder rather than by yaml.Unmarshal: goccy truncates 3.5 into an int
// field without complaint and reports Go type names ("Go struct field
// rawMatrix.Connections of type int"). Decoding the tree ourselves gives every
// field its position, rejects every wrong type, and lets the messages say what
// is accepted in the suite's own words.

// nodeDecoder is implemented by field types with their own YAML syntax
// (Duration, CPUList).
type nodeDecoder interface {
	decodeYAML(d *decoder, field string, n ast.Node)
}

// decoder fills Go values from YAML nodes, recording positions and problems.
type decoder struct {
	*located
	anchors map[string]ast.Node
	// aliases counts alias expansions, bounded by maxAliases so that a
	// small file cannot expand into a huge one.
	aliases int
}

// maxAliases bounds the alias expansions of one suite.
const maxAliases = 10000

// decodeDocument parses data and decodes its single document into v.
func decodeDocument(l *located, data []byte, v any) {
	if !prescan(l, data) {
		return
	}
	f, err := parser.ParseBytes(data, 0, parser.AllowDuplicateMapKey())
	if err != nil {
		msg, p := err.Error(), pos{}
		if ye, ok := err.(interface {
			GetMessage() string
			GetToken() *token.Token
		}); ok {
			msg, p = ye.GetMessage(), tokenPos(ye.GetToken())
		}
		l.errAt(p, "", "YAML syntax: %s", msg)
		return
	}
	var docs []*ast.DocumentNode
	for _, doc := range f.Docs {
		if doc != nil && doc.Body != nil {
			docs = append(docs, doc)
		}
	}
	switch {
	case len(docs) == 0:
		l.errAt(pos{}, "", "empty suite: expected a mapping with name, targets, paths and matrix")
		return
	case len(docs) > 1:
		l.errAt(nodePos(docs[1].Body), "", "expected one YAML document, found %d", len(docs))
		return
	}
	d := &decoder{located: l, anchors: map[string]ast.Node{}}
	for _, n := range ast.Filter(ast.AnchorType, docs[0].Body) {
		a := n.(*ast.AnchorNode)
		if a.Name != nil && a.Name.GetToken() != nil {
			d.anchors[a.Name.GetToken().Value] = a.Value
		}
	}
	l.at[""] = pos{1, 1}
	d.decode("", docs[0].Body, reflect.ValueOf(v).Elem())
}

// resolve follows anchors, aliases and tags to the node that holds the value.
func (d *decoder) resolve(field string, n ast.Node) ast.Node {
	for i := 0; i < 16 && n != nil; i++ {
		switch x := n.(type) {
		case *ast.AnchorNode:
			n = x.Value
		case *ast.TagNode:
			n = x.Value
		case *ast.MappingKeyNode:
			n = x.Value
		case *ast.AliasNode:
			name := ""
			if x.Value != nil && x.Value.GetToken() != nil {
				name = x.Value.GetToken().Value
			}
			target, ok := d.anchors[name]
			if d.aliases++; d.aliases > maxAliases {
				d.errAt(nodePos(x), field, "too many alias expansions (more than %d)", maxAliases)
				return nil
			}
			if !ok {
				d.errAt(nodePos(x), field, "unknown alias *%s: define it first with &%s", name, name)
				return nil
			}
			n = target
		default:
			return n
		}
	}
	return n
}

// decode fills v from node n found at field.
func (d *decoder) decode(field string, n ast.Node, v reflect.Value) {
	at := nodePos(n)
	n = d.resolve(field, n)
	if n == nil {
		return
	}
	if v.CanAddr() {
		if nd, ok := v.Addr().Interface().(nodeDecoder); ok {
			nd.decodeYAML(d, field, n)
			return
		}
	}
	_, isNull := n.(*ast.NullNode)
	switch v.Kind() {
	case reflect.Pointer:
		if isNull {
			return
		}
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		d.decode(field, n, v.Elem())
	case reflect.Struct:
		if !isNull {
			d.decodeStruct(field, n, v)
		}
	case reflect.Map:
		if !isNull {
			d.decodeMap(field, n, v)
		}
	case reflect.Slice:
		if !isNull {
			d.decodeSlice(field, n, v)
		}
	case reflect.String:
		if s, ok := d.scalarText(field, n, at); ok {
			v.SetString(s)
		}
	case reflect.Int, reflect.Int64:
		if i, ok := d.integer(field, n, at); ok {
			if v.OverflowInt(i) {
				d.errAt(at, field, "must be an integer, got %d (out of range)", i)
				return
			}
			v.SetInt(i)
		}
	case reflect.Uint64:
		d.decodeUint(field, n, at, v)
	case reflect.Float64:
		if f, ok := d.number(field, n, at); ok {
			v.SetFloat(f)
		}
	case reflect.Bool:
		b, ok := n.(*ast.BoolNode)
		if !ok {
			d.errAt(at, field, "must be true or false, got %s", describe(n))
			return
		}
		v.SetBool(b.Value)
	default:
		panic(fmt.Sprintf("suite: no decoder for %s at %s", v.Type(), field))
	}
}

// entry is one key: value pair of a mapping.
type entry struct {
	key   string
	at    pos // the key's position
	value ast.Node
}

// entries lists the pairs of a mapping. Merge keys (<<: *anchor, or a list
// of anchors) bring in the pairs of other mappings, as YAML 1.1 defines
// them: explicit keys win, then earlier merged mappings over later ones.
// Explicit duplicate keys are reported. ok is false when n is not a mapping.
func (d *decoder) entries(field string, n ast.Node) (out []entry, ok bool) {
	var values []*ast.MappingValueNode
	switch x := n.(type) {
	case *ast.MappingNode:
		values = x.Values
	case *ast.MappingValueNode:
		values = []*ast.MappingValueNode{x}
	default:
		d.errAt(nodePos(n), field, "must be a mapping, got %s", describe(n))
		return nil, false
	}
	var explicit []entry
	var merges []ast.Node
	seen := map[string]pos{}
	for _, mv := range values {
		if mv.Key != nil && mv.Key.IsMergeKey() {
			merges = append(merges, mv.Value)
			continue
		}
		kn := d.resolve(field, mv.Key)
		at := nodePos(mv.Key)
		key, isScalar := scalarKey(kn)
		if !isScalar {
			d.errAt(at, field, "keys must be plain strings, got %s", describe(kn))
			continue
		}
		if first, dup := seen[key]; dup {
			d.errAt(at, field, "duplicate key %q (first at %d:%d)", key, first.line, first.col)
			continue
		}
		seen[key] = at
		explicit = append(explicit, entry{key: key, at: at, value: mv.Value})
	}
	taken := map[string]bool{}
	for _, m := range merges {
		for _, e := range d.mergeEntries(field, m) {
			if _, isExplicit := seen[e.key]; isExplicit || taken[e.key] {
				continue
			}
			taken[e.key] = true
			out = append(out, e)
		}
	}
	return append(out, explicit...), true
}

// mergeEntries returns the pairs a merge key brings in: one mapping or a list
// of mappings.
func (d *decoder) mergeEntries(field string, n ast.Node) []entry {
	n = d.resolve(field, n)
	if seq, ok := n.(*ast.SequenceNode); ok {
		var out []entry
		for _, item := range seq.Values {
			out = append(out, d.mergeEntries(field, item)...)
		}
		return out
	}
	if n == nil {
		return nil
	}
	es, _ := d.entries(field, n)
	return es
}

// record remembers where field's value is: the key for mappings, lists
// and missing values (the line a reader looks for), the value itself for
// scalars.
func (d *decoder) record(field string, keyAt pos, value ast.Node) {
	switch d.peek(value).(type) {
	case *ast.MappingNode, *ast.MappingValueNode, *ast.SequenceNode, *ast.NullNode, nil:
		d.at[field] = keyAt
	default:
		d.at[field] = nodePos(value)
		d.markQuoted(field, value)
	}
}

// markQuoted notes a scalar written in quotes (see located.quoted).
func (d *decoder) markQuoted(field string, n ast.Node) {
	if sn, ok := n.(*ast.StringNode); ok && sn.Token != nil {
		if t := sn.Token.Type; t == token.DoubleQuoteType || t == token.SingleQuoteType {
			d.quoted[field] = true
		}
	}
}

// peek is resolve without reporting or counting anything.
func (d *decoder) peek(n ast.Node) ast.Node {
	for i := 0; i < 16 && n != nil; i++ {
		switch x := n.(type) {
		case *ast.AnchorNode:
			n = x.Value
		case *ast.TagNode:
			n = x.Value
		case *ast.AliasNode:
			if x.Value == nil || x.Value.GetToken() == nil {
				return nil
			}
			n = d.anchors[x.Value.GetToken().Value]
		default:
			return n
		}
	}
	return n
}

func (d *decoder) decodeStruct(field string, n ast.Node, v reflect.Value) {
	es, ok := d.entries(field, n)
	if !ok {
		return
	}
	fields := yamlFields(v.Type())
	for _, e := range es {
		i, known := fields[e.key]
		if !known {
			d.errAt(e.at, field, "unknown key %q; accepted: %s", e.key, strings.Join(fieldNames(v.Type()), ", "))
			continue
		}
		f := child(field, e.key)
		d.record(f, e.at, e.value)
		d.decode(f, e.value, v.Field(i))
	}
}

func (d *decoder) decodeMap(field string, n ast.Node, v reflect.Value) {
	es, ok := d.entries(field, n)
	if !ok {
		return
	}
	if v.IsNil() {
		v.Set(reflect.MakeMapWithSize(v.Type(), len(es)))
	}
	for _, e := range es {
		f := child(field, e.key)
		d.record(f, e.at, e.value)
		elem := reflect.New(v.Type().Elem()).Elem()
		d.decode(f, e.value, elem)
		v.SetMapIndex(reflect.ValueOf(e.key), elem)
	}
}

func (d *decoder) decodeSlice(field string, n ast.Node, v reflect.Value) {
	seq, ok := n.(*ast.SequenceNode)
	if !ok {
		d.errAt(nodePos(n), field, "must be a list, got %s", describe(n))
		return
	}
	out := reflect.MakeSlice(v.Type(), len(seq.Values), len(seq.Values))
	for i, item := range seq.Values {
		f := index(field, i)
		d.at[f] = nodePos(item)
		d.markQuoted(f, item)
		d.decode(f, item, out.Index(i))
	}
	v.Set(out)
}

// scalarText accepts any scalar as text: env values and bodies are strings
// even when they look like numbers (GOMAXPROCS: 1).
func (d *decoder) scalarText(field string, n ast.Node, at pos) (string, bool) {
	switch x := n.(type) {
	case *ast.StringNode:
		return x.Value, true
	case *ast.LiteralNode:
		return x.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return x.GetToken().Value, true
	}
	d.errAt(at, field, "must be a string, got %s", describe(n))
	return "", false
}

func (d *decoder) integer(field string, n ast.Node, at pos) (int64, bool) {
	x, ok := n.(*ast.IntegerNode)
	if !ok {
		d.errAt(at, field, "must be an integer, got %s", describe(n))
		return 0, false
	}
	switch i := x.Value.(type) {
	case int64:
		return i, true
	case uint64:
		if i <= math.MaxInt64 {
			return int64(i), true
		}
	}
	d.errAt(at, field, "must be an integer, got %s (out of range)", x.GetToken().Value)
	return 0, false
}

func (d *decoder) decodeUint(field string, n ast.Node, at pos, v reflect.Value) {
	x, ok := n.(*ast.IntegerNode)
	if !ok {
		d.errAt(at, field, "must be a non-negative integer, got %s", describe(n))
		return
	}
	switch i := x.Value.(type) {
	case int64:
		if i < 0 {
			d.errAt(at, field, "must be a non-negative integer, got %d", i)
			return
		}
		v.SetUint(uint64(i))
	case uint64:
		v.SetUint(i)
	}
}

func (d *decoder) number(field string, n ast.Node, at pos) (float64, bool) {
	switch x := n.(type) {
	case *ast.IntegerNode:
		switch i := x.Value.(type) {
		case int64:
			return float64(i), true
		case uint64:
			return float64(i), true
		}
	case *ast.FloatNode:
		if math.IsInf(x.Value, 0) {
			d.errAt(at, field, "must be a finite number, got %s (out of range)", x.GetToken().Value)
			return 0, false
		}
		return x.Value, true
	case *ast.StringNode:
		// goccy reads YAML 1.1's floats, which need a dot: 1e308 comes as a
		// plain string although YAML 1.2 (and JSON) make it a number.
		if tk := x.GetToken(); tk != nil && tk.Type == token.StringType && looksExponent(x.Value) {
			f, err := strconv.ParseFloat(x.Value, 64)
			if err != nil || math.IsInf(f, 0) {
				d.errAt(at, field, "must be a finite number, got %s (out of range)", x.Value)
				return 0, false
			}
			return f, true
		}
	case *ast.InfinityNode, *ast.NanNode:
		d.errAt(at, field, "must be a finite number, got %s", x.GetToken().Value)
		return 0, false
	}
	d.errAt(at, field, "must be a number, got %s", describe(n))
	return 0, false
}

// looksExponent says whether s is a number in exponent form
// ([-+]digits[.digits][eE][-+]digits): YAML 1.2 reads it as a float, goccy
// leaves it a string when it has no dot or overflows.
func looksExponent(s string) bool {
	m, e, ok := strings.Cut(strings.ToLower(s), "e")
	if !ok {
		return false
	}
	m = strings.TrimLeft(m, "+-")
	if a, b, ok := strings.Cut(m, "."); ok {
		m = a + b
	}
	if len(e) > 0 && (e[0] == '+' || e[0] == '-') {
		e = e[1:]
	}
	return allDigits(m) && allDigits(e)
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}
