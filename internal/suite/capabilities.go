package suite

import "strings"

// genericKinds serve any protocol registered Generic: benchrig only needs
// the program's address to drive it.
var genericKinds = []string{KindCommand, KindAttach, KindAddress}

// Capabilities is the one table of which protocols each target kind can
// serve, built from the registry: the generic kinds (command, attach,
// address) serve every protocol registered Generic, the one registered
// GenericDefault first; a server kind serves what was registered for it
// (RegisterKind). Suite validation refuses a `serves` entry outside it,
// and the runner's systems (internal/system/…) implement exactly these
// pairings — a test walks the table and runs one sample of each. The first
// protocol of a kind is what it serves when a target gives no `serves`.
func Capabilities() map[string][]Protocol {
	registry.RLock()
	defer registry.RUnlock()
	var generic []Protocol
	for _, p := range sortedProtocols(registry.protocols) {
		info := registry.protocols[p]
		switch {
		case info.GenericDefault:
			generic = append([]Protocol{p}, generic...)
		case info.Generic:
			generic = append(generic, p)
		}
	}
	out := map[string][]Protocol{}
	for _, k := range genericKinds {
		out[k] = generic
	}
	for k, ps := range registry.kinds {
		out[k] = append([]Protocol(nil), ps...)
	}
	return out
}

// nativeProtocol is the protocol a kind serves by default (its first), ""
// for an unknown kind: a postgres target's own protocol, which its
// statistics and connection reserve are about.
func nativeProtocol(kind string) Protocol {
	if c := Capabilities()[kind]; len(c) > 0 {
		return c[0]
	}
	return ""
}

// CanServe reports whether a target of kind can serve protocol p.
func CanServe(kind string, p Protocol) bool {
	for _, q := range Capabilities()[kind] {
		if q == p {
			return true
		}
	}
	return false
}

// capList names the protocols of a kind for messages: "http, resp".
func capList(kind string) string {
	var s []string
	for _, p := range Capabilities()[kind] {
		s = append(s, string(p))
	}
	return strings.Join(s, ", ")
}
