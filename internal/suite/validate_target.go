package suite

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
)

var (
	paramNameRE     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	paramValueRE    = regexp.MustCompile(`^[A-Za-z0-9./][A-Za-z0-9._+:@/-]*$`)
	sharedBuffersRE = regexp.MustCompile(`^[0-9]+(kB|MB|GB|TB)?$`)
	pgSettingRE     = regexp.MustCompile(`^[a-z_][a-z0-9_.]*$`)
	keywordPassRE   = regexp.MustCompile(`(^|\s)password\s*=`)
)

// targetDefaults fills the defaults of a decoded target that depend on what
// was written.
func (s *Suite) targetDefaults(name string, t *Target) {
	f := child("targets", name)
	s.metricsDefaults(f+".metrics", t.Metrics)
	if t.Ready != nil && !s.loc.present(f+".ready.timeout") {
		t.Ready.Timeout = DefaultReadyTimeout
	}
	for i := range t.Checks {
		cf := index(f+".checks", i)
		if !s.loc.present(cf + ".status") {
			t.Checks[i].Status = 200
		}
		if t.Checks[i].Method == "" {
			t.Checks[i].Method = "GET"
		}
	}
}

func (s *Suite) validateTarget(name string, t *Target) {
	l, f := s.loc, child("targets", name)
	l.checkName(f, name)
	if t == nil {
		l.errf(f, "missing command: a command target needs command: [program, args…]; other kinds: postgres, redis, attach, address")
		return
	}
	kinds := setNames([]string{"command", "postgres", "redis", "attach", "address"},
		t.Command != nil, t.Postgres != nil, t.Redis != nil, t.Attach != nil, t.Address != nil)
	switch len(kinds) {
	case 0:
		l.errf(f, "missing command: a command target needs command: [program, args…]; other kinds: postgres, redis, attach, address")
	case 1:
	default:
		l.exclusive(f, kinds, "a target is one of command, postgres, redis, attach, address")
	}
	kind := t.Kind()
	if kind == KindCommand {
		if len(t.Command) == 0 {
			l.errf(f+".command", "must not be empty; accepted: [program, args…]")
		} else if strings.TrimSpace(t.Command[0]) == "" {
			l.errf(f+".command[0]", "the program must not be empty")
		}
	}
	s.checkTargetFields(f, kind, t)
	s.checkLimits(f, t)
	l.checkPort(f+".port", t.Port, 0)
	l.checkCPUs(f+".cpus", t.CPUs)
	for _, k := range sortedKeys(t.Env) {
		l.checkEnvName(child(f+".env", k), k)
	}
	s.checkServes(f, t)
	s.checkParams(f, t)
	s.checkMetrics(f+".metrics", kind, t.Metrics)
	if t.Ready != nil {
		s.checkReady(f+".ready", t.Ready)
	}
	for i, c := range t.Checks {
		s.checkCheck(index(f+".checks", i), c)
	}
	// Checks are benchrig's own HTTP requests (package target), as
	// readiness probes are: the target must answer HTTP.
	if len(t.Checks) > 0 && !t.Serve("http") {
		l.errf(f+".checks", "checks are HTTP requests; target %q does not serve http (serves: %s)", name, protoList(t.Protocols()))
	}
	s.checkCompanions(f, name, t)
	switch kind {
	case KindPostgres:
		s.checkPostgres(f+".postgres", t.Postgres)
		s.checkPGExtras(f, t)
	case KindRedis:
		s.checkRedis(f+".redis", t.Redis)
	case KindAttach:
		s.checkAttach(f+".attach", t.Attach)
	case KindAddress:
		if a := t.Address.Addr; a != "" {
			l.checkAddr(f+".address.addr", a)
		}
	}
}

