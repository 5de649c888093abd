package suite

import (
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/load"
)

// Names of targets, paths and workloads appear in cell IDs and field paths.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// envNameRE is what an environment variable name may be.
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

const nameRule = "letters, digits, '.', '_' and '-', starting with a letter or digit"

// validate checks the whole suite, recording every problem in s.loc.
func (s *Suite) validate() {
	l := s.loc
	switch {
	case !l.present("name"):
		l.errf("name", "required: a short name for the suite, e.g. http-frameworks")
	case !nameRE.MatchString(s.Name):
		l.errf("name", "invalid name %q; accepted: %s", s.Name, nameRule)
	}
	if s.Repeats < 1 {
		l.errf("repeats", "must be ≥ 1, got %d", s.Repeats)
	}
	if s.Requests < 0 {
		l.errf("requests", "must be ≥ 0 (0 bounds samples by phases.load only), got %d", s.Requests)
	}
	if s.Sampler.Interval < MinSamplerInterval {
		l.errf("sampler.interval", "must be ≥ %s, got %s", MinSamplerInterval, s.Sampler.Interval)
	}
	switch s.Arrival {
	case "", "constant", "poisson":
	default:
		l.errf("arrival", "must be constant or poisson, got %q", s.Arrival)
	}
	if s.TimerSlack < 0 || s.TimerSlack.D() > load.MaxTimerSlack || s.TimerSlack.D()%time.Microsecond != 0 {
		l.errf("timer_slack", "must be 0 (a wake-up for each due time) to %s in whole microseconds, got %s", load.MaxTimerSlack, s.TimerSlack.D())
	}
	if s.MaxBacklog < 0 || s.MaxBacklog > MaxBacklogLimit {
		l.errf("max_backlog", "must be 0 (rate × 1 s) to %d, got %d", MaxBacklogLimit, s.MaxBacklog)
	}
	s.validatePlacement()
	s.validateSecretNames()
	if s.Phases.Load == 0 && s.Requests == 0 {
		l.errf("phases.load", "must be > 0 unless requests is set: a sample needs a time or a request bound")
	}
	s.validateThresholds()
	for _, name := range sortedKeys(s.Targets) {
		s.validateTarget(name, s.Targets[name])
	}
	for _, name := range sortedKeys(s.Paths) {
		s.validatePath(name, s.Paths[name])
	}
	for _, name := range sortedKeys(s.Workloads) {
		s.validateWorkload(name, s.Workloads[name])
	}
	s.validateMatrix()
	s.validateSearch()
}

func (s *Suite) validatePlacement() {
	l := s.loc
	l.checkCPUs("placement.client_cpus", s.Placement.ClientCPUs)
	l.checkCPUs("placement.target_cpus", s.Placement.TargetCPUs)
	if n := s.Placement.ClientGOMAXPROCS; n < 0 || n > maxGOMAXPROCS {
		l.errf("placement.client_gomaxprocs", "must be between 0 (the default) and %d (the Go runtime's bound), got %d", maxGOMAXPROCS, n)
	}
	if _, err := ParseIOUring(s.Placement.IOUring); err != nil {
		l.errf("placement.io_uring", "%s", err.Error())
	}
	if _, err := ParseCoalesce(s.Placement.Coalesce); err != nil {
		l.errf("placement.coalesce", "%s", err.Error())
	}
	if _, err := ParseBusyPoll(s.Placement.BusyPoll); err != nil {
		l.errf("placement.busy_poll", "%s", err.Error())
	}
}

