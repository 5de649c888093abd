package result

import (
	"fmt"
	"sort"
	"strings"
)

// RanFile is one file a started target's process tree ran: the executable
// of one of its processes (/proc/PID/exe: the bytes that ran, even if the
// file was replaced since) or a script an interpreter of it ran.
type RanFile struct {
	// Path is the executable's path as the kernel reported it (" (deleted)"
	// when replaced or removed since it started), or the script's.
	Path string `json:"path"`
	// SHA256 is the hex SHA-256 of its bytes.
	SHA256 string `json:"sha256"`
	// Kind is "exe" or "script".
	Kind string `json:"kind"`
}

// RanChanges lists the files of target n that ran with other bytes in new
// than in old (same kind and path, another SHA-256), one line each, sorted:
//
//	target "api": exe /srv/api sha256 3f2a… → 9c41…
//
// A file only one side ran is no change: what a tree runs at one moment
// may hold a short-lived helper.
func RanChanges(n string, old, new []RanFile) []string {
	type key struct{ kind, path string }
	sums := func(fs []RanFile) map[key][]string {
		m := map[key][]string{}
		for _, f := range fs {
			k := key{f.Kind, f.Path}
			m[k] = append(m[k], f.SHA256)
		}
		for k := range m {
			sort.Strings(m[k])
		}
		return m
	}
	o, w := sums(old), sums(new)
	var out []string
	for k, ov := range o {
		wv, ok := w[k]
		if !ok || strings.Join(ov, ",") == strings.Join(wv, ",") {
			continue
		}
		short := func(v []string) string {
			s := make([]string, len(v))
			for i, h := range v {
				s[i] = shortDigest(h)
			}
			return strings.Join(s, ",")
		}
		out = append(out, fmt.Sprintf("target %q: %s %s sha256 %s → %s", n, k.kind, k.path, short(ov), short(wv)))
	}
	sort.Strings(out)
	return out
}

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
