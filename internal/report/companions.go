package report

import (
	"fmt"

	"github.com/benchrig/benchrig/internal/result"
)

// Companions in reports: a sample whose target had companions (the
// database behind an application) shows every sampled process under its
// own name, the headline marked; the "Server" figures everywhere else are
// the headline's (result.Sample.HeadlineServer).

// process is one sampled process of a sample: the target or a companion.
type process struct {
	name, role string
	server     *result.Server
}

// processesOf lists the target, then each companion, with their roles.
func processesOf(s *result.Sample) []process {
	if len(s.Companions) == 0 {
		return nil
	}
	main := "target"
	if s.Target != nil && s.Target.Name != "" {
		main = s.Target.Name
	}
	role := result.RoleHeadline
	for _, c := range s.Companions {
		if c.Role == result.RoleHeadline {
			role = "target"
		}
	}
	var out []process
	if s.Server != nil && len(s.Server.Samples) > 0 {
		out = append(out, process{name: main, role: role, server: s.Server})
	}
	for _, c := range s.Companions {
		out = append(out, process{name: c.Name, role: c.Role, server: c.Server})
	}
	return out
}

// processNames are the names of the processes of the samples, in order
// of first appearance, with the role each had first.
func processNames(ss []*result.Sample) (names []string, roles map[string]string) {
	roles = map[string]string{}
	for _, s := range ss {
		for _, p := range processesOf(s) {
			name := p.name
			if p.role == "target" || (p.role == result.RoleHeadline && p.server == s.Server) {
				name = targetLabel
			}
			if _, ok := roles[name]; !ok {
				roles[name] = p.role
				names = append(names, name)
			}
		}
	}
	return names, roles
}

// targetLabel stands for a sample's own target in the processes table (its
// recorded name varies with the port it was started on).
const targetLabel = "(target)"

// processServer is the server of the process named name in s.
func processServer(s *result.Sample, name string) *result.Server {
	if name == targetLabel {
		return s.Server
	}
	for _, c := range s.Companions {
		if c.Name == name {
			return c.Server
		}
	}
	return nil
}

// processMetrics are the server figures of one named process.
func processMetrics(name string) []metric {
	get := func(f func(result.ServerFigures) (float64, bool)) func(*result.Sample) (float64, bool) {
		return func(s *result.Sample) (float64, bool) {
			sv := processServer(s, name)
			if sv == nil || sv.Figures.WindowSeconds == 0 {
				return 0, false
			}
			return f(sv.Figures)
		}
	}
	return []metric{
		{name: "Cores", format: "%.2f", get: get(func(f result.ServerFigures) (float64, bool) { return f.Cores, true })},
		{name: "% of machine", format: "%.1f", get: get(func(f result.ServerFigures) (float64, bool) { return f.MachinePercent, true })},
		{name: "µs/request", format: "%.1f", get: get(func(f result.ServerFigures) (float64, bool) {
			return f.MicrosPerRequest, f.MicrosPerRequest > 0
		})},
		{name: "Peak MiB", format: "%.1f", get: get(func(f result.ServerFigures) (float64, bool) {
			if f.PSSPeak > 0 {
				return float64(f.PSSPeak) / (1 << 20), true
			}
			return float64(f.RSSPeak) / (1 << 20), f.RSSPeak > 0
		})},
	}
}

// processesTable is the table of every sampled process of each case and
// variant: the target and its companions, the headline marked.
func (g *grid) processesTable() (Table, bool) {
	t := Table{Caption: "Sampled processes: the target and its companions, each its own process tree (the headline's figures are the Server figures above)",
		Header: []string{"Case", "Variant", "Process", "Role", "Cores", "% of machine", "µs/request", "Peak MiB"}, Labels: 4}
	for _, c := range g.cases {
		for _, v := range g.variants {
			ss := g.at(c, v)
			names, roles := processNames(ss)
			for _, n := range names {
				row := []string{c, v, n, roles[n]}
				for _, m := range processMetrics(n) {
					row = append(row, m.cell(ss))
				}
				t.Rows = append(t.Rows, row)
			}
		}
	}
	return t, len(t.Rows) > 0
}

// addProcesses adds the processes table to the resources section, when
// any sample had companions.
func addProcesses(sec *Section, g *grid) {
	t, ok := g.processesTable()
	if !ok {
		return
	}
	sec.Text = append(sec.Text, "Targets with companions: each process tree is sampled on its own through every phase; "+
		"µs/request divides each one's CPU by the same completed requests. The Server figures above are the headline process's.")
	sec.Tables = append(sec.Tables, t)
}

// processesText prints the processes table in the text matrix.
func processesText(p *printer, g *grid) {
	pt, ok := g.processesTable()
	if !ok {
		return
	}
	t := &table{}
	t.add(pt.Header...)
	for _, r := range pt.Rows {
		t.add(r...)
	}
	p.f("\nSampled processes (the target and its companions), median [min–max]:\n")
	p.table(t)
}

// companionTables prints each companion's server table in the terminal
// view of one sample.
func companionTables(p *printer, s *result.Sample, l *result.Load) {
	for _, c := range s.Companions {
		if c.Server == nil {
			p.f("\nCompanion %s (%s): not sampled: %s\n", c.Name, c.Role, c.Error)
			continue
		}
		p.f("\nCompanion %s (%s):", c.Name, c.Role)
		serverTable(p, c.Server, l)
	}
	if len(s.Companions) > 0 {
		p.f("Headline server figures: %s.\n", s.HeadlineName())
	}
}

// companionCPUSeries and companionRSSSeries are a companion's CPU in cores
// and RSS in MiB on the sample's time axis (placed by wall-clock time: the
// companion's sampler started a moment after the target's).
func companionCPUSeries(c result.Companion, ax timeAxis) Series {
	if c.Server == nil {
		return Series{Name: c.Name}
	}
	var xs, cum []float64
	for _, r := range c.Server.Samples {
		xs, cum = append(xs, ax.at(r.Time)), append(cum, r.CPU())
	}
	return rateSeries(c.Name, xs, cum)
}

func companionRSSSeries(c result.Companion, ax timeAxis) Series {
	sr := Series{Name: c.Name + " RSS"}
	if c.Server == nil {
		return sr
	}
	for _, r := range c.Server.Samples {
		sr.Points = append(sr.Points, Point{X: ax.at(r.Time), Y: float64(r.RSS) / (1 << 20)})
	}
	return sr
}

// withCompanions adds the companions' series to a sample's memory and CPU
// panels, naming the target's own series after it.
func withCompanions(s *result.Sample, ax timeAxis, mem, cpu *Chart) {
	if len(s.Companions) == 0 {
		return
	}
	name := targetLabel
	if s.Target != nil && s.Target.Name != "" {
		name = s.Target.Name
	}
	if s.Server == nil || len(s.Server.Samples) == 0 {
		mem.Series, cpu.Series = nil, nil // the target itself was not sampled (an address)
	}
	for i := range mem.Series {
		mem.Series[i].Name = fmt.Sprintf("%s %s", name, mem.Series[i].Name)
	}
	for i := range cpu.Series {
		cpu.Series[i].Name = name
	}
	for _, c := range s.Companions {
		mem.Series = append(mem.Series, companionRSSSeries(c, ax))
		cpu.Series = append(cpu.Series, companionCPUSeries(c, ax))
	}
	mem.Title, cpu.Title = "Memory of the target and its companions", "CPU of the target and its companions"
}
