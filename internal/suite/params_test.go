package suite_test

import (
	"errors"
	"strings"
	"testing"

	_ "github.com/benchrig/benchrig/internal/protocol/all"
	. "github.com/benchrig/benchrig/internal/suite"
)

// paramsSuite is a one-target suite whose node param has the given values
// (a YAML flow list) and whose command runs {node}.
func paramsSuite(values, extra string) string {
	return `name: t
targets:
  web: {command: ["{node}", server.js, "{port}"], params: {node: ` + values + `}` + extra + `}
paths:
  hello: {http: {url: "http://127.0.0.1:{port}/"}}
` + okMatrix
}

// TestParamValuesArePaths: a runtime axis names its binaries by path
// (seed 003's node_modules/node12/bin/node); each value becomes a variant
// whose command runs that binary.
func TestParamValuesArePaths(t *testing.T) {
	s, err := Parse("s.yaml", []byte(paramsSuite(`[node_modules/node12/bin/node, /usr/bin/node, ../bin/node-v16.13.2, ./node]`, "")))
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	var argv0 []string
	for _, c := range p.Cells {
		tg, err := s.TargetFor(c)
		if err != nil {
			t.Fatal(err)
		}
		argv0 = append(argv0, tg.Command[0])
	}
	if got := strings.Join(argv0, " "); got != "node_modules/node12/bin/node /usr/bin/node ../bin/node-v16.13.2 ./node" {
		t.Errorf("commands run %s", got)
	}
}

// TestParamValuesRefused: what a value may not be, with the field and the
// rule in the error.
func TestParamValuesRefused(t *testing.T) {
	long := strings.Repeat("a", MaxParamValueLen+1)
	for _, c := range []struct{ values, want string }{
		{`[node_modules//node]`, `targets.web.params.node[0]: invalid value "node_modules//node": empty path segment ("//")`},
		{`[node_modules/node12/]`, `targets.web.params.node[0]: invalid value "node_modules/node12/": a path ending in '/' names a directory, not a binary`},
		{`["node 12"]`, `targets.web.params.node[0]: invalid value "node 12": accepted: letters, digits and . _ + : @ - /, starting with a letter, a digit, '.' or '/'`},
		{`["-rf"]`, `targets.web.params.node[0]: invalid value "-rf": accepted:`},
		{`["{port}"]`, `targets.web.params.node[0]: invalid value "{port}": accepted:`},
		{`[` + long + `]`, `targets.web.params.node[0]: invalid value "` + long[:256] + `… (1025 bytes in all)": 1025 bytes, at most 1024`},
		{`[a/b, a/b]`, `targets.web.params.node[1]: duplicate value "a/b" (also at [0])`},
	} {
		_, err := Parse("s.yaml", []byte(paramsSuite(c.values, "")))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v\nwant %s", c.values, err, c.want)
		}
	}
}

// TestVersionCommand: version_command takes placeholders like command, is
// refused empty, too long or on a target benchrig does not start from a
// command.
func TestVersionCommand(t *testing.T) {
	s, err := Parse("s.yaml", []byte(paramsSuite(`[n12/bin/node, n16/bin/node]`, `, version_command: ["{node}", -v]`)))
	if err != nil {
		t.Fatal(err)
	}
	p, _ := s.Plan()
	tg, _ := s.TargetFor(p.Cells[1])
	if strings.Join(tg.VersionCommand, " ") != "{node} -v" || tg.Command[0] != "n16/bin/node" {
		t.Errorf("version_command %q, command %q: version_command is expanded by the command system, with the variant's vars", tg.VersionCommand, tg.Command)
	}
	many := `, version_command: [node` + strings.Repeat(", x", MaxVersionArgs) + `]`
	for _, c := range []struct{ extra, want string }{
		{`, version_command: []`, `targets.web.version_command: needs [program, args…], e.g. [node, --version]`},
		{`, version_command: ["{nodes}"]`, `targets.web.version_command[0]: unknown placeholder {nodes}`},
		{many, `targets.web.version_command: 65 arguments, at most 64`},
	} {
		_, err := Parse("s.yaml", []byte(paramsSuite(`[node]`, c.extra)))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v\nwant %s", c.extra, err, c.want)
		}
	}
	src := strings.Replace(pgHead, "ephemeral: true}", "ephemeral: true}, version_command: [postgres, -V]", 1) + "matrix: {targets: [db], paths: [one], connections: [4]}\n"
	if _, err := Parse("s.yaml", []byte(src)); err == nil || !strings.Contains(err.Error(), "targets.db.version_command: not accepted for a postgres target") {
		t.Errorf("postgres target with version_command: %v", err)
	}
}

// TestOverrideTargetsAndPaths: --set targets= and paths= select from the
// matrix (seed 002's one framework of six); unknown names, duplicates and
// a cases matrix are refused by name.
func TestOverrideTargetsAndPaths(t *testing.T) {
	s := mustLoad(t, "testdata/http-frameworks.yaml")
	if err := ApplyOverrides(s, nil, []string{"targets=node-http", "paths=hello"}); err != nil {
		t.Fatal(err)
	}
	p, err := s.Plan()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range p.Cells {
		if c.Target != "node-http" {
			t.Errorf("cell %s: targets=node-http selects node-http only", c.ID)
		}
	}
	if len(p.Cells) != 4 { // 2 node params × 2 rates
		t.Errorf("%d cells, want 4", len(p.Cells))
	}
	for _, c := range []struct{ set, want string }{
		{"targets=nodehttp", `--set targets="nodehttp": matrix.targets[0]: unknown target "nodehttp"; defined: go-hello, node-http`},
		{"targets=go-hello,go-hello", `--set targets="go-hello,go-hello": "go-hello" is listed twice`},
		{"targets=", `--set targets="": not a list of targets names, e.g. node-http,fastify`},
		{"paths=a b", `--set paths="a b": not a list of paths names, e.g. hello,json`},
	} {
		s := mustLoad(t, "testdata/http-frameworks.yaml")
		err := ApplyOverrides(s, nil, []string{c.set})
		var e *Error
		if !errors.As(err, &e) || e.Error() != c.want {
			t.Errorf("%s: got %v\nwant %s", c.set, err, c.want)
		}
	}
	src := pgHead + "matrix: {cases: [{target: db, path: one}], connections: [4]}\n"
	s, err = Parse("s.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if err := ApplyOverrides(s, nil, []string{"targets=db"}); err == nil || !strings.Contains(err.Error(), "the matrix lists cases") {
		t.Errorf("targets= on a cases matrix: %v", err)
	}
}
