// Package cpuprofile writes a Go CPU profile of benchrig itself (the
// hidden --cpuprofile flag).
package cpuprofile

import (
	"os"
	"runtime/pprof"

	"github.com/benchrig/benchrig/internal/exitcode"
)

// Start starts profiling into the file at path and returns what stops it;
// a file that cannot be made is a usage error.
func Start(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, exitcode.Usagef("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}