// checkTargetFields reports fields that mean nothing for the target's kind.
func (s *Suite) checkTargetFields(f, kind string, t *Target) {
	started := kind != KindAttach && kind != KindAddress
	for _, c := range []struct {
		name string
		set  bool
		ok   bool
		why  string
	}{
		{"dir", t.Dir != "", kind == KindCommand, "only a command target has a working directory"},
		{"version_command", t.VersionCommand != nil, kind == KindCommand, "only a command target's runtime is run for its version (postgres and redis targets report theirs)"},
		{"ready", t.Ready != nil, kind == KindCommand, "postgres and redis targets have their own readiness probe; attached ones are running"},
		{"env", t.Env != nil, started, "an attached target is not started by benchrig"},
		{"params", t.Params != nil, started, "params vary how benchrig starts a target; an attached one is not started"},
	} {
		if c.set && !c.ok && kind != "" {
			s.loc.errf(f+"."+c.name, "not accepted for a %s target: %s", kind, c.why)
		}
	}
}

func (s *Suite) checkServes(f string, t *Target) {
	seen := map[Protocol]bool{}
	for i, p := range t.Serves {
		switch kind := t.Kind(); {
		case !registered(p):
			s.loc.errf(index(f+".serves", i), "unknown protocol %q; accepted: %s", string(p), strings.Join(protocolNames(), ", "))
		case kind != "" && !CanServe(kind, p):
			s.loc.errf(index(f+".serves", i), "a %s target cannot serve %s; accepted: %s", kind, string(p), capList(kind))
		}
		if seen[p] {
			s.loc.errf(index(f+".serves", i), "duplicate protocol %q", string(p))
		}
		seen[p] = true
	}
}

// maxParamValueLen bounds a param value (a path to a runtime binary fits),
// maxVersionArgs a version_command.
const (
	maxParamValueLen = 1024
	maxVersionArgs   = 64
)

// paramValueProblem says what is wrong with a param value, "" when it is
// accepted: letters, digits and . _ + : @ - /, starting with a letter, a
// digit, '.' or '/', at most maxParamValueLen bytes. A '/' makes a path to
// a binary (node_modules/node16/bin/node, ../bin/node); an empty path
// segment ("a//b") or a trailing '/' (a directory) is refused.
func paramValueProblem(v string) string {
	const accepted = "accepted: letters, digits and . _ + : @ - /, starting with a letter, a digit, '.' or '/'"
	switch {
	case len(v) > maxParamValueLen:
		return fmt.Sprintf("%d bytes, at most %d", len(v), maxParamValueLen)
	case !paramValueRE.MatchString(v):
		return accepted
	case strings.Contains(v, "//"):
		return "empty path segment (\"//\")"
	case strings.HasSuffix(v, "/") && v != "/":
		return "a path ending in '/' names a directory, not a binary"
	}
	return ""
}

