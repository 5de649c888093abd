package plan

// The suites of these tests name protocols: register them, as the
// command line does.
import _ "github.com/benchrig/benchrig/internal/protocol/all"
