// Command historygen writes seeded synthetic results files that verify (no
// server runs) for bench/history.sh: N runs of a suite of two targets ×
// two connection counts × five repeats (20 samples a file), requests/s
// stepping up 10 % at the middle run.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/benchrig/benchrig/internal/history/synth"
)

func main() {
	dir := flag.String("o", "", "directory to write the files into (created)")
	runs := flag.Int("runs", 1000, "number of files (1–100000)")
	seed := flag.Uint64("seed", 1, "seed of the repeats' noise")
	flag.Parse()
	if *dir == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: historygen -o DIR [-runs N] [-seed S]")
		os.Exit(2)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "historygen:", err)
		os.Exit(1)
	}
	paths, err := synth.Write(*dir, synth.Options{Runs: *runs, Seed: *seed, Targets: []string{"api", "api-next"},
		Connections: []int{4, 16}, Repeats: 5, StepAt: *runs / 2, StepPct: 10})
	if err != nil {
		fmt.Fprintln(os.Stderr, "historygen:", err)
		os.Exit(1)
	}
	fmt.Printf("%d results files written to %s\n", len(paths), *dir)
}