func (s *Suite) validateThresholds() {
	l, t := s.loc, s.Thresholds
	if t.Coverage < 0 || t.Coverage > 100 || math.IsNaN(t.Coverage) {
		l.errf("thresholds.coverage", "must be a percentage between 0 and 100, got %s", fmtFloat(t.Coverage))
	}
	if t.P99 <= 0 {
		l.errf("thresholds.p99", "must be > 0, got %s", t.P99)
	}
	if m := t.MaxMiss; m != nil && (*m < 0 || *m > 1 || math.IsNaN(*m)) {
		l.errf("thresholds.max_miss", "must be a ratio between 0 and 1 (0.01: 1 %% of the reads may miss), got %s", fmtFloat(*m))
	}
	for _, c := range []struct {
		name string
		v    int64
	}{{"errors", t.Errors}, {"timeouts", t.Timeouts}, {"unexpected", t.Unexpected}, {"dropped", t.Dropped}} {
		if c.v < 0 {
			l.errf("thresholds."+c.name, "must be ≥ 0 (the largest tolerated count), got %d", c.v)
		}
	}
}

// checkName reports a badly formed name of a target, path or workload.
func (l *located) checkName(field, name string) {
	if !nameRE.MatchString(name) {
		l.errf(field, "invalid name %q; accepted: %s", name, nameRule)
	}
}

func (l *located) checkCPUs(field string, c CPUList) {
	if _, err := c.CPUs(); err != nil {
		l.errf(field, "%s", err.Error())
	}
}

func (l *located) checkPort(field string, port, min int) {
	if port < min || port > 65535 {
		l.errf(field, "must be a port between %d and 65535, got %d", min, port)
	}
}

func (l *located) checkEnvName(field, name string) {
	if !envNameRE.MatchString(name) {
		l.errf(field, "invalid environment variable name %q; accepted: letters, digits and '_', not starting with a digit", name)
	}
}

// present reports whether field was written in the suite file.
func (l *located) present(field string) bool {
	_, ok := l.at[field]
	return ok
}

// sortedKeys returns the keys of m in order, for deterministic messages.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// defined lists the keys of m for "unknown name" messages.
func defined[V any](m map[string]V, what string) string {
	if len(m) == 0 {
		return "no " + what + " are defined"
	}
	return "defined: " + strings.Join(sortedKeys(m), ", ")
}

func fmtFloat(f float64) string {
	if a := math.Abs(f); a >= 1e21 || a != 0 && a < 1e-6 {
		return strconv.FormatFloat(f, 'g', -1, 64) // 1e+308, not 309 digits
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

func quote(s string) string { return strconv.Quote(s) }

// exclusive reports, at field, that the set options may not be combined.
func (l *located) exclusive(field string, set []string, rule string) {
	if len(set) > 1 {
		l.errf(field, "%s are exclusive: %s", strings.Join(set, " and "), rule)
	}
}

// setNames returns the names whose flag is true, in order.
func setNames(names []string, flags ...bool) []string {
	var out []string
	for i, f := range flags {
		if f {
			out = append(out, names[i])
		}
	}
	return out
}

// MaxSecretNames bounds secret_headers and secret_params, each.
const MaxSecretNames = 64

// validateSecretNames checks secret_headers and secret_params: at most
// MaxSecretNames names each, every one 1–128 characters of letters, digits
// and - _ . (a header or parameter name).
func (s *Suite) validateSecretNames() {
	for _, list := range []struct {
		field string
		names []string
	}{{"secret_headers", s.SecretHeaders}, {"secret_params", s.SecretParams}} {
		if len(list.names) > MaxSecretNames {
			s.loc.errf(list.field, "at most %d names, got %d", MaxSecretNames, len(list.names))
			continue
		}
		for i, n := range list.names {
			if !secretNameOK(n) {
				s.loc.errf(index(list.field, i), "must be a name of 1–128 letters, digits, '-', '_' or '.', got %q", n)
			}
		}
	}
}

func secretNameOK(n string) bool {
	if n == "" || len(n) > 128 {
		return false
	}
	for _, c := range n {
		if !(c == '-' || c == '_' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// maxGOMAXPROCS is the Go runtime's bound on GOMAXPROCS.
const maxGOMAXPROCS = 1024
