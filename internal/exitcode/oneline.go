package exitcode

import (
	"errors"
	"strings"

	"github.com/benchrig/benchrig/internal/secret"
)

// OneLine makes an error fit for the one line benchrig prints: the
// DSN's password replaced (the drivers already hide it; this is the last
// line of defence) and a multi-line message (pgx lists every connection
// attempt on its own line) joined into one, duplicates dropped. A usage
// error stays one.
func OneLine(err error, secrets *secret.Set) error {
	msg := err.Error()
	clean := secrets.Scrub(msg)
	if strings.Contains(clean, "\n") {
		var b strings.Builder
		seen := map[string]bool{}
		for _, line := range strings.Split(clean, "\n") {
			line = strings.TrimSpace(line)
			if line == "" || seen[line] {
				continue
			}
			seen[line] = true
			switch {
			case b.Len() == 0:
			case strings.HasSuffix(b.String(), ":"):
				b.WriteString(" ")
			default:
				b.WriteString("; ")
			}
			b.WriteString(line)
		}
		clean = b.String()
	}
	if clean == msg {
		return err
	}
	var u UsageError
	if errors.As(err, &u) {
		return Usage(errors.New(clean))
	}
	if errors.Is(err, ErrUnhealthy) {
		return err
	}
	return errors.New(clean)
}
