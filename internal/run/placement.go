package run

import (
	"runtime"

	"github.com/benchrig/benchrig/internal/proc"
)

// pinClient pins every thread of benchrig to cpus and sets GOMAXPROCS to
// match, so the load generator runs only there (threads created later
// inherit the mask). The returned function restores the previous affinity
// and GOMAXPROCS.
func pinClient(cpus string) (restore func(), err error) {
	list, err := proc.ParseCPUList(cpus)
	if err != nil {
		return nil, err
	}
	if err := proc.CheckAllowed(list); err != nil {
		return nil, err
	}
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
