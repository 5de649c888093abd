package cgroup

import (
	"encoding/json"
	"strings"
	"testing"
)

// A Ref survives JSON and reopens the same directories; malformed ones
// are refused.
func TestRefOpen(t *testing.T) {
	h := &Hierarchy{version: V1, parents: map[string]string{
		"cpu": "/sys/fs/cgroup/cpu,cpuacct/benchrig", "cpuacct": "/sys/fs/cgroup/cpu,cpuacct/benchrig",
		"memory": "/sys/fs/cgroup/memory/x", "pids": "/sys/fs/cgroup/pids/benchrig",
	}, shared: map[string]bool{"/sys/fs/cgroup/cpu,cpuacct/benchrig": true, "/sys/fs/cgroup/pids/benchrig": true}}
	name := "benchrig-1-2-t-1"
	g := &Group{h: h, name: name, dirs: map[string]string{}}
	for _, c := range v1Controllers {
		g.dirs[c] = h.parents[c] + "/" + name
		if !strings.Contains(strings.Join(g.order, " "), g.dirs[c]) {
			g.order = append(g.order, g.dirs[c])
		}
	}
	b, err := json.Marshal(g.Ref())
	if err != nil {
		t.Fatal(err)
	}
	var r Ref
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	o, err := Open(r)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(o.Dirs(), " ") != strings.Join(g.Dirs(), " ") || o.Name() != name || o.Version() != V1 || !o.h.shared["/sys/fs/cgroup/pids/benchrig"] {
		t.Errorf("reopened %+v (%s), want the dirs %v", o.Dirs(), b, g.Dirs())
	}
	for _, bad := range []Ref{
		{Version: 3, Dirs: []string{"/a/benchrig-1-2-x"}},
		{Version: V2, Dirs: []string{"relative/benchrig-1-2-x"}},
		{Version: V2, Dirs: []string{"/sys/fs/cgroup/user.slice"}},
		{Version: V2, Dirs: []string{"/a/benchrig-1-2-x", "/b/benchrig-1-2-x"}},
		{Version: V1, Dirs: []string{"/a/benchrig-1-2-x", "/b/benchrig-1-2-y", "/c/benchrig-1-2-x", "/d/benchrig-1-2-x"}},
		{Version: V2, Dirs: []string{"/a/benchrig-1-2-x"}, Shared: []string{"/a"}},
	} {
		if _, err := Open(bad); err == nil {
			t.Errorf("Open(%+v): no error", bad)
		}
	}
}
