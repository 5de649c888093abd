package cgroup

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixture copies testdata/<name> to a temporary directory, detects the
// hierarchy it describes, and has Create fill each directory it makes with
// the files of the fixture's child directory, as the kernel would.
func fixture(t *testing.T, name string) (string, *Hierarchy, error) {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join("testdata", name))); err != nil {
		t.Fatal(err)
	}
	testHookMkdir = func(dir string) error {
		return os.CopyFS(dir, os.DirFS(filepath.Join(root, "child")))
	}
	t.Cleanup(func() { testHookMkdir = nil })
	h, err := DetectAt(filepath.Join(root, "proc-self-cgroup"), filepath.Join(root, "mountinfo"), root)
	return root, h, err
}

func readBack(t *testing.T, dir, file string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestV2Fixture(t *testing.T) {
	root, h, err := fixture(t, "v2")
	if err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(root, "sys/fs/cgroup/bench.slice/run.scope")
	if h.Version() != V2 || h.Parent("memory") != own {
		t.Fatalf("Detect: version %d, parent %s; want v2 under %s", h.Version(), h.Parent("memory"), own)
	}
	if got := readBack(t, own, "cgroup.subtree_control"); got != "+cpu +memory +pids" {
		t.Errorf("cgroup.subtree_control of benchrig's group: %q, want the controllers enabled", got)
	}
	g, err := h.Create("fix", Limits{CPUs: 1.5, Memory: 512 << 20, Swap: new(int64(0)), Pids: 256})
	if err != nil {
		t.Fatal(err)
	}
	dir := g.Path("")
	if filepath.Dir(dir) != own || !strings.HasPrefix(g.Name(), "benchrig-") || !strings.HasSuffix(g.Name(), "-fix") || len(g.Dirs()) != 1 {
		t.Errorf("group %s at %s (dirs %v), want one directory benchrig-…-fix under %s", g.Name(), dir, g.Dirs(), own)
	}
	for file, want := range map[string]string{"cpu.max": "150000 100000", "memory.max": "536870912", "memory.swap.max": "0", "pids.max": "256"} {
		if got := readBack(t, dir, file); got != want {
			t.Errorf("%s: %q, want %q", file, got, want)
		}
	}
	if len(g.Warnings()) != 0 {
		t.Errorf("warnings %v", g.Warnings())
	}
	s, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{
		CPUUsageNS: Counter{2500000000, true}, NrPeriods: Counter{40, true}, NrThrottled: Counter{12, true}, ThrottledNS: Counter{750000000, true},
		MemoryCurrent: Counter{1 << 20, true}, MemoryPeak: Counter{64 << 20, true},
		MemoryHigh: Counter{3, true}, MemoryMax: Counter{17, true}, MemoryOOM: Counter{2, true}, MemoryOOMKill: Counter{1, true},
		PidsCurrent: Counter{3, true}, PidsPeak: Counter{32, true}, PidsMax: Counter{5, true},
	}
	if s != want {
		t.Errorf("Stats\n got %+v\nwant %+v", s, want)
	}

	// Files a kernel may lack: the counter is unavailable, not zero.
	for _, f := range []string{"memory.peak", "pids.peak", "pids.events"} {
		if err := os.Remove(filepath.Join(dir, f)); err != nil {
			t.Fatal(err)
		}
	}
	if s, err = g.Stats(); err != nil {
		t.Fatal(err)
	}
	if s.MemoryPeak.OK || s.PidsPeak.OK || s.PidsMax.OK || !s.PidsCurrent.OK || s.PidsMax.String() != "unavailable" {
		t.Errorf("with memory.peak, pids.peak and pids.events gone: %+v", s)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.current"), []byte("many\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Stats(); err == nil || !strings.Contains(err.Error(), "pids.current") {
		t.Errorf("Stats with a garbled pids.current: %v, want an error naming it", err)
	}

	// A kernel without swap accounting: a warning, not an error.
	if err := os.Remove(filepath.Join(root, "child", "memory.swap.max")); err != nil {
		t.Fatal(err)
	}
	g2, err := h.Create("noswap", Limits{Memory: 64 << 20, Swap: new(int64(0))})
	if err != nil {
		t.Fatal(err)
	}
	if w := g2.Warnings(); len(w) != 1 || !strings.Contains(w[0], "swap is not limited") {
		t.Errorf("warnings %q, want one that swap is not limited", w)
	}
	if _, err := h.Create("Bad_Name", Limits{}); err == nil || !strings.Contains(err.Error(), "a–z, 0–9 and -") {
		t.Errorf("Create with a bad name: %v", err)
	}
	if _, err := h.Create(strings.Repeat("a", 65), Limits{}); err == nil {
		t.Error("Create with a 65-character name: no error")
	}
	if _, err := h.Create("ok", Limits{Pids: -1}); err == nil || !strings.Contains(err.Error(), "Pids") {
		t.Errorf("Create with bad limits: %v", err)
	}
}

// At the root of the unified hierarchy, groups go into a benchrig group
// made there, with the controllers enabled for its children.
func TestV2FixtureAtRoot(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join("testdata", "v2"))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "proc-self-cgroup"), []byte("0::/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	testHookMkdir = func(dir string) error { return os.CopyFS(dir, os.DirFS(filepath.Join(root, "child"))) }
	t.Cleanup(func() { testHookMkdir = nil })
	h, err := DetectAt(filepath.Join(root, "proc-self-cgroup"), filepath.Join(root, "mountinfo"), root)
	if err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(root, "sys/fs/cgroup/benchrig")
	if h.Parent("") != shared {
		t.Fatalf("parent %s, want %s", h.Parent(""), shared)
	}
	g, err := h.Create("x", Limits{Pids: 8})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(g.Path("pids")) != shared || readBack(t, shared, "cgroup.subtree_control") != "+cpu +memory +pids" {
		t.Errorf("group at %s; the shared parent's subtree_control %q", g.Path("pids"), readBack(t, shared, "cgroup.subtree_control"))
	}
}

// v1 with cpu and cpuacct mounted together, memory mounted from a
// container's group, pids at the root.
func TestV1Fixture(t *testing.T) {
	root, h, err := fixture(t, "v1")
	if err != nil {
		t.Fatal(err)
	}
	cg := filepath.Join(root, "sys/fs/cgroup")
	for c, want := range map[string]string{
		"cpu": "cpu,cpuacct/benchrig", "cpuacct": "cpu,cpuacct/benchrig", "memory": "memory/x", "pids": "pids/benchrig",
	} {
		if got := h.Parent(c); h.Version() != V1 || got != filepath.Join(cg, want) {
			t.Errorf("version %d, parent for %s %s, want %s", h.Version(), c, got, filepath.Join(cg, want))
		}
	}
	g, err := h.Create("fix", Limits{CPUs: 0.25, Memory: 64 << 20, Swap: new(int64(16 << 20)), Pids: 100})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Dirs()) != 3 || g.Path("cpu") != g.Path("cpuacct") {
		t.Errorf("dirs %v, want 3 (cpu and cpuacct together)", g.Dirs())
	}
	for _, c := range []struct{ ctl, file, want string }{
		{"cpu", "cpu.cfs_period_us", "100000"}, {"cpu", "cpu.cfs_quota_us", "25000"},
		{"memory", "memory.limit_in_bytes", "67108864"}, {"pids", "pids.max", "100"},
	} {
		if got := readBack(t, g.Path(c.ctl), c.file); got != c.want {
			t.Errorf("%s: %q, want %q", c.file, got, c.want)
		}
	}
	if w := g.Warnings(); len(w) != 1 || !strings.Contains(w[0], "memory.memsw.limit_in_bytes") {
		t.Errorf("warnings %q, want one naming the missing memory.memsw.limit_in_bytes", w)
	}
	s, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	want := Stats{
		CPUUsageNS: Counter{1500000000, true}, NrPeriods: Counter{30, true}, NrThrottled: Counter{7, true}, ThrottledNS: Counter{420000000, true},
		MemoryCurrent: Counter{2 << 20, true}, MemoryPeak: Counter{8 << 20, true}, MemoryFailcnt: Counter{9, true},
		MemoryOOMKill: Counter{2, true}, UnderOOM: Counter{0, true},
		PidsCurrent: Counter{4, true}, PidsMax: Counter{0, true},
	}
	if s != want {
		t.Errorf("Stats\n got %+v\nwant %+v", s, want)
	}
}

func TestDetectNeither(t *testing.T) {
	root, _, err := fixture(t, "none")
	if err == nil {
		t.Fatal("Detect found a usable hierarchy in a fixture with none")
	}
	for _, want := range []string{"no usable cgroup hierarchy", "v1: controller pids is not mounted", "v2: ", "lacks controller cpu, memory, pids"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q\nwant %q in it", err, want)
		}
	}
	_, err = DetectAt(filepath.Join(root, "no-such-file"), filepath.Join(root, "mountinfo"), root)
	if err == nil || !strings.Contains(err.Error(), "no-such-file") {
		t.Errorf("Detect without /proc/self/cgroup: %v", err)
	}
}

func TestParseOwner(t *testing.T) {
	for name, want := range map[string]bool{
		"benchrig-12-345-sample-1": true, "benchrig-12-345-": false, "benchrig-x-345-a": false,
		"benchrig-12-a": false, "benchrig": false, "other-12-345-a": false, "benchrig-0-1-a": false,
	} {
		if _, _, ok := parseOwner(name); ok != want {
			t.Errorf("parseOwner(%q): %v, want %v", name, ok, want)
		}
	}
}