// checkParams checks a target's params and every placeholder of the fields
// they are substituted into; a param no placeholder uses would make
// identical variants, so it is reported.
func (s *Suite) checkParams(f string, t *Target) {
	l := s.loc
	allowed := map[string]bool{PortPlaceholder: true}
	for _, name := range sortedKeys(t.Params) {
		pf := child(f+".params", name)
		if !paramNameRE.MatchString(name) {
			l.errf(pf, "invalid param name %q; accepted: letters, digits and '_', not starting with a digit", name)
		}
		if name == PortPlaceholder || name == IDPlaceholder {
			l.errf(pf, "param name %q is reserved for the {%s} placeholder", name, name)
		}
		values := t.Params[name]
		if len(values) == 0 {
			l.errf(pf, "must list at least one value")
		}
		seen := map[string]int{}
		for i, v := range values {
			if msg := paramValueProblem(v); msg != "" {
				l.errf(index(pf, i), "invalid value %q: %s", v, msg)
			}
			if j, dup := seen[v]; dup {
				l.errf(index(pf, i), "duplicate value %q (also at [%d])", v, j)
			}
			seen[v] = i
		}
		allowed[name] = true
	}
	used := map[string]bool{}
	check := func(field, v string) { l.checkPlaceholders(field, v, allowed, used) }
	for i, a := range t.Command {
		check(index(f+".command", i), a)
	}
	if t.VersionCommand != nil && (len(t.VersionCommand) == 0 || strings.TrimSpace(t.VersionCommand[0]) == "") {
		l.errf(f+".version_command", "needs [program, args…], e.g. [node, --version]")
	}
	if len(t.VersionCommand) > maxVersionArgs {
		l.errf(f+".version_command", "%d arguments, at most %d", len(t.VersionCommand), maxVersionArgs)
	}
	for i, a := range t.VersionCommand {
		check(index(f+".version_command", i), a)
	}
	check(f+".dir", t.Dir)
	for _, k := range sortedKeys(t.Env) {
		check(child(f+".env", k), t.Env[k])
	}
	if t.Ready != nil {
		check(f+".ready.http", t.Ready.HTTP)
		check(f+".ready.tcp", t.Ready.TCP)
	}
	for i, c := range t.Checks {
		check(index(f+".checks", i)+".url", c.URL)
		check(index(f+".checks", i)+".body", c.Body)
	}
	if t.Metrics != nil {
		check(f+".metrics.url", t.Metrics.URL)
	}
	if t.Postgres != nil {
		check(f+".postgres.bin_dir", t.Postgres.BinDir)
	}
	if t.Redis != nil {
		check(f+".redis.bin", t.Redis.Bin)
	}
	if lm := t.Limits; lm != nil { // checked in checkLimits
		for _, v := range []string{lm.CPUs, lm.Memory, lm.Swap, lm.Pids} {
			for _, n := range placeholders(v) {
				used[n] = true
			}
		}
	}
	if t.Postgres != nil && t.Postgres.Sidecar != nil {
		// checked in checkPGExtras ({id} may stay there as written)
		sc := t.Postgres.Sidecar
		for _, v := range append(append([]string(nil), sc.Command...), mapValues(sc.Env)...) {
			for _, n := range placeholders(v) {
				used[n] = true
			}
		}
	}
	for _, name := range sortedKeys(t.Params) {
		if !used[name] {
			l.errf(child(f+".params", name), "param %q is not used: no {%s} placeholder in command, env, dir, ready, checks, limits, bin_dir, bin or sidecar, so its variants would be identical", name, name)
		}
	}
}

// mapValues lists m's values in key order.
func mapValues(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, m[k])
	}
	return out
}

func (s *Suite) checkReady(f string, r *Ready) {
	l := s.loc
	l.exclusive(f, setNames([]string{"http", "tcp"}, r.HTTP != "", r.TCP != ""), "give one readiness probe")
	if r.HTTP != "" {
		l.checkURL(f+".http", r.HTTP)
	}
	if r.TCP != "" {
		l.checkAddr(f+".tcp", r.TCP)
	}
}

func (s *Suite) checkCheck(f string, c Check) {
	l := s.loc
	if c.URL == "" {
		l.errf(f+".url", "required: the URL to request")
	} else {
		l.checkURL(f+".url", c.URL)
	}
	l.checkMethod(f+".method", c.Method)
	l.checkStatus(f+".status", c.Status)
}

