package redisephemeral

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/target"
)

// Version runs "bin --version" as a target is run (target.Output: under a
// watchdog, without benchrig's withheld environment, nothing of it left
// once it returns) and returns the version it reports, e.g. "7.0.15" from
// "Redis server v=7.0.15 sha=00000000:0 malloc=jemalloc-5.3.0 …".
func Version(ctx context.Context, bin string) (string, error) {
	out, _, err := target.Output(ctx, target.Command{Argv: []string{bin, "--version"}, Timeout: 10 * time.Second})
	if err != nil {
		return "", fmt.Errorf("redis: %s --version: %w", bin, err)
	}
	v, ok := parseVersion(string(out))
	if !ok {
		return "", fmt.Errorf("redis: %s --version: no \"v=\" field in %q", bin, strings.TrimSpace(string(out)))
	}
	return v, nil
}

// parseVersion finds the "v=" field of redis-server --version output.
func parseVersion(out string) (string, bool) {
	for _, f := range strings.Fields(out) {
		if v, ok := strings.CutPrefix(f, "v="); ok && v != "" {
			return v, true
		}
	}
	return "", false
}
