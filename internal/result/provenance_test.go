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
