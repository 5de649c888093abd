package suite

import (
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Plan is a suite expanded into the samples to run, in the order to run
// them. It is plain data; the same suite always gives the same plan.
type Plan struct {
	// Suite is the suite the plan was made from (after overrides).
	Suite *Suite `json:"-"`
	// Name and Seed are the suite's.
	Name string `json:"name"`
	Seed uint64 `json:"seed"`
	// IsSmoke marks a smoke plan (see Smoke): its figures are not results.
	IsSmoke bool `json:"smoke"`
	// Repeats is how many samples each cell has.
	Repeats int `json:"repeats"`
	// Phases of every sample.
	Phases Phases `json:"phases"`
	// Requests bounds every sample's load phase (0: by duration only).
	Requests int64 `json:"requests"`
	// Cells in the order of the first repeat.
	Cells []Cell `json:"cells"`
	// Samples in run order (see Suite.Plan for the rule); none in a
	// search's plan, whose steps are decided as it runs.
	Samples []Sample `json:"samples"`
	// Search is the suite's capacity search, if any: each cell is
	// searched (Search.Config), Searches times.
	Search *Search `json:"search,omitempty"`
	// Startup is the per-sample overhead Format assumes: starting and
	// stopping the target, readiness, checks (default DefaultStartup).
	Startup time.Duration `json:"-"`
}

// DefaultStartup is the per-sample overhead assumed by Format.
const DefaultStartup = 2 * time.Second

// Cell is one point of the matrix: one variant (target with params, path,
// workload) at one level (connections, batch, rate, pipeline).
type Cell struct {
	// ID names the cell stably across runs and suites, for example
	// "go-hello/hello/c=64/b=1/r=1000/node=node20": target, path,
	// workload (if any), connections, batch, rate (open loop only),
	// pipeline (only when > 1), then params sorted by name.
	ID       string            `json:"id"`
	Target   string            `json:"target"`
	Params   map[string]string `json:"params,omitempty"`
	Path     string            `json:"path"`
	Protocol Protocol          `json:"protocol"`
	Workload string            `json:"workload,omitempty"`
	// Connections is the number of connections the engine opens.
	Connections int `json:"connections"`
	// Batch is the number of keys per request (1 for http).
	Batch int `json:"batch"`
	// Rate is the constant arrival rate in requests per second; 0 means
	// closed loop.
	Rate float64 `json:"rate,omitempty"`
	// Pipeline is the number of requests in flight per connection.
	Pipeline int `json:"pipeline"`
}

// OpenLoop reports whether the cell runs at a constant arrival rate.
func (c Cell) OpenLoop() bool { return c.Rate > 0 }

// CaseLabel names the cell's numeric axes, a row of a report's tables:
// "64 keys · 4 conns", "32 conns · 1000 req/s", "10 conns · p=16".
func (c Cell) CaseLabel() string {
	parts := []string{fmt.Sprintf("%d conns", c.Connections)}
	if c.Protocol.Keyed() {
		keys := fmt.Sprintf("%d keys", c.Batch)
		if c.Batch == 1 {
			keys = "1 key"
		}
		parts = append([]string{keys}, parts...)
	}
	if c.Rate > 0 {
		parts = append(parts, rateLabel(c.Rate))
	}
	if c.Pipeline > 1 {
		parts = append(parts, fmt.Sprintf("p=%d", c.Pipeline))
	}
	return strings.Join(parts, " · ")
}

// VariantLabel names what the cell compares, a column of a report's
// tables: the target, its params sorted by name, the path and workload
// ("node-http node=node20 hello").
func (c Cell) VariantLabel() string {
	v := c.Target
	names := make([]string, 0, len(c.Params))
	for k := range c.Params {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v += " " + k + "=" + c.Params[k]
	}
	v += " " + c.Path
	if c.Workload != "" {
		v += " " + c.Workload
	}
	return v
}

// Sample is one measurement to run: one cell in one repeat.
type Sample struct {
	// Index is the sample's 0-based position in run order.
	Index int `json:"index"`
	// Key is "cellID#repeat", stable across runs of the same suite; resume
	// uses it to skip samples already recorded.
	Key string `json:"key"`
	// Cell indexes Plan.Cells; CellID repeats its ID.
	Cell   int    `json:"cell"`
	CellID string `json:"cell_id"`
	// Repeat is 1-based.
	Repeat int `json:"repeat"`
	// Seed is this sample's seed, derived from the suite seed and Key, so a
	// sample's random choices do not depend on which samples ran before.
	Seed uint64 `json:"seed"`
}

// variant is one thing compared: a target with one combination of its
// params, a path and a workload.
type variant struct {
	// batches, connections and rates, if set, are the only levels
	// measured on that axis (Case.Batches, Case.Connections, Case.Rates).
	batches, connections []int
	rates                []float64
	target               string
	params               map[string]string
	path                 string
	proto                Protocol
	workload             string
}

// level is one combination of the numeric axes.
type level struct {
	batch, connections, pipeline int
	rate                         float64
}

// Plan expands the matrix into cells and orders cells × repeats fairly.
//
// Variants are Targets × (each target's Params) × Paths × Workloads, target
// outermost, or the Cases each multiplied by its target's Params; params
// combine in order of their names, the first name outermost, each list in
// YAML order. Levels are Batches × Connections × Rates × Pipeline, batches
// outermost, each list in YAML order. Cells are listed levels outer,
// variants inner.
//
// Fair order, as pg_local_cache's runner does it: in repeat r (1-based)
//   - every level axis is walked forward when r is odd and backward when r
//     is even;
//   - the variants are rotated left by (r−1) mod len(variants), so each
//     variant runs first at each level in turn;
//   - levels are the outer loop, variants the inner one, so the variants
//     compared at one level run next to each other in time.
//
// With variants A B C at levels 1 2: repeat 1 runs 1A 1B 1C 2A 2B 2C, repeat
// 2 runs 2B 2C 2A 1B 1C 1A, repeat 3 runs 1C 1A 1B 2C 2A 2B. The order
// depends only on the suite, never on a random draw.
func (s *Suite) Plan() (*Plan, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	if err := s.checkSize(); err != nil {
		return nil, err
	}
	variants := s.variants()
	axes := s.levelAxes()
	p := &Plan{
		Suite: s, Name: s.Name, Seed: s.Seed, Repeats: s.Repeats,
		Phases: s.Phases, Requests: s.Requests, Startup: DefaultStartup,
	}
	ids := map[string]bool{}
	nv := len(variants)
	// grid maps a level × variant position to its cell (-1: a case that
	// skips the level).
	grid := map[int]int{}
	for _, lv := range axes.walk(1) {
		for vi, v := range variants {
			if !v.measures(lv.level) {
				grid[lv.index*nv+vi] = -1
				continue
			}
			c := newCell(v, lv)
			if ids[c.ID] {
				return nil, fmt.Errorf("suite %q: two cells have the ID %q", s.Name, c.ID)
			}
			ids[c.ID] = true
			grid[lv.index*nv+vi] = len(p.Cells)
			p.Cells = append(p.Cells, c)
		}
	}
	if len(p.Cells) == 0 {
		return nil, fmt.Errorf("suite %q: the matrix has no cells", s.Name)
	}
	if s.Search != nil {
		p.Search = s.Search
		return p, nil
	}
	for r := 1; r <= s.Repeats; r++ {
		shift := (r - 1) % nv
		for _, li := range axes.walk(r) {
			for k := 0; k < nv; k++ {
				ci := grid[li.index*nv+(k+shift)%nv]
				if ci < 0 {
					continue
				}
				p.Samples = append(p.Samples, p.sample(ci, r))
			}
		}
	}
	return p, nil
}

// Bounds of a plan, the same for plan, run and verify (which re-expands
// the recorded suite). A bound is checked on the counts, before the cells
// and samples are allocated: `repeats: 1000000000` used to allocate the
// samples one by one, gigabytes before the first one ran.
const (
	// MaxSamples bounds cells × repeats.
	MaxSamples = 100_000
	// MaxConnections bounds a connection count of the matrix.
	MaxConnections = 100_000
	// MaxPipeline is the deepest pipeline the drivers accept (http and
	// resp: 1024; pg does not pipeline).
	MaxPipeline = 1024
)

// checkSize checks the matrix's numbers against the bounds above and counts
// the samples the plan would have, without expanding it.
func (s *Suite) checkSize() error {
	l := s.loc
	for i, c := range s.Matrix.Connections {
		if c > MaxConnections {
			l.errf(index("matrix.connections", i), "must be ≤ %d, got %d (each connection is a socket: a file descriptor and a local port)", MaxConnections, c)
		}
	}
	for i, p := range s.Matrix.Pipeline {
		if p > MaxPipeline {
			l.errf(index("matrix.pipeline", i), "must be ≤ %d (the drivers' deepest pipeline), got %d", MaxPipeline, p)
		}
	}
	if err := l.result(); err != nil {
		return err
	}
	// cells ≤ variants × levels; counted with saturation so a product of
	// long lists cannot overflow.
	mul := func(a, b int) int {
		if a == 0 || b == 0 {
			return 0
		}
		if a > (MaxSamples+1)/b+1 {
			return MaxSamples + 1
		}
		return min(a*b, MaxSamples+1)
	}
	variants := 0
	for _, p := range s.Matrix.pairs() {
		n := 1
		if t := s.Targets[p.target]; t != nil {
			for _, vals := range t.Params {
				n = mul(n, len(vals))
			}
		}
		variants = min(variants+n, MaxSamples+1)
	}
	levels := mul(mul(len(s.Matrix.Batches), len(s.Matrix.Connections)), mul(max(len(s.Matrix.Rates), 1), len(s.Matrix.Pipeline)))
	cells := mul(variants, levels)
	if samples := mul(cells, max(s.Repeats, 1)); samples > MaxSamples {
		what := fmt.Sprintf("%d cells × %d repeats", cells, s.Repeats)
		if cells > MaxSamples {
			what = fmt.Sprintf("over %d cells", MaxSamples)
		}
		l.errf("repeats", "the plan would have up to %s, over the bound of %d samples (cells × repeats); lower repeats or shorten the matrix's lists", what, MaxSamples)
	}
	return l.result()
}

// sample makes the next sample of cell ci in repeat r.
func (p *Plan) sample(ci, r int) Sample {
	key := p.Cells[ci].ID + "#" + strconv.Itoa(r)
	return Sample{Index: len(p.Samples), Key: key, Cell: ci, CellID: p.Cells[ci].ID, Repeat: r, Seed: sampleSeed(p.Seed, key)}
}

// check validates a suite again before planning: overrides or code may have
// changed it since Parse.
func (s *Suite) check() error {
	if s.loc == nil {
		s.loc = newLocated(s.Source.File)
	}
	s.loc.errs = nil
	s.validate()
	return s.loc.result()
}

// measures reports whether the variant is measured at level lv: a case
// may pick some of the matrix's batches, connection counts and rates.
func (v variant) measures(lv level) bool {
	return (v.batches == nil || containsInt(v.batches, lv.batch)) &&
		(v.connections == nil || containsInt(v.connections, lv.connections)) &&
		(v.rates == nil || slices.Contains(v.rates, lv.rate))
}

// variants lists the matrix's variants in order (see Plan).
func (s *Suite) variants() []variant {
	var out []variant
	for _, p := range s.Matrix.pairs() {
		for _, params := range paramCombos(s.Targets[p.target].Params) {
			out = append(out, variant{target: p.target, params: params, path: p.path,
				proto: s.Paths[p.path].Protocol(), workload: p.workload,
				batches: p.batches, connections: p.connections, rates: p.rates})
		}
	}
	return out
}

// paramCombos lists every combination of params: names sorted, the first
// outermost, values in list order. No params give one empty combination.
func paramCombos(params map[string][]string) []map[string]string {
	combos := []map[string]string{nil}
	for _, name := range sortedKeys(params) {
		var next []map[string]string
		for _, c := range combos {
			for _, v := range params[name] {
				m := make(map[string]string, len(c)+1)
				for k, x := range c {
					m[k] = x
				}
				m[name] = v
				next = append(next, m)
			}
		}
		combos = next
	}
	return combos
}

func newCell(v variant, lv indexedLevel) Cell {
	c := Cell{Target: v.target, Params: v.params, Path: v.path, Protocol: v.proto, Workload: v.workload,
		Connections: lv.connections, Batch: lv.batch, Rate: lv.rate, Pipeline: lv.pipeline}
	c.ID = cellID(c)
	return c
}

// cellID formats a cell's ID (see Cell.ID).
func cellID(c Cell) string {
	parts := []string{c.Target, c.Path}
	if c.Workload != "" {
		parts = append(parts, c.Workload)
	}
	parts = append(parts, "c="+strconv.Itoa(c.Connections), "b="+strconv.Itoa(c.Batch))
	if c.Rate > 0 {
		parts = append(parts, "r="+fmtFloat(c.Rate))
	}
	if c.Pipeline > 1 {
		parts = append(parts, "p="+strconv.Itoa(c.Pipeline))
	}
	names := make([]string, 0, len(c.Params))
	for n := range c.Params {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		parts = append(parts, n+"="+c.Params[n])
	}
	return strings.Join(parts, "/")
}

// sampleSeed derives a sample's seed from the suite seed and the sample key
// (FNV-1a of the key, mixed with splitmix64).
func sampleSeed(seed uint64, key string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	z := seed ^ h.Sum64()
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// levelAxes are the numeric axes of the matrix, each in YAML order.
type levelAxes struct {
	batches, connections, pipeline []int
	rates                          []float64 // {0} for closed loop
}

// indexedLevel is a level with its index in forward (repeat 1) order.
type indexedLevel struct {
	level
	index int
}

func (s *Suite) levelAxes() levelAxes {
	a := levelAxes{batches: s.Matrix.Batches, connections: s.Matrix.Connections, pipeline: s.Matrix.Pipeline, rates: s.Matrix.Rates}
	if len(a.rates) == 0 {
		a.rates = []float64{0}
	}
	return a
}

// walk lists the levels in the order of repeat r: batches outermost, then
// connections, rates, pipeline; every axis forward when r is odd, backward
// when r is even. index is the level's position in repeat 1's order.
func (a levelAxes) walk(r int) []indexedLevel {
	order := func(n int) []int {
		out := make([]int, n)
		for i := range out {
			if r%2 == 1 {
				out[i] = i
			} else {
				out[i] = n - 1 - i
			}
		}
		return out
	}
	nc, nr, np := len(a.connections), len(a.rates), len(a.pipeline)
	var out []indexedLevel
	for _, bi := range order(len(a.batches)) {
		for _, ci := range order(nc) {
			for _, ri := range order(nr) {
				for _, pi := range order(np) {
					out = append(out, indexedLevel{
						level: level{batch: a.batches[bi], connections: a.connections[ci], rate: a.rates[ri], pipeline: a.pipeline[pi]},
						index: ((bi*nc+ci)*nr+ri)*np + pi,
					})
				}
			}
		}
	}
	return out
}

// rateLabel is a rate in a case label: as written for a matrix's rates,
// to two decimals for a search step's (a bisection's geometric mean).
func rateLabel(r float64) string {
	s := fmt.Sprintf("%v", r)
	if i := strings.IndexByte(s, '.'); i >= 0 && len(s)-i-1 > 2 && !strings.ContainsAny(s, "e") {
		s = strconv.FormatFloat(r, 'f', 2, 64)
	}
	return s + " req/s"
}
