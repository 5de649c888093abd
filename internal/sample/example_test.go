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
	fmt.Printf("%.2f cores, %.0f MiB RSS under load, %d processes\n",
		f.Cores, float64(f.RSSLoad)/(1<<20), f.MaxProcesses)
}
