// Package all is the registry's import list: importing it registers every
// protocol benchrig speaks (internal/protocol/KEY: its suite section, its
// driver on an address, its calibrate peer), the server kinds that serve
// them (internal/protocol/KEY/server) and their quick modes
// (internal/protocol/KEY/KEYquick, commands of the CLI). A new protocol is
// a few lines here. Tests below the CLI (whose packages the quick modes
// import) import the protocols' own packages instead.
package all

import (
	_ "github.com/benchrig/benchrig/internal/protocol/grpc"
	_ "github.com/benchrig/benchrig/internal/protocol/grpc/grpcquick"
	_ "github.com/benchrig/benchrig/internal/protocol/http"
	_ "github.com/benchrig/benchrig/internal/protocol/http/httpquick"
	_ "github.com/benchrig/benchrig/internal/protocol/pg"
	_ "github.com/benchrig/benchrig/internal/protocol/pg/pgquick"
	_ "github.com/benchrig/benchrig/internal/protocol/pg/server"
	_ "github.com/benchrig/benchrig/internal/protocol/resp"
	_ "github.com/benchrig/benchrig/internal/protocol/resp/respquick"
	_ "github.com/benchrig/benchrig/internal/protocol/resp/server"
)
