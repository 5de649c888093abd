package postgres

import (
	"context"
	"fmt"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/pgclient"
	respproto "github.com/benchrig/benchrig/internal/protocol/resp"
	"github.com/benchrig/benchrig/internal/protocol/resp/driver"
	"github.com/benchrig/benchrig/internal/protocol/resp/respserver"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/system"
	"github.com/benchrig/benchrig/internal/target"
)

// A postgres target may serve RESP beside SQL: on an endpoint of its own
// (pg_local_cache's, on a port of the server) or of a sidecar started
// beside it. The endpoint is reached like an existing redis-server (AUTH
// from a token file or variable, optional TLS), but the system under test
// stays the PostgreSQL server: its whole process tree is what samples
// measure.

// sidecarStopGrace is the time between SIGTERM and SIGKILL of a sidecar.
const sidecarStopGrace = 5 * time.Second

// respAddr resolves the endpoint's address: addr as given, or port on
// the server's host (127.0.0.1 for an ephemeral server). A port 0 with a
// sidecar picks a free loopback port.
func (p *System) respAddr() (string, error) {
	r := p.env.Target.Postgres.RESP
	if r.Addr != "" {
		return r.Addr, nil
	}
	port := r.Port
	if port == 0 {
		var err error
		if port, err = freePort(); err != nil {
			return "", fmt.Errorf("postgres.resp: pick a port for the sidecar: %w", err)
		}
	}
	host := "127.0.0.1"
	if !p.env.Target.Postgres.Ephemeral {
		if cfg, err := pgclient.ParseDSN(p.srv.DSN().Reveal()); err == nil && cfg.Host != "" && !strings.HasPrefix(cfg.Host, "/") {
			host = cfg.Host
		}
	}
	return net.JoinHostPort(host, strconv.Itoa(port)), nil
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// startSidecar starts the sidecar command once the server is ready: the
// DSN in its environment (Sidecar.DSNEnv), {port} the RESP endpoint's
// port, its output in the run's log directory. Ready when it listens on
// the endpoint's address (when there is one).
func (p *System) startSidecar(ctx context.Context, addr string) error {
	sc := p.env.Target.Postgres.Sidecar
	vars := map[string]string{}
	if addr != "" {
		_, port, _ := net.SplitHostPort(addr)
		vars[suite.PortPlaceholder] = port
	}
	vars = p.env.Vars(vars)
	argv := make([]string, len(sc.Command))
	for i, a := range sc.Command {
		argv[i] = suite.Expand(a, vars)
	}
	dsnEnv := sc.DSNEnv
	if dsnEnv == "" {
		dsnEnv = suite.DefaultSidecarDSNEnv
	}
	env := []string{dsnEnv + "=" + p.srv.DSN().Reveal()}
	if r := p.env.Target.Postgres.RESP; r != nil && r.TokenEnv != "" {
		// The token of the endpoint it serves is the sidecar's own:
		// benchrig withholds it from every other process it starts.
		if v, ok := os.LookupEnv(r.TokenEnv); ok {
			env = append(env, r.TokenEnv+"="+v)
		}
	}
	keys := make([]string, 0, len(sc.Env))
	for k := range sc.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+suite.Expand(sc.Env[k], vars))
	}
	spec := target.Spec{Name: p.env.Name + "-sidecar", Argv: argv, Env: env, LogDir: p.env.LogDir,
		CPUs: string(p.env.Target.CPUs), StopGrace: sidecarStopGrace, StartTimeout: suite.DefaultReadyTimeout.D()}
	if sc.Ready != nil {
		spec.StartTimeout = sc.Ready.Timeout.D()
	}
	if addr != "" {
		spec.Ready = target.ProbeSpec{TCP: addr}
	}
	proc, err := target.Start(ctx, spec, nil)
	if err != nil {
		return fmt.Errorf("postgres.sidecar: %w", err)
	}
	p.sidecar = proc
	p.env.Note("Sidecar %s · pid %d · DSN in $%s\n", argv[0], proc.PID(), dsnEnv)
	return nil
}

// prepareRESP reaches the RESP endpoint (started by the sidecar, or the
// server's own), checks its INFO fields and connection reserve, and, when
// asked, compares a probe batch of every resp path's keys with the rows
// over SQL.
func (p *System) prepareRESP(ctx context.Context, addr string) error {
	r := p.env.Target.Postgres.RESP
	o := respserver.RedisOptions{Addr: addr, User: r.User, TokenEnv: r.TokenEnv, TokenFile: r.TokenFile, AdminTimeout: respserver.ShortestTimeout(p.env)}
	if r.TLS != nil {
		o.TLS = resp.TLSConfig{Enabled: true, CAFile: r.TLS.CA, ServerName: r.TLS.ServerName}
	}
	srv, err := respserver.StartRedis(ctx, o)
	if err != nil {
		return fmt.Errorf("postgres.resp: %w", err)
	}
	p.resp = srv
	if err := srv.CheckInfo(ctx, r.Info); err != nil {
		return fmt.Errorf("postgres.resp.info: %w", err)
	}
	if n := p.maxConns(respproto.Key); n > 0 {
		if err := srv.CheckReserve(ctx, n); err != nil {
			return fmt.Errorf("postgres.resp: %w", err)
		}
	}
	if r.VerifyAgainstPG {
		rows := system.DatasetRows(p.env.Suite, p.env.Cells, pgclient.DefaultRows)
		batch := respserver.ProbeBatch(p.env, r.VerifyBatch)
		n, err := srv.VerifySource(ctx, p.srv.DSN(), p.srv.Options().Dataset.Table, "id", respserver.Templates(p.env), rows, batch)
		if err != nil {
			return fmt.Errorf("postgres.resp.verify_against_pg: %w", err)
		}
		p.env.Note("Pre-flight: MGETs of %d keys (at most %d each) returned exactly the rows PostgreSQL returns for them\n", n, batch)
	}
	p.env.Note("RESP endpoint %s\n", addr)
	return nil
}