func (s *Suite) checkPostgres(f string, p *Postgres) {
	l := s.loc
	sources := setNames([]string{"ephemeral", "dsn", "dsn_env"}, p.Ephemeral, p.DSN != "", p.DSNEnv != "")
	switch {
	case len(sources) == 0:
		l.errf(f, "needs one of ephemeral: true (a new server per run), dsn_env or dsn (an existing server)")
	case p.Ephemeral && p.DSN != "":
		l.errf(f+".dsn", "dsn and ephemeral are exclusive: ephemeral starts a new server, dsn names an existing one")
	case p.Ephemeral && p.DSNEnv != "":
		l.errf(f+".dsn_env", "dsn_env and ephemeral are exclusive: ephemeral starts a new server, dsn_env names an existing one")
	default:
		l.exclusive(f, sources, "give the DSN once")
	}
	if p.DSN != "" && dsnHasPassword(p.DSN) {
		l.errf(f+".dsn", "contains a password; suites are recorded with every result, so put the DSN in an environment variable named by dsn_env (or the password in PGPASSWORD)")
	}
	if p.DSNEnv != "" {
		l.checkEnvName(f+".dsn_env", p.DSNEnv)
	}
	if !p.Ephemeral {
		for _, c := range []struct {
			name string
			set  bool
		}{{"bin_dir", p.BinDir != ""}, {"shared_buffers", p.SharedBuffers != ""}, {"max_connections", p.MaxConnections != 0}, {"settings", p.Settings != nil}} {
			if c.set {
				l.errf(f+"."+c.name, "configures an ephemeral server; set ephemeral: true or remove it")
			}
		}
	}
	if p.Table != "" && !pgIdentRE.MatchString(p.Table) {
		l.errf(f+".table", "invalid table %q; accepted: a plain or schema-qualified identifier, e.g. items or public.items", p.Table)
	}
	if p.PayloadBytes < 0 || p.PayloadBytes > 1<<20 {
		l.errf(f+".payload_bytes", "must be 0 (default 64) to 1048576 bytes, got %d", p.PayloadBytes)
	}
	if p.SharedBuffers != "" && !sharedBuffersRE.MatchString(p.SharedBuffers) {
		l.errf(f+".shared_buffers", "invalid size %q; accepted: a number with kB, MB, GB or TB, e.g. 128MB", p.SharedBuffers)
	}
	if p.MaxConnections < 0 {
		l.errf(f+".max_connections", "must be ≥ 0 (0 sizes it from the matrix), got %d", p.MaxConnections)
	}
	for _, k := range sortedKeys(p.Settings) {
		if !pgSettingRE.MatchString(k) {
			l.errf(child(f+".settings", k), "invalid setting name %q; accepted: lower-case letters, digits, '_' and '.'", k)
		}
	}
	for i, q := range p.InitSQL {
		if strings.TrimSpace(q) == "" {
			l.errf(index(f+".init_sql", i), "must not be empty")
		}
	}
}

func (s *Suite) checkRedis(f string, r *Redis) {
	l := s.loc
	switch {
	case r.Ephemeral && r.Addr != "":
		l.errf(f+".addr", "addr and ephemeral are exclusive: ephemeral starts a new redis-server, addr names an existing one")
	case !r.Ephemeral && r.Addr == "":
		l.errf(f, "needs one of ephemeral: true (a new redis-server per run) or addr (an existing server)")
	}
	if r.Addr != "" {
		l.checkAddr(f+".addr", r.Addr)
	}
	if r.TokenEnv != "" {
		l.checkEnvName(f+".token_env", r.TokenEnv)
	}
	if r.TokenEnv != "" && r.TokenFile != "" {
		l.errf(f+".token_file", "token_env and token_file are exclusive: give one place to read the AUTH token from")
	}
	if r.TLS != nil && r.Ephemeral {
		l.errf(f+".tls", "an ephemeral redis-server speaks plain TCP on loopback; tls is for an existing server (addr)")
	}
	if r.MaxClients < 0 || r.MaxClients > 1_000_000 {
		l.errf(f+".max_clients", "must be 0 (default) to 1000000, got %d", r.MaxClients)
	}
	if fp := r.FillFromPG; fp != nil {
		ff := f + ".fill_from_pg"
		switch {
		case fp.Ephemeral && fp.DSNEnv != "":
			l.errf(ff+".dsn_env", "dsn_env and ephemeral are exclusive")
		case !fp.Ephemeral && fp.DSNEnv == "":
			l.errf(ff, "needs one of ephemeral: true or dsn_env (the variable holding the DSN)")
		case fp.DSNEnv != "":
			l.checkEnvName(ff+".dsn_env", fp.DSNEnv)
		}
		if r.Fill != nil && !*r.Fill {
			l.errf(ff, "fill: false and fill_from_pg contradict each other")
		}
	}
	if sp := r.SourcePG; sp != nil {
		sf := f + ".source_pg"
		switch {
		case r.FillFromPG != nil:
			l.errf(sf, "source_pg names where the rows of a server that fills itself come from; with fill_from_pg they come from there")
		case r.Fill == nil || *r.Fill:
			l.errf(sf, "needs fill: false: benchrig fills the server otherwise, from the demo rows")
		case sp.Ephemeral:
			l.errf(sf+".ephemeral", "a server that fills itself reads an existing PostgreSQL: give dsn_env")
		case sp.DSNEnv == "":
			l.errf(sf, "needs dsn_env (the variable holding the DSN)")
		default:
			l.checkEnvName(sf+".dsn_env", sp.DSNEnv)
		}
	}
	l.checkVerifyBatch(f+".verify_batch", r.VerifyBatch)
	if r.VerifyAgainstPG && r.FillFromPG == nil && r.SourcePG == nil {
		l.errf(f+".verify_against_pg", "needs fill_from_pg, or source_pg with fill: false: the rows are compared with the PostgreSQL table they come from")
	}
	l.checkInfoFields(f+".info", r.Info)
	if !r.Ephemeral && (r.Bin != "" || r.Settings != nil || r.MaxClients != 0) {
		field := f + ".bin"
		switch {
		case r.Bin != "":
		case r.Settings != nil:
			field = f + ".settings"
		default:
			field = f + ".max_clients"
		}
		l.errf(field, "configures an ephemeral server; set ephemeral: true or remove it")
	}
}

