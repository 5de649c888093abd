package suite

import (
	"regexp"
	"sort"
	"strings"
)

// placeholderRE matches a {name} placeholder. Braces around anything else
// (a JSON body, a shell brace expansion) are left alone.
var placeholderRE = regexp.MustCompile(`\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// Placeholders that are not target params.
const (
	// PortPlaceholder is replaced by the target's port.
	PortPlaceholder = "port"
	// IDPlaceholder is replaced, in path templates, by a workload key.
	IDPlaceholder = "id"
)

// Expand replaces each {name} placeholder of s that vars defines with its
// value; other placeholders are left as they are, for a later stage (the
// runner substitutes {port} once the port is known).
func Expand(s string, vars map[string]string) string {
	if !strings.Contains(s, "{") {
		return s
	}
	return placeholderRE.ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := vars[m[1:len(m)-1]]; ok {
			return v
		}
		return m
	})
}

// placeholders returns the names of the placeholders in s, in order.
func placeholders(s string) []string {
	var out []string
	for _, m := range placeholderRE.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}

// checkPlaceholders reports each placeholder of s at field that is not in
// allowed, and marks the allowed ones used.
func (l *located) checkPlaceholders(field, s string, allowed map[string]bool, used map[string]bool) {
	for _, name := range placeholders(s) {
		if allowed[name] {
			if used != nil {
				used[name] = true
			}
			continue
		}
		l.errf(field, "unknown placeholder {%s}; accepted: %s", name, braceList(allowed))
	}
}

// braceList formats a set of placeholder names as "{a}, {b}".
func braceList(set map[string]bool) string {
	names := make([]string, 0, len(set))
	for n := range set {
		names = append(names, "{"+n+"}")
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

// TargetFor returns a copy of the named target with the cell's params
// substituted into its command, environment, directory, readiness probe,
// checks and server binaries. {port} is left for the runner.
func (s *Suite) TargetFor(c Cell) (*Target, error) {
	t := s.Targets[c.Target]
	if t == nil {
		return nil, &Error{File: s.Source.File, Field: "matrix", Msg: "unknown target " + quote(c.Target) + " in cell " + c.ID}
	}
	out := *t
	vars := c.Params
	out.Command = expandAll(t.Command, vars)
	out.Dir = Expand(t.Dir, vars)
	if t.Env != nil {
		out.Env = make(map[string]string, len(t.Env))
		for k, v := range t.Env {
			out.Env[k] = Expand(v, vars)
		}
	}
	if t.Ready != nil {
		r := *t.Ready
		r.HTTP, r.TCP = Expand(r.HTTP, vars), Expand(r.TCP, vars)
		out.Ready = &r
	}
	if t.Checks != nil {
		out.Checks = make([]Check, len(t.Checks))
		for i, c := range t.Checks {
			c.URL, c.Body = Expand(c.URL, vars), Expand(c.Body, vars)
			out.Checks[i] = c
		}
	}
	if t.Metrics != nil {
		m := *t.Metrics
		m.URL = Expand(m.URL, vars)
		out.Metrics = &m
	}
	if t.Postgres != nil {
		p := *t.Postgres
		p.BinDir = Expand(p.BinDir, vars)
		out.Postgres = &p
	}
	if t.Redis != nil {
		r := *t.Redis
		r.Bin = Expand(r.Bin, vars)
		out.Redis = &r
	}
	out.Limits = t.Limits.expand(vars)
	out.Params = nil
	return &out, nil
}

func expandAll(in []string, vars map[string]string) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = Expand(s, vars)
	}
	return out
}
