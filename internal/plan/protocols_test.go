package plan

// The suites of these tests name protocols and server kinds: register
// them, as the command line does (internal/protocol/all, whose quick modes
// import this package's importers, is for the command line).
import (
	_ "github.com/benchrig/benchrig/internal/protocol/http"
	_ "github.com/benchrig/benchrig/internal/protocol/pg"
	_ "github.com/benchrig/benchrig/internal/protocol/pg/server"
	_ "github.com/benchrig/benchrig/internal/protocol/resp"
	_ "github.com/benchrig/benchrig/internal/protocol/resp/server"
)
