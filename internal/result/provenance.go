package result

import (
	"fmt"
	"sort"
)

// VersionUnknown is a Provenance's Version when benchrig could not learn
// it without running a program it does not know to answer a version flag
// (a wrapper script, npm start): see the command targets' provenance.
const VersionUnknown = "unknown"

// ProvenanceChanges lists what differs between the header of a results file
// (old) and the header a resumed run would write now (new), in the terms
// that make samples incomparable: the suite file's SHA-256, and per target
// its kind, binary SHA-256, server version (when both sides know it) and
// settings, or the target itself appearing or disappearing. An empty list means the resumed samples
// measure the same thing. The list is sorted and deterministic; each entry
// is one line such as
//
//	target "node": binary sha256 3f2a… → 9c41…
//	target "pg": setting shared_buffers "128MB" → "1GB"
//
// Binary paths, git revisions and query plans are not compared: a path may
// move with the same bytes, and plans are measured, not configured.
func ProvenanceChanges(old, new Header) []string {
	var out []string
	if old.Suite.SHA256 != new.Suite.SHA256 {
		out = append(out, fmt.Sprintf("suite %s: sha256 %s → %s", new.Suite.File, shortDigest(old.Suite.SHA256), shortDigest(new.Suite.SHA256)))
	}
	names := map[string]bool{}
	for n := range old.Targets {
		names[n] = true
	}
	for n := range new.Targets {
		names[n] = true
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	sort.Strings(sorted)
	for _, n := range sorted {
		o, inOld := old.Targets[n]
		w, inNew := new.Targets[n]
		switch {
		case !inOld:
			out = append(out, fmt.Sprintf("target %q: not in the file, added", n))
			continue
		case !inNew:
			out = append(out, fmt.Sprintf("target %q: in the file, gone now", n))
			continue
		}
		if o.Kind != w.Kind {
			out = append(out, fmt.Sprintf("target %q: kind %q → %q", n, o.Kind, w.Kind))
		}
		if o.SHA256 != w.SHA256 {
			out = append(out, fmt.Sprintf("target %q: binary sha256 %s → %s", n, shortDigest(o.SHA256), shortDigest(w.SHA256)))
		}
		if o.Version != w.Version && knownVersion(o.Version) && knownVersion(w.Version) {
			out = append(out, fmt.Sprintf("target %q: version %q → %q", n, o.Version, w.Version))
		}
		out = append(out, settingChanges(n, o.Settings, w.Settings)...)
	}
	return out
}

// knownVersion reports whether a recorded version says one: an unknown
// one (result.VersionUnknown, or none in a file written before it was
// recorded) cannot tell a change.
func knownVersion(v string) bool { return v != "" && v != VersionUnknown }

// settingChanges lists the settings of target n that differ, by name.
func settingChanges(n string, old, new map[string]string) []string {
	keys := map[string]bool{}
	for k := range old {
		keys[k] = true
	}
	for k := range new {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []string
	for _, k := range sorted {
		o, inOld := old[k]
		w, inNew := new[k]
		switch {
		case !inOld:
			out = append(out, fmt.Sprintf("target %q: setting %s added: %q", n, k, w))
		case !inNew:
			out = append(out, fmt.Sprintf("target %q: setting %s removed (was %q)", n, k, o))
		case o != w:
			out = append(out, fmt.Sprintf("target %q: setting %s %q → %q", n, k, o, w))
		}
	}
	return out
}

// shortDigest cuts a hex digest to 12 characters for messages; "" reads "none".
func shortDigest(h string) string {
	switch {
	case h == "":
		return "none"
	case len(h) > 12:
		return h[:12] + "…"
	}
	return h
}
