package suite

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// Format writes the plan for `benchrig plan`: a summary of the matrix,
// phases and estimated wall time, then one line per sample in run order
// with its estimated start (assuming p.Startup per sample).
func (p *Plan) Format(w io.Writer) error {
	startup := p.Startup
	var b strings.Builder
	kind := "plan"
	if p.IsSmoke {
		kind = "smoke plan"
	}
	if p.Search != nil {
		fmt.Fprintf(&b, "%s %s: %s, each searched for its capacity, seed %d\n", kind, p.Name, plural(len(p.Cells), "cell"), p.Seed)
	} else {
		fmt.Fprintf(&b, "%s %s: %s × %s = %s, seed %d\n", kind, p.Name,
			plural(len(p.Cells), "cell"), plural(p.Repeats, "repeat"), plural(len(p.Samples), "sample"), p.Seed)
	}
	ph := p.Phases
	fmt.Fprintf(&b, "phases: baseline %s, warmup %s, settle %s, load %s, recovery %s",
		ph.Baseline, ph.Warmup, ph.Settle, ph.Load, ph.Recovery)
	if p.Requests > 0 {
		fmt.Fprintf(&b, "; at most %d requests per sample", p.Requests)
	}
	b.WriteString("\n")
	total := p.Estimate(startup)
	if p.Search != nil {
		steps, _ := p.SearchWorstCase(startup)
		c := p.Search.Config(0)
		fmt.Fprintf(&b, "capacity search of each cell: rates %s to %s req/s, resolution %g %%, factor %g, confirm %d, %s\n",
			fmtFloat(c.From), fmtFloat(c.Max), c.Resolution*100, c.Factor, c.Confirm, plural(c.Searches, "search"))
		fmt.Fprintf(&b, "worst case: %s, %s (%s startup per step)", plural(steps, "step"), roundDuration(total), roundDuration(startup))
		if c.MaxTime > 0 {
			fmt.Fprintf(&b, "; each cell's search cut at %s", c.MaxTime)
		}
		b.WriteString("\n\n")
		if _, err := io.WriteString(w, b.String()); err != nil {
			return fmt.Errorf("write plan: %w", err)
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "#\tCELL")
		for i, cell := range p.Cells {
			fmt.Fprintf(tw, "%d\t%s\n", i+1, cell.ID)
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("write plan: %w", err)
		}
		return nil
	}
	fmt.Fprintf(&b, "estimated wall time: %s (%s startup per sample)", roundDuration(total), roundDuration(startup))
	if p.CountBounded() {
		b.WriteString(", plus the request-bounded closed-loop load phases")
	}
	b.WriteString("\n\n")
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tSTART\tREPEAT\tCELL")
	var at time.Duration
	for _, s := range p.Samples {
		fmt.Fprintf(tw, "%d\t+%s\t%d\t%s\n", s.Index+1, roundDuration(at), s.Repeat, s.CellID)
		at += p.sampleEstimate(p.Cells[s.Cell], startup)
	}
	fmt.Fprintf(tw, "\t=%s\t\tend\n", roundDuration(at))
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write plan: %w", err)
	}
	return nil
}

// roundDuration rounds wall-clock estimates to the second (to 100ms below
// ten seconds), so they read as estimates.
func roundDuration(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}

// plural formats a count and a noun: "1 cell", "6 cells".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
