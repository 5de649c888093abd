package main

import (
	"github.com/benchrig/benchrig/internal/server/postgres"
	"github.com/benchrig/benchrig/internal/server/redis"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/system"
	"github.com/benchrig/benchrig/internal/system/attach"
	"github.com/benchrig/benchrig/internal/system/command"
)

// The command line registers one system per target kind; the runner finds
// them by kind (system.New), so package run knows no protocol. A new kind
// is one line here and one row of suite.Capabilities.
func init() {
	system.Register(suite.KindCommand, command.New)
	system.Register(suite.KindAttach, attach.New)
	system.Register(suite.KindAddress, attach.NewAddress)
	system.Register(suite.KindPostgres, postgres.New)
	system.Register(suite.KindRedis, redis.New)
}
