package httpquick

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchrig/benchrig/internal/capacity"
	"github.com/benchrig/benchrig/internal/cli"
	"github.com/benchrig/benchrig/internal/cliflag"
	"github.com/benchrig/benchrig/internal/execute"
	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/quick"
	"github.com/benchrig/benchrig/internal/result"
)

func init() { cli.RegisterQuick("capacity", capacityCmd) }

// searchFlags are benchrig capacity's own flags: the suite's search block.
type searchFlags struct {
	from, max, resolution, factor float64
	confirm, searches             int
	maxTime                       time.Duration
}

// capacityCmd is benchrig capacity: benchrig http's flags, and a rate
// search instead of a rate.
func capacityCmd(a *cli.App) *cobra.Command {
	hf := &httpFlags{search: &searchFlags{}}
	c := newHTTPCmd(a, hf)
	c.Use = "capacity URL"
	c.Short = "Find the highest constant rate an HTTP target holds HEALTHY: ladder, bisection, confirmation, a fresh --target process per step"
	c.Example = `  benchrig capacity http://127.0.0.1:8080/ --target './server' --from 100 --max 100000 -d 5s -o cap.json
  benchrig capacity http://127.0.0.1:8080/ --from 500 --max 20000 --resolution 0.02 --confirm 3 --searches 3 --max-p99 50ms
  benchrig report cap.json -o cap.html   # the capacity table and the latency–throughput curve`
	sf := hf.search
	f := c.Flags()
	f.Float64Var(&sf.from, "from", 100, "the search's first rate, requests per second (the ladder's first rung)")
	f.Float64Var(&sf.max, "max", 100_000, "the highest rate offered, requests per second (HEALTHY there: capacity ≥ max)")
	f.Float64Var(&sf.resolution, "resolution", capacity.DefaultResolution, "relative width at which the bisection stops, and the size of the confirmation's steps (0.05: 5 %)")
	f.Float64Var(&sf.factor, "factor", capacity.DefaultFactor, "the ladder's ratio from one rung to the next")
	f.IntVar(&sf.confirm, "confirm", capacity.DefaultConfirm, "samples confirming the found rate, and taken one resolution step above it (0: none)")
	f.IntVar(&sf.searches, "searches", 1, "whole searches; with more than one the capacity is median [min–max]")
	cliflag.DurationVarP(f, &sf.maxTime, "max-time", "", 0, "bound each search's wall time (0: none); a cut search says so, with the bracket it knew")
	f.Lookup("connections").Usage = "connections (workers) the search's load uses"
	f.Lookup("connections").DefValue = "32" // a search runs at rates: the rate mode's default
	return c
}

// check refuses the flags a search decides itself.
func (sf *searchFlags) check(c *cobra.Command) error {
	for _, name := range []string{"rate", "requests"} {
		if c.Flags().Changed(name) {
			return exitcode.Usagef("--%s: a capacity search decides the rates and bounds its steps by --duration; use --from and --max", name)
		}
	}
	return nil
}

// doc is the suite's search block, bounded as the suite bounds it (an
// out-of-range flag is reported under the suite field's name).
func (sf *searchFlags) doc() quick.Doc {
	d := quick.Doc{
		"rate":     quick.Doc{"from": sf.from, "max": sf.max, "resolution": sf.resolution, "factor": sf.factor},
		"confirm":  sf.confirm,
		"searches": sf.searches,
	}
	if sf.maxTime > 0 {
		d["max_time"] = sf.maxTime.String()
	}
	return d
}

// capacityJob is benchrig capacity's job: benchrig http's, titled as a
// search.
func capacityJob(j execute.Quick, rawURL string) execute.Quick {
	j.Name = "benchrig capacity"
	j.Heading = func(n int) string {
		return fmt.Sprintf("benchrig capacity %s · %s", rawURL, execute.Plural(n, "step"))
	}
	title := j.Title
	j.Title = func(s *result.Sample) string { return "capacity step · " + title(s) }
	return j
}
