package result

import (
	"strings"
	"testing"
)

func TestProvenanceChanges(t *testing.T) {
	base := func() Header {
		return Header{
			Suite: SuiteInfo{File: "s.yaml", SHA256: "aaaaaaaaaaaaaaaaaaaa"},
			Targets: map[string]Provenance{
				"node": {Kind: "command", Binary: "/usr/bin/node", SHA256: "1111111111111111", Version: "v20.1.0", GitRev: "abc"},
				"pg":   {Kind: "postgres", Version: "15.4", Settings: map[string]string{"shared_buffers": "128MB", "fsync": "off"}},
			},
		}
	}
	for _, tc := range []struct {
		name   string
		change func(*Header)
		want   []string
	}{
		{"nothing", func(*Header) {}, nil},
		{"path, git revision and plans only", func(h *Header) {
			n := h.Targets["node"]
			n.Binary, n.GitRev, n.Plans = "/opt/node", "def", map[string]string{"q": "Seq Scan"}
			h.Targets["node"] = n
		}, nil},
		{"binary replaced", func(h *Header) {
			n := h.Targets["node"]
			n.SHA256 = "2222222222222222"
			h.Targets["node"] = n
		}, []string{`target "node": binary sha256 111111111111… → 222222222222…`}},
		{"suite edited", func(h *Header) { h.Suite.SHA256 = "bbbb" }, []string{"suite s.yaml: sha256 aaaaaaaaaaaa… → bbbb"}},
		{"server version and settings", func(h *Header) {
			h.Targets["pg"] = Provenance{Kind: "postgres", Version: "16.1", Settings: map[string]string{"shared_buffers": "1GB", "jit": "on"}}
		}, []string{
			`target "pg": version "15.4" → "16.1"`,
			`target "pg": setting fsync removed (was "off")`,
			`target "pg": setting jit added: "on"`,
			`target "pg": setting shared_buffers "128MB" → "1GB"`,
		}},
		{"version unknown on one side", func(h *Header) {
			n := h.Targets["node"]
			n.Version = VersionUnknown
			h.Targets["node"] = n
		}, nil},
		{"target added and removed", func(h *Header) {
			delete(h.Targets, "node")
			h.Targets["bun"] = Provenance{Kind: "command"}
		}, []string{`target "bun": not in the file, added`, `target "node": in the file, gone now`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, now := base(), base()
			tc.change(&now)
			got := ProvenanceChanges(old, now)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

// TestRanChanges: a file that ran with other bytes under the same kind and
// path is a change; one only a side ran, or a reordering, is not.
func TestRanChanges(t *testing.T) {
	old := []RanFile{
		{Path: "/bin/dash", SHA256: "d1d1d1d1d1d1d1d1", Kind: "exe"},
		{Path: "/srv/server", SHA256: "aaaaaaaaaaaaaaaa", Kind: "exe"},
		{Path: "/srv/wrap.sh", SHA256: "5555555555555555", Kind: "script"},
	}
	if got := RanChanges("api", old, []RanFile{old[2], old[1], old[0]}); len(got) != 0 {
		t.Errorf("reordered: %v", got)
	}
	if got := RanChanges("api", old, []RanFile{old[1], {Path: "/usr/bin/git", SHA256: "9", Kind: "exe"}}); len(got) != 0 {
		t.Errorf("files on one side only: %v", got)
	}
	now := []RanFile{old[0], {Path: "/srv/server", SHA256: "bbbbbbbbbbbbbbbb", Kind: "exe"}, {Path: "/srv/wrap.sh", SHA256: "6666666666666666", Kind: "script"}}
	want := []string{
		`target "api": exe /srv/server sha256 aaaaaaaaaaaa… → bbbbbbbbbbbb…`,
		`target "api": script /srv/wrap.sh sha256 555555555555… → 666666666666…`,
	}
	if got := RanChanges("api", old, now); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
