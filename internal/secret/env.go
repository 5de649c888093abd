package secret

import (
	"os"
	"sort"
	"strings"
	"sync"
)

// The environment of the processes benchrig starts. benchrig reads some
// credentials from its own environment: a postgres target's dsn_env, a
// RESP endpoint's token_env, the agents' shared token
// (BENCHRIG_AGENT_TOKEN). They are benchrig's, not those of the processes
// it starts: Withhold names them, and Environ, the environment every child
// starts from (targets, sidecars, version probes, redis-server, git, the
// watchdogs), leaves them out. A child meant to have one is given it
// explicitly (a sidecar the token of the endpoint it serves).

var withheld struct {
	sync.RWMutex
	names map[string]bool
}

// Withhold marks environment variables as credentials of benchrig's own:
// no environment Environ returns holds them. Empty names are ignored. It
// is safe for concurrent use.
func Withhold(names ...string) {
	withheld.Lock()
	defer withheld.Unlock()
	for _, n := range names {
		if n = strings.TrimSpace(n); n == "" {
			continue
		}
		if withheld.names == nil {
			withheld.names = map[string]bool{}
		}
		withheld.names[n] = true
	}
}

// Withheld lists the withheld variables' names, sorted.
func Withheld() []string {
	withheld.RLock()
	defer withheld.RUnlock()
	out := make([]string, 0, len(withheld.names))
	for n := range withheld.names {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Environ is benchrig's environment (os.Environ) without the withheld
// variables: the one a process benchrig starts inherits, to which its own
// entries (a target's env, a companion's DSN) are added.
func Environ() []string { return WithoutWithheld(os.Environ()) }

// WithoutWithheld returns env (KEY=VALUE entries) without the withheld
// variables.
func WithoutWithheld(env []string) []string {
	withheld.RLock()
	defer withheld.RUnlock()
	out := make([]string, 0, len(env))
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !withheld.names[k] {
			out = append(out, kv)
		}
	}
	return out
}
