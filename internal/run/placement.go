package run

import (
	"runtime"

	"github.com/benchrig/benchrig/internal/proc"
)

// checkClientCPUs says whether benchrig may run on every CPU of the list,
// naming the first it may not and those it may.
func checkClientCPUs(cpus string) error {
	list, err := proc.ParseCPUList(cpus)
	if err != nil {
		return err
	}
	return proc.CheckAllowed(list)
}

// pinClient pins every thread of benchrig to cpus and sets GOMAXPROCS to
// match, so the load generator runs only there (threads created later
// inherit the mask). The returned function restores the previous affinity
// and GOMAXPROCS.
func pinClient(cpus string) (restore func(), err error) {
	if err := checkClientCPUs(cpus); err != nil {
		return nil, err
	}
	list, _ := proc.ParseCPUList(cpus)
	undo, err := proc.Default().PinSelf(list)
	if err != nil {
		return nil, err
	}
	prev := runtime.GOMAXPROCS(len(list))
	return func() {
		runtime.GOMAXPROCS(prev)
		_ = undo()
	}, nil
}
