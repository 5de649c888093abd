package report

import (
	"io"
)

// Console writes what a terminal shows of a results file: the comparison
// tables (Matrix), benchrig's floor, the assertions held, the warnings a
// reader must see (failed, unhealthy and noisy samples, A/A pairs that
// disagree, pg statements custom-planned on every call, an incomplete
// file), and the errors by message when there were any.
func Console(w io.Writer, src *Source) error {
	if err := Matrix(w, src.Rows); err != nil {
		return err
	}
	g := newGrid(src.Rows)
	p := &printer{w: w}
	if line := FloorLine(src.Floor); line != "" {
		p.f("\n%s\n", line)
	}
	if line := assertionsLine(src.Rows); line != "" {
		p.f("\n%s\n", line)
	}
	var notes []string
	notes = append(notes, src.Notes...)
	notes = append(notes, sampleNotes(src.Rows)...)
	notes = append(notes, noiseNotes(g)...)
	notes = append(notes, aaNotes(g)...)
	notes = append(notes, planNotes(g)...)
	notes = append(notes, metricsNotes(src.Rows)...)
	if len(notes) > 0 {
		p.f("\n")
		for _, n := range notes {
			p.f("! %s\n", n)
		}
	}
	if sec := errorsSection(g, src.Rows); len(sec.Tables) > 1 {
		for _, t := range sec.Tables[1:] {
			if len(t.Rows) > 0 && t.Caption != bySampleCaption {
				p.docTable(t)
			}
		}
	}
	return p.err
}
