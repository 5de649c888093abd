package live

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/report"
	"github.com/benchrig/benchrig/internal/result"
)

// renderEvery is the least time between two renderings: a page gets at
// most one update a second, however often the state changes.
const renderEvery = time.Second

// renderLoop renders the state when it changed (and, while a plan runs,
// every second for its clock), at most once per renderEvery, and
// publishes the frame. It is the only goroutine that renders.
func (s *Server) renderLoop() {
	tick := time.NewTicker(renderEvery)
	defer tick.Stop()
	last := time.Now()
	for {
		select {
		case <-s.done:
			return
		case <-s.wake:
		case <-tick.C:
		}
		if wait := time.Until(last.Add(renderEvery)); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-s.done:
				t.Stop()
				return
			case <-t.C:
			}
		}
		s.mu.Lock()
		need := s.st.dirty || s.st.final == nil && len(s.st.plan) > 0
		s.mu.Unlock()
		if need {
			last = time.Now()
			s.publish(s.render(s.snapshot()))
		}
	}
}

// render draws a snapshot: the three parts of the live page, as an event
// and as the page a new visitor gets; or, once the run is over, the
// event that reloads the pages and the report as the page.
func (s *Server) render(sn snapshot) *frame {
	s.seq++
	f := &frame{id: s.seq}
	if sn.final != nil {
		f.final, f.page = true, sn.final
		f.event = fmt.Appendf(nil, "id: %d\nevent: final\ndata: reload\n\n", f.id)
		return f
	}
	parts := map[string]string{"status": statusHTML(sn), "current": currentHTML(sn), "finished": finishedHTML(sn), "plan": planHTML(sn)}
	var data bytes.Buffer
	enc := json.NewEncoder(&data)
	enc.SetEscapeHTML(false) // the fragments are HTML; JSON escapes every line break
	if err := enc.Encode(parts); err != nil {
		parts = map[string]string{"status": "<p>" + html.EscapeString(err.Error()) + "</p>"}
		data.Reset()
		_ = enc.Encode(parts)
	}
	f.event = fmt.Appendf(nil, "id: %d\nevent: state\ndata: %s\n\n", f.id, bytes.TrimSpace(data.Bytes()))
	f.page = livePage(sn.title, parts)
	return f
}

// fragment is a report piece, or what went wrong drawing it.
func fragment(s string, err error) string {
	if err != nil {
		return "<p>" + html.EscapeString(err.Error()) + "</p>"
	}
	return s
}

// sampleState is where one planned sample is: done (with the report's
// verdict), in flight (with its phase) or to come.
func sampleState(sn snapshot, id string, done map[string]*result.Sample) string {
	if smp, ok := done[id]; ok {
		return "done · " + report.Verdict(smp)
	}
	if id == sn.current {
		if p := currentPhase(sn); p != "" {
			return "running · " + p
		}
		return "running"
	}
	return "to come"
}

// currentPhase is the phase of the last point, or the planned phase at
// the time elapsed since the sample started.
func currentPhase(sn snapshot) string {
	if n := len(sn.points); n > 0 {
		return sn.points[n-1].Phase
	}
	at, elapsed := time.Duration(0), sn.now.Sub(sn.currentStart)
	for _, p := range sn.phases {
		at += p.Duration
		if elapsed < at {
			return p.Name
		}
	}
	return ""
}

// statusHTML is the progress: counts of done, running and to come, the
// time elapsed and left, and a bar.
func statusHTML(sn snapshot) string {
	done := map[string]*result.Sample{}
	for _, smp := range sn.finished {
		done[smp.Key] = smp
	}
	var b strings.Builder
	nDone, running, toCome := 0, 0, 0
	for _, it := range sn.plan {
		switch {
		case done[it.ID] != nil:
			nDone++
		case it.ID == sn.current:
			running++
		default:
			toCome++
		}
	}
	total := len(sn.plan)
	if total == 0 {
		fmt.Fprintf(&b, `<p class="progress">No plan yet · %d finished · elapsed %s</p>`, len(sn.finished), span(sn.now.Sub(sn.started)))
		return b.String()
	}
	fmt.Fprintf(&b, `<p class="progress"><strong>%d of %d done</strong> · %d running · %d to come · elapsed %s`, nDone, total, running, toCome, span(sn.now.Sub(sn.started)))
	if left, ok := eta(sn, done); ok && running+toCome > 0 {
		fmt.Fprintf(&b, " · about %s left (ends about %s)", span(left), sn.now.Add(left).Format("15:04"))
	}
	b.WriteString("</p>")
	frac := float64(nDone)
	if running > 0 {
		for _, it := range sn.plan {
			if it.ID == sn.current && it.Estimate > 0 {
				frac += min(1, float64(sn.now.Sub(sn.currentStart))/float64(it.Estimate))
			}
		}
	}
	fmt.Fprintf(&b, `<div class="bar" role="progressbar" aria-valuemin="0" aria-valuemax="%d" aria-valuenow="%d"><span style="width: %.1f%%"></span></div>`,
		total, nDone, 100*frac/float64(total))
	return b.String()
}