// maxConns is the largest connection count of the env's cells of protocol
// proto.
func (p *System) maxConns(proto suite.Protocol) int {
	n := 0
	for _, c := range p.env.Cells {
		if c.Protocol == proto {
			n = max(n, c.Connections)
		}
	}
	return n
}

// respEndpoint is the RESP endpoint of a target that serves resp beside
// SQL: everything the postgres kind knows of RESP is in this file.
type respEndpoint = respserver.RedisServer

// respPath is cell c's RESP path, nil when c is not a resp cell.
func (p *System) respPath(c suite.Cell) *respproto.Path { return respproto.PathOf(p.env.Suite, c) }

// respSpec gives a resp sample its driver (the endpoint's address, AUTH
// and TLS), the PostgreSQL server to sample, and its statistics: the
// statistics query, the endpoint's INFO fields and the driver's own
// counters.
func (p *System) respSpec(c suite.Cell, base system.Spec) (system.Spec, error) {
	path := respproto.PathOf(p.env.Suite, c)
	if path.ValidateSampled > 0 {
		return base, fmt.Errorf("path %q: validate_sampled compares with rows benchrig filled; a postgres target's endpoint serves its own (use postgres.resp.verify_against_pg)", c.Path)
	}
	cfg := respproto.Config(p.env.Suite, path, c, base.Engine.Seed)
	ps, err := p.resp.Spec(cfg)
	if err != nil {
		return base, fmt.Errorf("path %q: %w", c.Path, err)
	}
	info := p.srv.Info()
	info.Settings["resp"] = p.resp.Addr()
	base.Driver, base.Attach, base.AttachInfo = ps.Driver, p.sampled(), info
	base.Stats = respproto.Stats(ps.Driver.(*resp.Driver),
		system.MergeStats(p.userStats(), p.resp.FieldStats(p.env.Target.Postgres.RESP.Info)))
	base.Judge = respproto.Judge
	base.PreChecks, base.PostChecks = ps.PreChecks, ps.PostChecks
	// The endpoint serves the table's rows: benchrig's own on an
	// ephemeral server.
	system.DefaultMaxMiss(&base.Thresholds, p.env.Suite, c, p.env.Target.Postgres.Ephemeral)
	base.DriverConfig = ps.DriverConfig
	base.SystemConfig = system.JSON(struct {
		Postgres PGOptions               `json:"postgres"`
		RESP     respserver.RedisOptions `json:"resp"`
	}{p.srv.Options(), p.resp.Options()})
	return base, nil
}

// stopSidecar stops the sidecar, if one runs.
func (p *System) stopSidecar(ctx context.Context) error {
	if p.sidecar == nil {
		return nil
	}
	err := p.sidecar.Stop(ctx)
	p.sidecar = nil
	return err
}

// sidecarInfo is what the provenance records of the sidecar.
func (p *System) sidecarInfo(prov *result.Provenance) {
	if p.sidecar == nil {
		return
	}
	if prov.Settings == nil {
		prov.Settings = map[string]string{}
	}
	prov.Settings["sidecar"] = strings.Join(p.sidecar.Spec().RedactedBy(p.env.Suite.Policy(), nil).Argv, " ")
	prov.Settings["sidecar_pid"] = strconv.Itoa(p.sidecar.PID())
}

// withSidecar is the target a sample measures when a sidecar runs: the
// PostgreSQL server (the postmaster's whole tree) and the sidecar's tree,
// sampled as one; it is alive while both are.
type withSidecar struct {
	*PGServer
	sidecar *target.Process
}

var _ system.Companioned = withSidecar{}

// AlsoPIDs returns the sidecar's PID.
func (w withSidecar) AlsoPIDs() []int { return []int{w.sidecar.PID()} }

// Alive reports whether the server and the sidecar both still run.
func (w withSidecar) Alive() bool { return w.PGServer.Alive() && w.sidecar.Alive() }

// sampled is the target of a sample: the server, with its sidecar.
func (p *System) sampled() system.Target {
	if p.sidecar == nil || p.srv.PID() == 0 {
		return p.srv
	}
	return withSidecar{p.srv, p.sidecar}
}
