package pgclient

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// ParseIdent reads a possibly schema-qualified SQL name ("items",
// "public.items", `"My Table"`) with SQL's rules: unquoted parts fold to lower
// case, double-quoted parts are taken as written ("" is a quote). field names
// the setting in errors ("table", "pk").
func ParseIdent(field, name string) (pgx.Identifier, error) {
	if strings.TrimSpace(name) == "" {
		return nil, fmt.Errorf("%s: empty name", field)
	}
	var parts pgx.Identifier
	i := 0
	for {
		var part string
		if i < len(name) && name[i] == '"' {
			var b strings.Builder
			i++
			for {
				if i >= len(name) {
					return nil, fmt.Errorf("%s %q: unterminated quoted name", field, name)
				}
				if name[i] == '"' {
					if i+1 < len(name) && name[i+1] == '"' {
						b.WriteByte('"')
						i += 2
						continue
					}
					i++
					break
				}
				b.WriteByte(name[i])
				i++
			}
			part = b.String()
		} else {
			j := i
			for j < len(name) && name[j] != '.' {
				c := name[j]
				if !(c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80) {
					return nil, fmt.Errorf("%s %q: character %q needs the name in double quotes", field, name, c)
				}
				j++
			}
			part = strings.ToLower(name[i:j])
			if part != "" && part[0] >= '0' && part[0] <= '9' {
				return nil, fmt.Errorf("%s %q: a name cannot start with a digit unless double-quoted", field, name)
			}
			i = j
		}
		if part == "" {
			return nil, fmt.Errorf("%s %q: empty name part", field, name)
		}
		parts = append(parts, part)
		if i >= len(name) {
			break
		}
		if name[i] != '.' {
			return nil, fmt.Errorf("%s %q: expected '.' after a quoted name", field, name)
		}
		i++
	}
	if len(parts) > 2 {
		return nil, fmt.Errorf("%s %q: at most schema.name", field, name)
	}
	return parts, nil
}

// QuoteIdent is ParseIdent returning the quoted SQL text ("public"."items").
func QuoteIdent(field, name string) (string, error) {
	id, err := ParseIdent(field, name)
	if err != nil {
		return "", err
	}
	return id.Sanitize(), nil
}