func (s *Suite) checkAttach(f string, a *Attach) {
	l := s.loc
	switch {
	case a.PID == 0 && a.Port == 0:
		l.errf(f, "needs one of pid (a process id) or port (the port the process listens on)")
	case a.PID != 0 && a.Port != 0:
		l.errf(f, "pid and port are exclusive: give one way to find the process")
	case a.PID < 0:
		l.errf(f+".pid", "must be ≥ 1, got %d", a.PID)
	case a.Tree && a.Port == 0:
		l.errf(f+".tree", "tree samples the processes listening on a port: give port, not pid")
	case a.Port != 0:
		l.checkPort(f+".port", a.Port, 1)
	}
}

// checkURL checks an http(s) URL template; placeholders stand for values.
// A URL that may carry credentials is never echoed.
func (l *located) checkURL(field, raw string) {
	u, err := url.Parse(placeholderRE.ReplaceAllString(raw, "1"))
	if err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			l.errf(field, "contains a password; suites are recorded with every result, so send credentials in a header (headers named like Authorization are redacted)")
			return
		}
	}
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		shown := strconv.Quote(raw)
		if strings.Contains(raw, "@") {
			shown = "(not shown: it may hold credentials)"
		}
		l.errf(field, "not an http URL: %s; accepted: http://host:port/path or https://…", shown)
	}
}

// checkAddr checks a host:port template.
func (l *located) checkAddr(field, raw string) {
	host, port, err := net.SplitHostPort(placeholderRE.ReplaceAllString(raw, "1"))
	n, perr := strconv.Atoi(port)
	if err != nil || host == "" || perr != nil || n < 1 || n > 65535 {
		l.errf(field, "not an address: %q; accepted: host:port, e.g. 127.0.0.1:6379", raw)
	}
}

var methodRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

func (l *located) checkMethod(field, m string) {
	if !methodRE.MatchString(m) {
		l.errf(field, "invalid HTTP method %q; accepted: GET, POST, PUT, …", m)
	}
}

func (l *located) checkStatus(field string, status int) {
	if status < 100 || status > 599 {
		l.errf(field, "must be an HTTP status between 100 and 599, got %d", status)
	}
}

// dsnHasPassword reports whether a PostgreSQL DSN, in URL or keyword form,
// carries a password.
func dsnHasPassword(dsn string) bool {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			return true // cannot tell: treat as secret
		}
		if _, ok := u.User.Password(); ok {
			return true
		}
		return u.Query().Has("password")
	}
	return keywordPassRE.MatchString(dsn)
}

// pgIdentRE is a plain or schema-qualified SQL identifier.
var pgIdentRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?$`)

func protoList(ps []Protocol) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = string(p)
	}
	return strings.Join(out, ", ")
}
