package live

// The fixtures' recorded suites name protocols: register them, as the
// command line does, so that their plans re-expand.
import (
	_ "github.com/benchrig/benchrig/internal/protocol/http"
	_ "github.com/benchrig/benchrig/internal/protocol/pg"
	_ "github.com/benchrig/benchrig/internal/protocol/resp"
)
