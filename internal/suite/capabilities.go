package suite

import "strings"

// Capabilities is the one table of which protocols each target kind can
// serve: suite validation refuses a `serves` entry outside it, and the
// runner's systems (internal/system/…) implement exactly these pairings — a
// test walks the table and runs one sample of each. The first protocol of a
// kind is what it serves when a target gives no `serves`.
var Capabilities = map[string][]Protocol{
	KindCommand:  {HTTP, RESP},
	KindAttach:   {HTTP, RESP},
	KindAddress:  {HTTP, RESP},
	KindPostgres: {PG, RESP},
	KindRedis:    {RESP},
}

// CanServe reports whether a target of kind can serve protocol p.
func CanServe(kind string, p Protocol) bool {
	for _, q := range Capabilities[kind] {
		if q == p {
			return true
		}
	}
	return false
}

// capList names the protocols of a kind for messages: "http, resp".
func capList(kind string) string {
	var s []string
	for _, p := range Capabilities[kind] {
		s = append(s, string(p))
	}
	return strings.Join(s, ", ")
}
