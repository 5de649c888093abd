package suite

// Companion kinds: a target may be sampled as another's companion when it
// runs once for the whole run.
var companionKinds = map[string]bool{KindPostgres: true, KindRedis: true, KindAttach: true}

// checkCompanions checks a target's companions and headline: each finds
// one process tree (another target of the suite of a kind that runs for
// the whole run, a PID or a listening port), names are unique, a DSN goes
// only from a postgres target to a command target, and the headline is
// the target itself or one of its companions.
func (s *Suite) checkCompanions(f, name string, t *Target) {
	l := s.loc
	if len(t.Companions) > maxCompanions {
		l.errf(f+".companions", "at most %d companions, got %d", maxCompanions, len(t.Companions))
		return
	}
	names := map[string]int{}
	dsnEnvs := map[string]int{}
	for i, c := range t.Companions {
		cf := index(f+".companions", i)
		ways := setNames([]string{"target", "pid", "port"}, c.Target != "", c.PID != 0, c.Port != 0)
		switch len(ways) {
		case 0:
			l.errf(cf, "needs one of target (another target of the suite), pid (a running process) or port (the port a process listens on)")
		case 1:
		default:
			l.exclusive(cf, ways, "a companion is found one way")
		}
		if c.Name != "" {
			l.checkName(cf+".name", c.Name)
		}
		cn := c.CompanionName()
		if cn == name {
			l.errf(cf+".name", "companion name %q is the target's own name; give it a name of its own", cn)
		}
		if j, dup := names[cn]; dup {
			l.errf(cf+".name", "duplicate companion name %q (also companions[%d]); give each a name", cn, j)
		}
		names[cn] = i
		if c.PID < 0 {
			l.errf(cf+".pid", "must be ≥ 1, got %d", c.PID)
		}
		if c.Port != 0 {
			l.checkPort(cf+".port", c.Port, 1)
		}
		if c.Tree && c.Port == 0 {
			l.errf(cf+".tree", "tree samples the processes listening on a port: give port, not pid or target")
		}
		var other *Target
		if c.Target != "" {
			other = s.Targets[c.Target]
			switch {
			case c.Target == name:
				l.errf(cf+".target", "a target cannot be its own companion")
			case other == nil:
				l.errf(cf+".target", "unknown target %q; accepted: %s", c.Target, targetList(s.Targets, name))
			case other.Kind() != "" && !companionKinds[other.Kind()]:
				l.errf(cf+".target", "target %q is a %s target: it is started per sample (command) or not sampled (address); a companion target runs for the whole run: postgres, redis or attach", c.Target, other.Kind())
			case len(other.Companions) > 0:
				l.errf(cf+".target", "target %q has companions of its own; companions do not chain: list them all on %q", c.Target, name)
			case len(other.Params) > 0:
				l.errf(cf+".target", "target %q has params; a companion target is one process for the whole run", c.Target)
			}
		}
		if c.DSNEnv != "" {
			l.checkEnvName(cf+".dsn_env", c.DSNEnv)
			switch {
			case other == nil || other.Postgres == nil:
				l.errf(cf+".dsn_env", "only a postgres companion target has a DSN to pass")
			case t.Kind() != KindCommand:
				l.errf(cf+".dsn_env", "the DSN is passed in the environment of a started command; %s target %q is not started by benchrig", t.Kind(), name)
			case t.Env[c.DSNEnv] != "":
				l.errf(cf+".dsn_env", "$%s is also set in env: give the DSN one place", c.DSNEnv)
			}
			if j, dup := dsnEnvs[c.DSNEnv]; dup {
				l.errf(cf+".dsn_env", "$%s also receives companions[%d]'s DSN", c.DSNEnv, j)
			}
			dsnEnvs[c.DSNEnv] = i
		}
	}
	if t.Headline != "" && t.Headline != name {
		if _, ok := names[t.Headline]; !ok {
			var accepted []string
			for _, c := range t.Companions {
				accepted = append(accepted, c.CompanionName())
			}
			l.errf(f+".headline", "unknown process %q; accepted: %q (the target itself, the default) or a companion: %s", t.Headline, name, joinQuoted(accepted))
		}
	}
	if t.Kind() == KindAddress && len(t.Companions) > 0 && t.Headline == "" {
		l.errf(f+".headline", "an address target is not sampled: name the companion whose figures are the headline")
	}
}

// maxCompanions bounds a target's companions.
const maxCompanions = 16

// targetList names the suite's targets other than self.
func targetList(ts map[string]*Target, self string) string {
	var out []string
	for _, n := range sortedKeys(ts) {
		if n != self {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return "none (the suite has no other target)"
	}
	return joinQuoted(out)
}

// joinQuoted is "a", "b".
func joinQuoted(names []string) string {
	s := ""
	for i, n := range names {
		if i > 0 {
			s += ", "
		}
		s += quote(n)
	}
	return s
}
