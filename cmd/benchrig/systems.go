package main

import (
	_ "github.com/benchrig/benchrig/internal/protocol/all"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/system"
	"github.com/benchrig/benchrig/internal/system/attach"
	"github.com/benchrig/benchrig/internal/system/command"
)

// The command line registers the generic systems, one per target kind that
// serves any protocol registered Generic; the server kinds (postgres,
// redis) register themselves with their protocol (internal/protocol/all).
// The runner finds them by kind (system.New), so package run knows no
// protocol.
func init() {
	system.Register(suite.KindCommand, command.New)
	system.Register(suite.KindAttach, attach.New)
	system.Register(suite.KindAddress, attach.NewAddress)
}
