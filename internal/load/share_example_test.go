package load_test

import (
	"fmt"

	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/result"
)

// A cell of 10 connections at 1,000 req/s split over three agents: each
// gets its connections and every third due time of the one schedule.
func ExampleShare() {
	cell := load.Config{EngineConfig: result.EngineConfig{Connections: 10, Pipeline: 1, Rate: 1000}}
	for i := 0; i < 3; i++ {
		s := load.Share{Index: i, Count: 3}
		cfg, _ := s.Config(cell)
		whole, _ := load.NewConstantPacer(cell.Rate)
		p := load.SharePacer(whole, s)
		fmt.Printf("agent %s: %d connections, %d of the first 1000 requests, due at %d, %d, %d µs…\n",
			s, cfg.Connections, s.Requests(1000), p.Next()/1000, p.Next()/1000, p.Next()/1000)
	}
	// Output:
	// agent 0/3: 4 connections, 334 of the first 1000 requests, due at 0, 3000, 6000 µs…
	// agent 1/3: 3 connections, 333 of the first 1000 requests, due at 1000, 4000, 7000 µs…
	// agent 2/3: 3 connections, 333 of the first 1000 requests, due at 2000, 5000, 8000 µs…
}
