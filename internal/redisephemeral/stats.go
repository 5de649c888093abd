package redisephemeral

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// Info runs INFO with the given section ("" for the default sections; several
// may be given separated by spaces, e.g. "stats memory") and returns its
// fields as a map ("keyspace_hits" → "42"). Section headers and blank lines
// are left out.
func (s *Server) Info(ctx context.Context, section string) (map[string]string, error) {
	args := append([]string{"INFO"}, strings.Fields(section)...)
	text, err := s.Do(ctx, args...)
	if err != nil {
		return nil, err
	}
	return parseInfo(text), nil
}

// parseInfo splits INFO output into fields.
func parseInfo(text string) map[string]string {
	m := make(map[string]string)
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if ok {
			m[k] = v
		}
	}
	return m
}

// Stats are the server-side figures a benchmark samples before and after a
// window; Sub gives the window's delta.
type Stats struct {
	// KeyspaceHits counts successful key lookups (a counter).
	KeyspaceHits int64 `json:"keyspace_hits"`
	// KeyspaceMisses counts lookups of missing keys (a counter).
	KeyspaceMisses int64 `json:"keyspace_misses"`
	// TotalCommandsProcessed counts commands, including INFO itself (a
	// counter).
	TotalCommandsProcessed int64 `json:"total_commands_processed"`
	// UsedMemory is the allocator's view of memory in use, in bytes (a
	// gauge).
	UsedMemory int64 `json:"used_memory"`
}

// Sub returns the change from prev to s for the counters; UsedMemory, a gauge,
// keeps s's value.
func (s Stats) Sub(prev Stats) Stats {
	return Stats{
		KeyspaceHits:           s.KeyspaceHits - prev.KeyspaceHits,
		KeyspaceMisses:         s.KeyspaceMisses - prev.KeyspaceMisses,
		TotalCommandsProcessed: s.TotalCommandsProcessed - prev.TotalCommandsProcessed,
		UsedMemory:             s.UsedMemory,
	}
}

// Stats reads the current Stats with one INFO command.
func (s *Server) Stats(ctx context.Context) (Stats, error) {
	m, err := s.Info(ctx, "")
	if err != nil {
		return Stats{}, err
	}
	return statsFromInfo(m)
}

// statsFromInfo picks the Stats fields out of INFO output.
func statsFromInfo(m map[string]string) (Stats, error) {
	var st Stats
	for _, f := range []struct {
		name string
		dst  *int64
	}{
		{"keyspace_hits", &st.KeyspaceHits},
		{"keyspace_misses", &st.KeyspaceMisses},
		{"total_commands_processed", &st.TotalCommandsProcessed},
		{"used_memory", &st.UsedMemory},
	} {
		v, ok := m[f.name]
		if !ok {
			return Stats{}, fmt.Errorf("redis: INFO has no field %q", f.name)
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return Stats{}, fmt.Errorf("redis: INFO field %q: %q is not an integer", f.name, v)
		}
		*f.dst = n
	}
	return st, nil
}
