package target_test

import (
	"context"
	"fmt"
	"time"

	"github.com/benchrig/benchrig/internal/target"
)

// A target started, checked and stopped.
func Example() {
	ctx := context.Background()
	p, err := target.Start(ctx, target.Spec{
		Name:         "hello",
		Argv:         []string{"./hello-server", "-addr", "127.0.0.1:3000"},
		CPUs:         "0",
		StartTimeout: 5 * time.Second,
		Ready:        target.ProbeSpec{HTTP: "http://127.0.0.1:3000/"},
	}, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Stop(ctx)

	hello := "hello"
	if err := target.RunCheck(ctx, target.Check{URL: "http://127.0.0.1:3000/", BodyEquals: &hello}); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("pid", p.PID(), "on cpus", p.CPUs(), "log", p.LogPath())
}

// Measuring a server that is already running, found by its port.
func ExamplePIDListeningOn() {
	pid, err := target.PIDListeningOn(5432)
	if err != nil {
		fmt.Println(err)
		return
	}
	srv, err := target.Attach(pid)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("measuring pid", srv.PID(), srv.Comm())
}

// Parsing and formatting CPU lists.
func ExampleParseCPUList() {
	cpus, err := target.ParseCPUList("4,0-2")
	fmt.Println(cpus, err, target.FormatCPUList(cpus))
	// Output: [0 1 2 4] <nil> 0-2,4
}
