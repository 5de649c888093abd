package resp

import (
	"fmt"
	"strings"
)

// val is a whole reply as a tree, for comparing parses in tests.
type val struct {
	kind  Kind
	isNil bool
	i     int64
	s     string
	elems []val
}

// String renders v compactly, for test failure messages.
func (v val) String() string {
	switch {
	case v.isNil:
		return string(v.kind) + "nil"
	case v.kind == KindInt:
		return fmt.Sprintf(":%d", v.i)
	case v.kind == KindArray:
		parts := make([]string, len(v.elems))
		for i, e := range v.elems {
			parts[i] = e.String()
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return fmt.Sprintf("%c%q", v.kind, v.s)
}

// equal reports whether two trees are the same.
func (v val) equal(w val) bool { return v.String() == w.String() }

// readVal reads one whole reply into a tree.
func readVal(rd *Reader) (val, error) {
	rep, err := rd.ReadReply()
	if err != nil {
		return val{}, err
	}
	v := val{kind: rep.Kind, isNil: rep.Nil, i: rep.Int, s: string(rep.Data)}
	if rep.Kind == KindArray && !rep.Nil {
		v.elems = make([]val, 0)
		for i := 0; i < rep.Len; i++ {
			e, err := readVal(rd)
			if err != nil {
				return val{}, err
			}
			v.elems = append(v.elems, e)
		}
	}
	return v, nil
}

// appendVal encodes a tree in canonical RESP2.
func appendVal(dst []byte, v val) []byte {
	switch v.kind {
	case KindSimple:
		return AppendSimpleString(dst, v.s)
	case KindError:
		return AppendError(dst, v.s)
	case KindInt:
		return AppendInt(dst, v.i)
	case KindBulk:
		if v.isNil {
			return AppendNilBulk(dst)
		}
		return AppendBulkString(dst, v.s)
	case KindArray:
		if v.isNil {
			return AppendNilArray(dst)
		}
		dst = AppendArrayHeader(dst, len(v.elems))
		for _, e := range v.elems {
			dst = appendVal(dst, e)
		}
	}
	return dst
}

// Constructors for expected trees.
func simple(s string) val { return val{kind: KindSimple, s: s} }
func errv(s string) val   { return val{kind: KindError, s: s} }
func intv(i int64) val    { return val{kind: KindInt, i: i} }
func bulk(s string) val   { return val{kind: KindBulk, s: s} }
func nilBulk() val        { return val{kind: KindBulk, isNil: true} }
func nilArray() val       { return val{kind: KindArray, isNil: true} }
func array(es ...val) val { return val{kind: KindArray, elems: append([]val{}, es...)} }
