package report

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/benchrig/benchrig/internal/result"
)

// Errors by message: how many of each the top of a list shows.
const (
	topMessagesCase   = 5
	topMessagesSample = 3
)

// messageCount is one message and how often it occurred.
type messageCount struct {
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

// sampleMessages are a sample's non-OK outcomes by message, most frequent
// first (ties by message), a sample that failed before producing figures
// counting once under its error.
func sampleMessages(s *result.Sample) []messageCount {
	m := map[string]int64{}
	if s.Load != nil {
		maps.Copy(m, s.Load.Messages)
	}
	if s.Error != "" {
		m["sample failed: "+s.Error]++
	}
	return sortedMessages(m)
}

// sortedMessages orders counts by message, most frequent first.
func sortedMessages(m map[string]int64) []messageCount {
	out := make([]messageCount, 0, len(m))
	for k, v := range m {
		out = append(out, messageCount{k, v})
	}
	slices.SortFunc(out, func(a, b messageCount) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		return cmp.Compare(a.Message, b.Message)
	})
	return out
}

// cellMessages sums the messages of a cell's samples.
func cellMessages(ss []*result.Sample) []messageCount {
	m := map[string]int64{}
	for _, s := range ss {
		for _, mc := range sampleMessages(s) {
			m[mc.Message] += mc.Count
		}
	}
	return sortedMessages(m)
}

// failureCounts are a cell's errors, timeouts, unexpected responses and
// reconnects, summed over its samples.
func failureCounts(ss []*result.Sample) (errs, timeouts, unexpected, reconnects int64) {
	for _, s := range ss {
		if s.Load != nil {
			errs += s.Load.Errors
			timeouts += s.Load.Timeouts
			unexpected += s.Load.Unexpected
			reconnects += s.Load.Reconnects
		}
	}
	return
}

// bySampleCaption names the per-sample table of errorsSection, which the
// terminal report leaves out (it shows the cases').
var bySampleCaption = fmt.Sprintf("Top %d messages per sample", topMessagesSample)

// errorsSection is every non-OK outcome by message: per case and variant
// the totals and the top messages, then per sample its top messages.
func errorsSection(g *grid, rows []Row) Section {
	sec := Section{Title: "Errors"}
	totals := Table{Caption: "Errors, timeouts, unexpected responses and reconnects, summed over the repeats",
		Header: []string{"Case", "Variant", "Errors", "Timeouts", "Unexpected", "Reconnects"}, Labels: 2}
	byCase := Table{Caption: fmt.Sprintf("Top %d messages per case, with counts summed over the repeats", topMessagesCase),
		Header: []string{"Case", "Variant", "Message", "Count"}, Labels: 3}
	any := false
	for _, c := range g.cases {
		for _, v := range g.variants {
			ss := g.at(c, v)
			if len(ss) == 0 {
				continue
			}
			e, t, u, r := failureCounts(ss)
			totals.Rows = append(totals.Rows, []string{c, v, count(e), count(t), count(u), count(r)})
			msgs := cellMessages(ss)
			any = any || e+t+u+r > 0 || len(msgs) > 0
			for i, mc := range msgs {
				if i == topMessagesCase {
					byCase.Rows = append(byCase.Rows, []string{c, v, fmt.Sprintf("(%d more messages)", len(msgs)-i), ""})
					break
				}
				byCase.Rows = append(byCase.Rows, []string{c, v, mc.Message, count(mc.Count)})
			}
		}
	}
	if !any {
		sec.Text = []string{"No errors, timeouts, unexpected responses or reconnects in any sample."}
		return sec
	}
	sec.Text = []string{"Every non-OK outcome is counted by its class and message (\"error: connection reset by peer\", \"unexpected: status 500\"); " +
		"a sample that failed before its load window counts once under its error. Reconnects are connections reopened, counted by cause: " +
		"a server that closed an idle keep-alive connection is not an error (the request is sent again once), a connection that broke after an error is."}
	bySample := Table{Caption: bySampleCaption,
		Header: []string{"#", "Case", "Variant", "Repeat", "Message", "Count", "Reconnects"}, Labels: 5}
	for i, r := range rows {
		msgs := sampleMessages(r.Sample)
		var rec int64
		if r.Sample.Load != nil {
			rec = r.Sample.Load.Reconnects
		}
		for k, mc := range msgs {
			if k == topMessagesSample {
				bySample.Rows = append(bySample.Rows, []string{fmt.Sprint(i + 1), r.Case, r.Variant, fmt.Sprint(r.Sample.Repeat), fmt.Sprintf("(%d more messages)", len(msgs)-k), "", ""})
				break
			}
			recCell := ""
			if k == 0 {
				recCell = count(rec)
			}
			bySample.Rows = append(bySample.Rows, []string{fmt.Sprint(i + 1), r.Case, r.Variant, fmt.Sprint(r.Sample.Repeat), mc.Message, count(mc.Count), recCell})
		}
		if len(msgs) == 0 && rec > 0 {
			bySample.Rows = append(bySample.Rows, []string{fmt.Sprint(i + 1), r.Case, r.Variant, fmt.Sprint(r.Sample.Repeat), "(no failed requests)", "0", count(rec)})
		}
	}
	causes := Table{Caption: "Reconnects by cause, summed over the repeats", Header: []string{"Case", "Variant", "Cause", "Count"}, Labels: 3}
	for _, c := range g.cases {
		for _, v := range g.variants {
			m := map[string]int64{}
			for _, s := range g.at(c, v) {
				if s.Load != nil {
					for k, n := range s.Load.ReconnectCauses {
						m[k] += n
					}
				}
			}
			for _, mc := range sortedMessages(m) {
				causes.Rows = append(causes.Rows, []string{c, v, mc.Message, count(mc.Count)})
			}
		}
	}
	sec.Tables = []Table{totals, byCase}
	for _, t := range []Table{bySample, causes} {
		if len(t.Rows) > 0 {
			sec.Tables = append(sec.Tables, t)
		}
	}
	return sec
}
