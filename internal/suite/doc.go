// Package suite reads benchmark suites: YAML files that name the systems
// under test (targets), the requests sent to them (paths), the key
// sequences of database paths (workloads), and a matrix of load settings;
// it validates them, applies the environment and --set overrides of the
// seed scripts, and expands the matrix into a fair, deterministic plan of
// samples.
//
// A suite is decoded strictly from goccy/go-yaml's syntax tree: unknown
// keys, wrong types, duplicate keys and invalid values are all errors, each
// reported as `file:line:col: field: what is wrong and what is accepted`:
//
//	suite.yaml:9:20: matrix.connections[1]: must be ≥ 1, got 0
//	CONNECTIONS="4,x": not a list of positive integers, e.g. 4,64
//
// A minimal suite:
//
//	name: hello
//	phases: {warmup: 2s, load: 10s}
//	targets:
//	  go-hello:
//	    command: ["./bin/hello", "-addr", "127.0.0.1:{port}"]
//	    port: 18080
//	paths:
//	  hello: {http: {url: "http://127.0.0.1:{port}/"}}
//	matrix:
//	  targets: [go-hello]
//	  paths: [hello]
//	  connections: [4, 64]
//	  rates: [100, 1000]   # omit for closed loop
//
// and its use:
//
//	s, err := suite.Load("hello.yaml")
//	if err != nil {
//		return err // every problem, with its position
//	}
//	if err := suite.ApplyOverrides(s, os.Getenv, sets); err != nil {
//		return err
//	}
//	record, _ := s.Resolved() // canonical JSON for the results file
//	plan, err := s.Plan()     // cells × repeats in fair order
//	if err != nil {
//		return err
//	}
//	return plan.Format(os.Stdout)
//
// Everything here is pure: no I/O but reading the file in Load. Suite, Plan,
// Cell and Sample are plain data with JSON tags. The fair order of samples
// is documented on Suite.Plan.
package suite
