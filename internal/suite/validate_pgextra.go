package suite

import "strings"

// checkVerifyBatch checks a verify_batch (0: the default).
func (l *located) checkVerifyBatch(field string, n int) {
	if n < 0 || n > MaxVerifyBatch {
		l.errf(field, "must be 1 … %d keys per pre-flight MGET (default: the largest batch, at most %d), got %d", MaxVerifyBatch, DefaultVerifyBatch, n)
	}
}

// checkPGExtras checks what a postgres target adds for the seeds' server:
// reset_sql, the statistics query, a RESP endpoint and a sidecar.
func (s *Suite) checkPGExtras(tf string, t *Target) {
	l, p, f := s.loc, t.Postgres, tf+".postgres"
	for i, q := range p.ResetSQL {
		if strings.TrimSpace(q) == "" {
			l.errf(index(f+".reset_sql", i), "must not be empty")
		}
	}
	if p.Statistics != "" || l.present(f+".statistics") {
		l.checkStatistics(f+".statistics", p.Statistics)
	}
	if r := p.RESP; r != nil {
		rf := f + ".resp"
		switch {
		case r.Addr != "" && r.Port != 0:
			l.errf(rf+".port", "addr and port are exclusive: give the endpoint once")
		case r.Addr == "" && r.Port == 0 && p.Sidecar == nil:
			l.errf(rf, "needs addr (host:port) or port (on the server's host); port 0 is picked only for a sidecar")
		case r.Addr != "":
			l.checkAddr(rf+".addr", r.Addr)
		default:
			l.checkPort(rf+".port", r.Port, 0)
		}
		if r.TokenEnv != "" {
			l.checkEnvName(rf+".token_env", r.TokenEnv)
		}
		if r.TokenEnv != "" && r.TokenFile != "" {
			l.errf(rf+".token_file", "token_env and token_file are exclusive: give one place to read the AUTH token from")
		}
		if r.User != "" && r.TokenEnv == "" && r.TokenFile == "" {
			l.errf(rf+".user", "needs a token: token_env or token_file")
		}
		l.checkInfoFields(rf+".info", r.Info)
		l.checkVerifyBatch(rf+".verify_batch", r.VerifyBatch)
	}
	if p.RESP == nil {
		for _, q := range t.Protocols() {
			if q != nativeProtocol(KindPostgres) {
				l.errf(tf+".serves", "a postgres target serves %s through its RESP endpoint: add postgres.resp (addr or port, token_env or token_file)", q)
			}
		}
	}
	if sc := p.Sidecar; sc != nil {
		sf := f + ".sidecar"
		if len(sc.Command) == 0 || strings.TrimSpace(sc.Command[0]) == "" {
			l.errf(sf+".command", "required: [program, args…] of the sidecar")
		}
		// {id} stays as written: a key template the sidecar reads.
		allowed := map[string]bool{PortPlaceholder: true, IDPlaceholder: true}
		for name := range t.Params {
			allowed[name] = true
		}
		for i, a := range sc.Command {
			l.checkPlaceholders(index(sf+".command", i), a, allowed, nil)
		}
		for _, k := range sortedKeys(sc.Env) {
			l.checkEnvName(child(sf+".env", k), k)
			l.checkPlaceholders(child(sf+".env", k), sc.Env[k], allowed, nil)
		}
		if sc.DSNEnv != "" {
			l.checkEnvName(sf+".dsn_env", sc.DSNEnv)
		}
		if r := sc.Ready; r != nil {
			if r.HTTP != "" || r.TCP != "" {
				l.errf(sf+".ready", "a sidecar is ready when the RESP endpoint answers PING (or once started): give timeout only")
			}
			if !s.loc.present(sf + ".ready.timeout") {
				r.Timeout = DefaultReadyTimeout
			}
			if r.Timeout <= 0 {
				l.errf(sf+".ready.timeout", "must be > 0, got %s", r.Timeout)
			}
		}
	}
}

// checkInfoFields checks a list of INFO field names.
func (l *located) checkInfoFields(field string, names []string) {
	seen := map[string]int{}
	for i, n := range names {
		if !paramNameRE.MatchString(n) {
			l.errf(index(field, i), "invalid INFO field %q; accepted: letters, digits and '_', e.g. keyspace_hits", n)
		}
		if j, dup := seen[n]; dup {
			l.errf(index(field, i), "duplicate field %q (also at [%d])", n, j)
		}
		seen[n] = i
	}
}