// planHTML is the plan's samples in order with their state: done (and
// the verdict), running (and the phase) or to come; folded when long.
func planHTML(sn snapshot) string {
	if len(sn.plan) == 0 {
		return `<p class="none">No plan yet.</p>`
	}
	done := map[string]*result.Sample{}
	for _, smp := range sn.finished {
		done[smp.Key] = smp
	}
	t := report.Table{Header: []string{"#", "Sample", "State"}, Labels: 3}
	for i, it := range sn.plan {
		label := it.Label
		if label == "" {
			label = it.ID
		}
		t.Rows = append(t.Rows, []string{fmt.Sprint(i + 1), label, sampleState(sn, it.ID, done)})
	}
	open := ""
	if len(sn.plan) <= 20 {
		open = " open"
	}
	return fmt.Sprintf(`<details id="plan-list"%s><summary>%d samples in the order they run</summary>%s</details>`, open, len(sn.plan), fragment(report.TableHTML(t)))
}

// eta is the time left: the planned time of the samples to come and of
// the rest of the one in flight, scaled by the pace of the samples this
// run measured (their time over their plan).
func eta(sn snapshot, done map[string]*result.Sample) (time.Duration, bool) {
	est := make([]time.Duration, len(sn.plan))
	var sum time.Duration
	for i, it := range sn.plan {
		est[i], sum = it.Estimate, sum+it.Estimate
	}
	if sum == 0 {
		if sn.estimate <= 0 {
			return 0, false
		}
		for i := range est {
			est[i] = sn.estimate / time.Duration(len(est))
		}
	}
	var left, planned, took time.Duration
	for i, it := range sn.plan {
		if d, ok := sn.took[it.ID]; ok {
			planned, took = planned+est[i], took+d
		}
		switch {
		case done[it.ID] != nil:
		case it.ID == sn.current:
			left += max(0, est[i]-sn.now.Sub(sn.currentStart))
		default:
			left += est[i]
		}
	}
	if planned > 0 {
		pace := min(max(float64(took)/float64(planned), 0.25), 4)
		left = time.Duration(float64(left) * pace)
	}
	return left, true
}

// span is a duration for people: "45 s", "3 min 05 s", "1 h 02 min".
func span(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%d s", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%d min %02d s", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%d h %02d min", int(d.Hours()), int(d.Minutes())%60)
}

// label is the plan's label of the sample id, or id.
func label(sn snapshot, id string) string {
	for _, it := range sn.plan {
		if it.ID == id && it.Label != "" {
			return it.Label
		}
	}
	return id
}

// finishedHTML is the report's table of the finished samples, in the
// order they finished.
func finishedHTML(sn snapshot) string {
	if len(sn.finished) == 0 {
		return `<p class="none">None yet.</p>`
	}
	rows := make([]report.Row, len(sn.finished))
	for i, smp := range sn.finished {
		c, v := smp.Case, smp.Variant
		if c == "" && v == "" {
			c = label(sn, smp.Key)
		}
		rows[i] = report.Row{Case: c, Variant: v, Sample: smp}
	}
	t := report.SamplesTable(rows)
	t.Caption = fmt.Sprintf("Finished samples (%d), in the order they finished", len(rows))
	out := ""
	if c, ok := report.CapacityCurve(sn.finished); ok { // a capacity search: its curve grows with its steps
		out = fragment(report.ChartsHTML([]report.Chart{c}))
	}
	return out + fragment(report.TableHTML(t))
}
