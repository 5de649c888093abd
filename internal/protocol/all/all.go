// Package all is the registry's import list: importing it registers every
// protocol benchrig speaks (internal/protocol/KEY) and the server kinds
// that serve them (internal/protocol/KEY/server) with the suite and the
// systems. A new protocol is one line here.
package all

import (
	_ "github.com/benchrig/benchrig/internal/protocol/http"
	_ "github.com/benchrig/benchrig/internal/protocol/pg"
	_ "github.com/benchrig/benchrig/internal/protocol/pg/server"
	_ "github.com/benchrig/benchrig/internal/protocol/resp"
	_ "github.com/benchrig/benchrig/internal/protocol/resp/server"
)
