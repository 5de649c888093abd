package cgroup

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Ref is a group in a form another process can be given (it marshals to
// JSON) and reopen with Open: what Stats, PIDs and Remove need. A target's
// watchdog, which runs outside the group, gets one so that it can read the
// group's last counters and remove it when it kills the tree, benchrig's
// own death included.
type Ref struct {
	Version Version `json:"version"`
	// Dirs are the group's directories, one per v1 controller (cpu,
	// cpuacct, memory, pids, in that order), or the one v2 directory.
	Dirs []string `json:"dirs"`
	// Shared lists the shared benchrig parent groups among the Dirs'
	// parents, removed with the group when it leaves them empty.
	Shared []string `json:"shared,omitempty"`
}

// Ref returns the reference Open reopens g from.
func (g *Group) Ref() Ref {
	r := Ref{Version: g.h.version}
	keys := v1Controllers
	if g.h.version == V2 {
		keys = []string{""}
	}
	for _, c := range keys {
		r.Dirs = append(r.Dirs, g.dirs[c])
	}
	for dir := range g.h.shared {
		r.Shared = append(r.Shared, dir)
	}
	slices.Sort(r.Shared)
	return r
}

// Open reopens the group r refers to, in this or another process. It
// checks the reference's form (absolute paths to benchrig-* directories of
// one name), not that the group still exists: Stats then fails, and Remove
// does nothing.
func Open(r Ref) (*Group, error) {
	keys := v1Controllers
	switch r.Version {
	case V1:
	case V2:
		keys = []string{""}
	default:
		return nil, fmt.Errorf("cgroup: reference of version %d: want 1 or 2", r.Version)
	}
	if len(r.Dirs) != len(keys) {
		return nil, fmt.Errorf("cgroup: reference with %d directories, want %d for v%d", len(r.Dirs), len(keys), r.Version)
	}
	h := &Hierarchy{version: r.Version, parents: map[string]string{}, shared: map[string]bool{}}
	g := &Group{h: h, name: filepath.Base(r.Dirs[0]), dirs: map[string]string{}}
	for i, c := range keys {
		dir := filepath.Clean(r.Dirs[i])
		if !filepath.IsAbs(dir) || filepath.Base(dir) != g.name || !strings.HasPrefix(g.name, namePrefix) {
			return nil, fmt.Errorf("cgroup: reference names %q: want absolute paths to one %s* group", r.Dirs[i], namePrefix)
		}
		g.dirs[c] = dir
		h.parents[c] = filepath.Dir(dir)
		if !slices.Contains(g.order, dir) {
			g.order = append(g.order, dir)
		}
	}
	for _, s := range r.Shared {
		if filepath.Base(s) != sharedParent {
			return nil, fmt.Errorf("cgroup: reference names %q as a shared parent: want a %s directory", s, sharedParent)
		}
		h.shared[filepath.Clean(s)] = true
	}
	return g, nil
}
