package postgres

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/protocol/pg/driver"
)

// changedSettings names the settings benchrig was asked to change
// (PGOptions.Settings; shared_buffers and max_connections are among
// pgclient.InfoSettings), sorted.
func (s *PGServer) changedSettings() []string {
	return slices.Sorted(maps.Keys(s.opts.Settings))
}

// infoSettings are the target settings of a server's provenance: every
// setting read back from the server, and each installed extension's
// version as "extension.<name>".
func infoSettings(si pgclient.Info) map[string]string {
	out := make(map[string]string, len(si.Settings)+len(si.Extensions))
	maps.Copy(out, si.Settings)
	for name, v := range si.Extensions {
		out["extension."+name] = v
	}
	return out
}

// refreshInfo reads the settings and extensions again on a new
// connection, as the benchmark connections will see them (after init_sql,
// which may create extensions or ALTER the database). Called with s.mu
// held.
func (s *PGServer) refreshInfo(ctx context.Context) error {
	conn, err := pg.Connect(ctx, s.dsn)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, pg.OpTimeout)
	defer cancel()
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = conn.Close(cctx)
		cancel()
	}()
	si, err := pgclient.ServerInfo(ctx, conn, s.changedSettings()...)
	if err != nil {
		return fmt.Errorf("%w (server %s)", err, s.dsn)
	}
	s.info.Version, s.info.Settings = si.Version, infoSettings(si)
	return nil
}
