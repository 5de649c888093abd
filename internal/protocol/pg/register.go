// Package pg is the PostgreSQL protocol of benchrig: its suite section
// (paths.NAME.pg) and its registration with the suite. The client is in
// the driver subpackage; the postgres target kind that serves it is in
// internal/protocol/pg/server.
package pg

import "github.com/benchrig/benchrig/internal/suite"

// Key is the protocol's name in suites and results.
const Key suite.Protocol = "pg"

func init() {
	suite.RegisterProtocol(suite.ProtocolInfo{Key: Key, NewPath: func() suite.PathSpec { return new(Path) }, Keyed: true})
	suite.RegisterKind(suite.KindPostgres, Key, true)
}

// PathOf returns the pg section of a cell's path (nil when it is not a pg
// path).
func PathOf(s *suite.Suite, c suite.Cell) *Path {
	if p := s.Paths[c.Path]; p != nil {
		q, _ := p.Spec.(*Path)
		return q
	}
	return nil
}
