package suite_test

import (
	"fmt"

	"github.com/benchrig/benchrig/internal/suite"
)

func ExampleParse() {
	src := `name: hello
repeats: 2
phases: {warmup: 2s, load: 10s}
targets:
  go-hello:
    command: ["./bin/hello", "-addr", "127.0.0.1:{port}"]
    port: 18080
paths:
  hello: {http: {url: "http://127.0.0.1:{port}/"}}
matrix:
  targets: [go-hello]
  paths: [hello]
  connections: [4, 64]
`
	s, err := suite.Parse("hello.yaml", []byte(src))
	if err != nil {
		fmt.Println(err)
		return
	}
	env := map[string]string{"RATES": "100"}
	if err := suite.ApplyOverrides(s, func(k string) string { return env[k] }, nil); err != nil {
		fmt.Println(err)
		return
	}
	plan, err := s.Plan()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, smp := range plan.Samples {
		fmt.Println(smp.Key)
	}
	fmt.Println(plan.Estimate(0))
	// Output:
	// go-hello/hello/c=4/b=1/r=100#1
	// go-hello/hello/c=64/b=1/r=100#1
	// go-hello/hello/c=64/b=1/r=100#2
	// go-hello/hello/c=4/b=1/r=100#2
	// 48s
}

func ExampleParse_error() {
	src := "name: bad\nmatrix:\n  connections: [4, 0]\n"
	_, err := suite.Parse("suite.yaml", []byte(src))
	fmt.Println(err)
	// Output:
	// suite.yaml:2:1: matrix.targets: required: the targets to measure (no targets are defined)
	// suite.yaml:2:1: matrix.paths: required: the paths to measure (no paths are defined)
	// suite.yaml:3:20: matrix.connections[1]: must be ≥ 1, got 0
}
