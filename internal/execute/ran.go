package execute

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/benchrig/benchrig/internal/result"
)

// ranCheck compares what each started target's process tree ran (a
// sample's target.ran) with the first record of it: the results file's
// samples when resuming, else this run's first sample of that target. A
// file that ran with other bytes (a server rebuilt behind the wrapper
// script the suite names) refuses the sample and stops the run, unless
// --resume-changed accepts it (then the samples say so).
type ranCheck struct {
	ref      map[string][]result.RanFile
	resuming bool
	accept   bool
	path     string
	stderr   io.Writer
	changed  []string
}

// recorded takes the references from the samples of the results file at
// path: the first sample of each target that recorded what it ran.
func (c *ranCheck) recorded(path string) {
	_, samples, _, _ := result.ReadFile(path)
	for _, s := range samples {
		if t := s.Target; t != nil && len(t.Ran) > 0 {
			if _, ok := c.ref[t.Name]; !ok {
				c.ref[t.Name] = t.Ran
			}
		}
	}
}

// check is the runner's CheckRan.
func (c *ranCheck) check(variant string, ran []result.RanFile) error {
	old, ok := c.ref[variant]
	if !ok || len(old) == 0 {
		c.ref[variant] = ran
		return nil
	}
	ch := result.RanChanges(variant, old, ran)
	if len(ch) == 0 {
		return nil
	}
	list := strings.Join(ch, "; ")
	switch {
	case c.accept:
		fmt.Fprintf(c.stderr, "benchrig: resuming against changed targets (--resume-changed): %s\n", list)
		for _, l := range ch {
			if !slices.Contains(c.changed, l) {
				c.changed = append(c.changed, l)
			}
		}
		c.ref[variant] = ran
		return nil
	case c.resuming:
		return fmt.Errorf("%s was measured against other targets than these (%s): refusing to resume; --resume-changed resumes anyway, or start a new file", c.path, list)
	}
	where := "the run"
	if c.path != "" {
		where = c.path
	}
	return fmt.Errorf("what a target runs changed during the run (%s): stopped; %s keeps the samples measured before, and --resume continues only with --resume-changed", list, where)
}
