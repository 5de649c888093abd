package result

import (
	"encoding/json"
	"fmt"
)

// VersionLine is benchrig --version: "v1.2 (commit abc…, go1.26.8)".
func (t Tool) VersionLine() string {
	return fmt.Sprintf("%s (commit %s, %s)", t.Version, t.shownCommit(", dirty"), t.Go)
}

// VersionText is benchrig version: the version, commit and Go version,
// one line each.
func (t Tool) VersionText() string {
	return fmt.Sprintf("benchrig %s\ncommit %s\n%s\n", t.Version, t.shownCommit(" (dirty)"), t.Go)
}

// shownCommit is the commit as the version lines show it: "unknown" when
// there is none, dirty appended to a dirty tree's.
func (t Tool) shownCommit(dirty string) string {
	c := t.Commit
	if c == "" {
		c = "unknown"
	}
	if t.Dirty {
		c += dirty
	}
	return c
}

// DriverAddr is the address a sample's driver used (its config's addr),
// or def.
func (s *Sample) DriverAddr(def string) string {
	var d struct {
		Addr string `json:"addr"`
	}
	if s.Config == nil || json.Unmarshal(s.Config.Driver, &d) != nil || d.Addr == "" {
		return def
	}
	return d.Addr
}
