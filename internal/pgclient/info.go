package pgclient

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// InfoSettings are the server settings recorded with every sample: the
// ones that bound connections or change what a request costs.
var InfoSettings = []string{
	"autovacuum", "fsync", "full_page_writes", "huge_pages", "jit", "max_connections",
	"max_wal_size", "plan_cache_mode", "reserved_connections", "shared_buffers", "shared_preload_libraries",
	"superuser_reserved_connections", "synchronous_commit", "wal_level", "work_mem",
}

// NotSet is the value Info records for a setting asked for that the
// server does not know (current_setting(name, true) is NULL).
const NotSet = "(not set)"

// Info is the provenance of a server: what it is and how it is set.
type Info struct {
	// Version is server_version ("15.18 (Debian 15.18-0+deb12u1)").
	Version string `json:"version"`
	// VersionNum is server_version_num (150018).
	VersionNum int `json:"version_num"`
	// Settings holds current_setting(name) (what SHOW says) of each
	// InfoSettings entry the server knows (reserved_connections exists
	// from PostgreSQL 16), and of each extra name ServerInfo was given
	// (NotSet when the server does not know it).
	Settings map[string]string `json:"settings"`
	// Extensions are the extensions installed in the connection's
	// database (pg_extension): version by name.
	Extensions map[string]string `json:"extensions"`
}

// ServerInfo reads the server's version, InfoSettings and the extra
// settings (those a suite or flag changed), as the connection's session
// sees them, and the installed extensions.
func ServerInfo(ctx context.Context, conn *pgx.Conn, extra ...string) (Info, error) {
	var info Info
	err := conn.QueryRow(ctx, "SELECT current_setting('server_version'), current_setting('server_version_num')::int").
		Scan(&info.Version, &info.VersionNum)
	if err != nil {
		return Info{}, fmt.Errorf("postgres: read server version: %w", err)
	}
	rows, err := conn.Query(ctx, "SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY($1) ORDER BY name", InfoSettings)
	if err != nil {
		return Info{}, fmt.Errorf("postgres: read server settings: %w", err)
	}
	info.Settings = make(map[string]string)
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			rows.Close()
			return Info{}, fmt.Errorf("postgres: read server settings: %w", err)
		}
		info.Settings[k] = v
	}
	if err := rows.Err(); err != nil {
		return Info{}, fmt.Errorf("postgres: read server settings: %w", err)
	}
	for _, name := range extra {
		var v *string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1, true)", name).Scan(&v); err != nil {
			return Info{}, fmt.Errorf("postgres: read setting %q: %w", name, err)
		}
		info.Settings[name] = NotSet
		if v != nil {
			info.Settings[name] = *v
		}
	}
	if info.Extensions, err = extensions(ctx, conn); err != nil {
		return Info{}, err
	}
	return info, nil
}

// extensions reads pg_extension: version by name.
func extensions(ctx context.Context, conn *pgx.Conn) (map[string]string, error) {
	rows, err := conn.Query(ctx, "SELECT extname::text, extversion FROM pg_extension ORDER BY 1")
	if err != nil {
		return nil, fmt.Errorf("postgres: read pg_extension: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
		var kv [2]string
		err := r.Scan(&kv[0], &kv[1])
		return kv, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: read pg_extension: %w", err)
	}
	m := make(map[string]string, len(out))
	for _, kv := range out {
		m[kv[0]] = kv[1]
	}
	return m, nil
}

// Explain returns the plan of sql with args as EXPLAIN (FORMAT JSON) text,
// without running it.
func Explain(ctx context.Context, conn *pgx.Conn, sql string, args ...any) (string, error) {
	var plan []byte
	if err := conn.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+sql, args...).Scan(&plan); err != nil {
		return "", fmt.Errorf("postgres: explain %q: %w", sql, err)
	}
	if !json.Valid(plan) {
		return "", fmt.Errorf("postgres: explain %q: plan is not JSON", sql)
	}
	return string(plan), nil
}

// ParseVersion reads "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"
// into ("15.18 (Debian 15.18-0+deb12u1)", 15).
func ParseVersion(s string) (version string, major int) {
	s = strings.TrimSpace(s)
	_, v, ok := strings.Cut(s, "(PostgreSQL) ")
	if !ok {
		return "", 0
	}
	num := v
	if i := strings.IndexFunc(v, func(r rune) bool { return (r < '0' || r > '9') && r != '.' }); i >= 0 {
		num = v[:i]
	}
	first, _, _ := strings.Cut(num, ".")
	m, err := strconv.Atoi(first)
	if err != nil {
		return "", 0
	}
	return v, m
}
