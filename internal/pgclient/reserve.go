package pgclient

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// Reserve is how many client connections a server can take.
type Reserve struct {
	// MaxConnections is max_connections.
	MaxConnections int `json:"max_connections"`
	// Reserved is superuser_reserved_connections plus, from PostgreSQL 16,
	// reserved_connections: slots ordinary roles cannot use.
	Reserved int `json:"reserved"`
	// Others counts client connections open besides the caller's.
	Others int `json:"others"`
}

// Available is the number of slots left for new ordinary connections.
func (r Reserve) Available() int { return r.MaxConnections - r.Reserved - r.Others }

// ReadReserve reads the connection limits and current use.
func ReadReserve(ctx context.Context, conn *pgx.Conn) (Reserve, error) {
	var maxConn, su string
	var reserved *string
	var others int
	err := conn.QueryRow(ctx, `SELECT current_setting('max_connections'),
		current_setting('superuser_reserved_connections'),
		current_setting('reserved_connections', true),
		(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid())::int`).
		Scan(&maxConn, &su, &reserved, &others)
	if err != nil {
		return Reserve{}, fmt.Errorf("postgres: read connection limits: %w", err)
	}
	var r Reserve
	var e1, e2, e3 error
	r.MaxConnections, e1 = strconv.Atoi(maxConn)
	r.Reserved, e2 = strconv.Atoi(su)
	if reserved != nil && *reserved != "" {
		var n int
		n, e3 = strconv.Atoi(*reserved)
		r.Reserved += n
	}
	if e1 != nil || e2 != nil || e3 != nil {
		return Reserve{}, fmt.Errorf("postgres: connection limits are not numbers: max_connections %q, superuser_reserved_connections %q", maxConn, su)
	}
	r.Others = others
	return r, nil
}

// CheckReserve fails when the server cannot take requested benchmark
// connections plus the caller's own control connection (conn, already
// open, so counted as one of the slots needed). The error names both
// numbers:
//
//	postgres: 64 benchmark connections + 1 control connection need 65 slots, but max_connections 50 − 3 reserved leaves 47
func CheckReserve(ctx context.Context, conn *pgx.Conn, requested int) error {
	if requested < 0 {
		return fmt.Errorf("postgres: %d benchmark connections: must not be negative", requested)
	}
	r, err := ReadReserve(ctx, conn)
	if err != nil {
		return err
	}
	need := requested + 1
	if left := r.Available(); need > left {
		msg := fmt.Sprintf("postgres: %d benchmark connections + 1 control connection need %d slots, but max_connections %d − %d reserved leaves %d",
			requested, need, r.MaxConnections, r.Reserved, r.MaxConnections-r.Reserved)
		if r.Others > 0 {
			msg += fmt.Sprintf(", and %d other client connections are already open", r.Others)
		}
		return errors.New(msg)
	}
	return nil
}
