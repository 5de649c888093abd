package report

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/usl"
)

// ladder is one variant's closed-loop samples at several connection
// counts, the other axes equal: a connections ladder.
type ladder struct {
	name   string
	byConn map[int][]*result.Sample
}

// ladders groups a file's closed-loop samples (no rate, no search step)
// by variant, batch and pipeline; only groups with two or more connection
// counts are ladders.
func ladders(rows []Row) []*ladder {
	var out []*ladder
	index := map[string]*ladder{}
	for _, r := range rows {
		s := r.Sample
		if !loadOK(s) || s.Search != nil || s.Config == nil || s.Config.Engine.Rate > 0 || s.Config.Cell == nil {
			continue
		}
		c := s.Config.Cell
		key := fmt.Sprintf("%s\x00%d\x00%d\x00%s", r.Variant, c.Batch, c.Pipeline, c.Workload)
		l := index[key]
		if l == nil {
			name := r.Variant
			if c.Batch > 1 {
				name += fmt.Sprintf(" · %d keys", c.Batch)
			}
			if c.Pipeline > 1 {
				name += fmt.Sprintf(" · p=%d", c.Pipeline)
			}
			l = &ladder{name: name, byConn: map[int][]*result.Sample{}}
			index[key] = l
			out = append(out, l)
		}
		l.byConn[s.Config.Engine.Connections] = append(l.byConn[s.Config.Engine.Connections], s)
	}
	return slices.DeleteFunc(out, func(l *ladder) bool { return len(l.byConn) < 2 })
}

// points are the ladder's levels: the median throughput and mean latency
// of each connection count's samples.
func (l *ladder) points() []usl.Point {
	var ns []int
	for n := range l.byConn {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	var out []usl.Point
	for _, n := range ns {
		var xs, rs []float64
		for _, s := range l.byConn[n] {
			xs = append(xs, float64(s.Load.Requests)/s.Load.Seconds)
			rs = append(rs, s.Load.Latency.MeanUS/1e6)
		}
		out = append(out, usl.Point{N: float64(n), X: medianOf(xs), R: medianOf(rs)})
	}
	return out
}

// scalabilitySection fits the Universal Scalability Law to each
// connections ladder of the file: X(N) = λN / (1 + σ(N−1) + κN(N−1)),
// with Little's law checked at each level. None without a ladder.
func scalabilitySection(rows []Row) (Section, bool) {
	ls := ladders(rows)
	if len(ls) == 0 {
		return Section{}, false
	}
	sec := Section{
		Title: "Scalability",
		Text: []string{"Closed-loop throughput X against the connections N, each level the median of its repeats, fitted by least squares with the Universal Scalability Law " +
			"X(N) = λN / (1 + σ(N−1) + κN(N−1)): λ the throughput of one connection, σ the contention (a serialised share), κ the coherency (crosstalk) cost; " +
			"the peak N* = √((1−σ)/κ). No fit with fewer than 4 levels or R² below 0.9. Little's law: N ≈ X·R (R the mean latency); a level far from it " +
			"kept fewer requests in flight than it had connections (the client, or think time, not the server, set its pace)."},
	}
	t := Table{Caption: "Universal Scalability Law by variant", Header: []string{"Variant", "Levels (N)", "λ (req/s)", "σ", "κ", "Peak N*", "R²", "Little's law, worst level"}, Labels: 1}
	chart := Chart{Kind: Lines, Title: "Throughput against connections (measured: solid; fitted USL: dashed)", Unit: "req/s", XUnit: "connections", LogX: true, XLabels: map[float64]string{}}
	for _, l := range ls {
		pts := l.points()
		var levels []string
		measured := Series{Name: l.name}
		for _, p := range pts {
			levels = append(levels, fmt.Sprint(p.N))
			measured.Points = append(measured.Points, Point{X: p.N, Y: p.X})
			chart.XLabels[p.N] = fmt.Sprint(p.N)
		}
		worst := ""
		if lc := usl.LittleCheck(pts); len(lc) > 0 {
			w := lc[0]
			for _, c := range lc[1:] {
				if math.Abs(c.Deviation) > math.Abs(w.Deviation) {
					w = c
				}
			}
			if pts[0].R > 0 {
				worst = fmt.Sprintf("N %g: X·R = %.1f (%+.0f %%)", w.N, w.NEst, 100*w.Deviation)
			}
		}
		chart.Series = append(chart.Series, measured)
		m, err := usl.Fit(pts)
		row := []string{l.name, strings.Join(levels, ", ")}
		switch {
		case err == nil || errors.Is(err, usl.ErrPoorFit):
			peak := m.PeakNote
			if m.HasPeak {
				peak = fmt.Sprintf("%.1f (%.0f req/s)", m.Peak, m.PeakX)
			}
			r2 := fmt.Sprintf("%.3f", m.R2)
			if err != nil {
				r2 += " (below 0.9: no fit)"
			}
			row = append(row, fmt.Sprintf("%.0f", m.Lambda), fmt.Sprintf("%.4f", m.Sigma), fmt.Sprintf("%.2e", m.Kappa), peak, r2, worst)
			if err == nil {
				fitted := Series{Name: l.name + " (USL)", Dashed: true}
				top := pts[len(pts)-1].N
				for n := 1.0; n <= top*1.0001; n *= math.Pow(top, 1.0/40) {
					fitted.Points = append(fitted.Points, Point{X: n, Y: m.X(n)})
					if top <= 1 {
						break
					}
				}
				chart.Series = append(chart.Series, fitted)
			}
		default:
			why := "no fit: " + strings.TrimPrefix(err.Error(), "usl: ")
			row = append(row, "–", "–", "–", why, "–", worst)
		}
		t.Rows = append(t.Rows, row)
	}
	sec.Tables = []Table{t}
	sec.Charts = []Chart{chart}
	return sec, true
}
