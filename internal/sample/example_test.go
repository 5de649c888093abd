package sample_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/benchrig/benchrig/internal/sample"
)

// Example samples this process through a baseline, a load and a recovery
// phase and derives the server figures of the load window.
func Example() {
	ctx := context.Background()
	cfg := sample.DefaultConfig()
	cfg.PID = os.Getpid()
	cfg.Interval = sample.MinInterval
	s, err := sample.Start(ctx, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	s.Mark(sample.PhaseBaseline)
	time.Sleep(200 * time.Millisecond)
	s.Mark(sample.PhaseLoad)
	completed := int64(0)
	for end := time.Now().Add(300 * time.Millisecond); time.Now().Before(end); {
		completed++ // stands for the requests a load engine completes
	}
	s.Mark(sample.PhaseRecovery)
	time.Sleep(200 * time.Millisecond)
	samples := s.Stop()

	f := sample.Derive(samples, sample.Window{Phase: sample.PhaseLoad}, completed, runtime.NumCPU())
	// The figures depend on the machine; what they say of this process
	// does not: it had memory, used no negative CPU, and was one process.
	fmt.Printf("RSS under load > 0: %v, cores ≥ 0: %v, processes: %d\n", f.RSSLoad > 0, f.Cores >= 0, f.MaxProcesses)
	// Output: RSS under load > 0: true, cores ≥ 0: true, processes: 1
}
