package execute

import (
	"fmt"
	"io"

	"github.com/benchrig/benchrig/internal/report"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/suite"
)

// searchDone prints a capacity search's table (the capacity of each
// searched cell, replayed from its steps as every report does) and maps
// the run to its exit: interrupted is an error (--resume continues), a
// search that ended is not, whatever its steps' verdicts (UNHEALTHY steps
// are how a search finds its bound).
func searchDone(res *executed, quiet bool, heading func(n int) string, stdout io.Writer) error {
	if !quiet {
		src := &report.Source{Search: searchPlan(res.plan)}
		for _, s := range res.samples {
			src.Rows = append(src.Rows, report.Row{Case: s.Case, Variant: s.Variant, Sample: s})
		}
		fmt.Fprintf(stdout, "\n%s\n\n", heading(len(res.samples)))
		if err := report.CapacityTable(stdout, report.Capacities(src)); err != nil {
			return err
		}
		for _, c := range res.plan.Cells {
			if r, ok := res.searches[c.ID]; ok {
				fmt.Fprintf(stdout, "%s: %s\n", c.ID, r)
			}
		}
		if res.path != "" {
			fmt.Fprintf(stdout, "\nResult written to %s (every step is a sample: benchrig report %s)\n", res.path, res.path)
		}
	}
	if res.interrupted {
		msg := fmt.Sprintf("interrupted: %d steps ran", len(res.samples))
		if res.path != "" {
			msg += fmt.Sprintf("; %s holds them and --resume continues the search", res.path)
		}
		return fmt.Errorf("%s", msg)
	}
	return nil
}

// searchPlan is what a results file records of a search plan (nil for a
// plan of set rates): its configuration and the cells it searches.
func searchPlan(p *suite.Plan) *result.SearchPlan {
	if p.Search == nil {
		return nil
	}
	sp := &result.SearchPlan{Config: p.SearchConfig()}
	for _, c := range p.Cells {
		sp.Cells = append(sp.Cells, c.ID)
	}
	return sp
}
