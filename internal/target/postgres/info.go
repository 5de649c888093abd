package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// InfoSettings are the server settings recorded with every sample: the
// ones that bound connections or change what a request costs.
var InfoSettings = []string{
	"autovacuum", "fsync", "full_page_writes", "huge_pages", "jit", "max_connections",
	"max_wal_size", "reserved_connections", "shared_buffers", "superuser_reserved_connections",
	"synchronous_commit", "wal_level", "work_mem",
}

// Info is the provenance of a server: what it is and how it is set.
type Info struct {
	// Version is server_version ("15.18 (Debian 15.18-0+deb12u1)").
	Version string `json:"version"`
	// VersionNum is server_version_num (150018).
	VersionNum int `json:"version_num"`
	// Settings holds current_setting(name) of each InfoSettings entry the
	// server knows (reserved_connections exists from PostgreSQL 16).
	Settings map[string]string `json:"settings"`
}

// ServerInfo reads the server's version and InfoSettings.
func ServerInfo(ctx context.Context, conn *pgx.Conn) (Info, error) {
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
	return info, nil
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
