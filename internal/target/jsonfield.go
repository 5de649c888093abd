package target

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
)

// decodeJSON decodes one JSON document, keeping numbers exact
// (json.Number).
func decodeJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("text after the JSON value")
	}
	return v, nil
}

// matchJSONField checks that the value at a dot path of doc equals want.
// want may be any value that encodes as JSON (from a suite file: string,
// number, bool, nil, map, slice).
func matchJSONField(doc any, path string, want any) error {
	got, err := lookupJSON(doc, path)
	if err != nil {
		return fmt.Errorf("json %s: %w", path, err)
	}
	wb, err := json.Marshal(want)
	if err != nil {
		return fmt.Errorf("json %s: expected value of type %T is not JSON", path, want)
	}
	wantV, err := decodeJSON(wb)
	if err != nil {
		return fmt.Errorf("json %s: expected value: %w", path, err)
	}
	if !equalJSON(got, wantV) {
		return fmt.Errorf("json %s is %s, want %s", path, compactJSON(got), cut(string(wb), 80))
	}
	return nil
}

// lookupJSON follows a dot path ("data.items.0.id") through objects (by key)
// and arrays (by index).
func lookupJSON(doc any, path string) (any, error) {
	cur := doc
	walked := "$"
	for _, key := range strings.Split(path, ".") {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[key]
			if !ok {
				return nil, fmt.Errorf("missing (%s has no key %q)", walked, key)
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 {
				return nil, fmt.Errorf("missing (%s is an array; %q is not an index)", walked, key)
			}
			if i >= len(v) {
				return nil, fmt.Errorf("missing (%s has %d elements, no index %d)", walked, len(v), i)
			}
			cur = v[i]
		default:
			return nil, fmt.Errorf("missing (%s is %s, not an object or array)", walked, compactJSON(cur))
		}
		walked += "." + key
	}
	return cur, nil
}

// equalJSON compares two decoded JSON values; numbers compare by value.
func equalJSON(a, b any) bool {
	switch x := a.(type) {
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		if x == y {
			return true
		}
		// big.Float (not big.Rat) so that a huge exponent costs nothing.
		fx, _, errx := big.ParseFloat(x.String(), 10, 512, big.ToNearestEven)
		fy, _, erry := big.ParseFloat(y.String(), 10, 512, big.ToNearestEven)
		return errx == nil && erry == nil && fx.Cmp(fy) == 0
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equalJSON(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	default: // string, bool, nil
		return a == b
	}
}

// compactJSON renders a decoded value for messages, cut to 80 bytes.
func compactJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%v", v)
	}
	return cut(string(b), 80)
}
