package suite

import (
	"time"

	"github.com/benchrig/benchrig/internal/capacity"
)

// Search turns a suite into a capacity search: instead of measuring the
// matrix's cells at set rates, each cell (closed-loop levels: targets,
// paths, workloads, connections, batches, pipeline) is searched for the
// highest constant arrival rate at which its samples are HEALTHY under the
// suite's thresholds (package capacity: a geometric ladder, bisection to
// the resolution, confirmation), a fresh target process for every step
// as for every sample. Every step is an ordinary sample of the results
// file, marked with its step.
type Search struct {
	// Rate bounds the searched rates.
	Rate SearchRate `json:"rate"`
	// Confirm is how many samples confirm the found rate, and how many
	// are taken one resolution step above it (default 3; 0: none).
	Confirm *int `json:"confirm,omitempty"`
	// Searches is how many times the whole search runs per cell (default
	// 1); the capacity is then the median [min–max] over the searches.
	Searches int `json:"searches,omitempty"`
	// MaxTime bounds the search of one cell (0: none); a search cut by it
	// says so, with the bracket it knew.
	MaxTime *Duration `json:"max_time,omitempty"`
}

// SearchRate is the searched range of rates, requests per second.
type SearchRate struct {
	// From is the ladder's first rung; Max the highest rate offered.
	From float64 `json:"from"`
	Max  float64 `json:"max"`
	// Resolution is the relative width at which the search stops (default
	// 0.05: 5 %).
	Resolution float64 `json:"resolution,omitempty"`
	// Factor is the ladder's ratio (default 2).
	Factor float64 `json:"factor,omitempty"`
}

// Config is the search's capacity.Config, defaults filled; stepTime is
// the estimated duration of one step.
func (s *Search) Config(stepTime time.Duration) capacity.Config {
	c := capacity.Defaults(s.Rate.From, s.Rate.Max)
	if s.Rate.Resolution > 0 {
		c.Resolution = s.Rate.Resolution
	}
	if s.Rate.Factor > 0 {
		c.Factor = s.Rate.Factor
	}
	if s.Confirm != nil {
		c.Confirm = *s.Confirm
	}
	if s.Searches > 0 {
		c.Searches = s.Searches
	}
	if s.MaxTime != nil {
		c.MaxTime = s.MaxTime.D()
	}
	c.StepTime = stepTime
	return c
}

// validateSearch checks the search block, each field against its bound.
func (s *Suite) validateSearch() {
	sr := s.Search
	if sr == nil {
		return
	}
	l := s.loc
	r := sr.Rate
	if !(r.From >= capacity.MinRate && r.From <= capacity.MaxRate) {
		l.errf("search.rate.from", "must be a rate between %v and %v requests per second, got %v", capacity.MinRate, capacity.MaxRate, r.From)
	}
	if !(r.Max >= capacity.MinRate && r.Max <= capacity.MaxRate) {
		l.errf("search.rate.max", "must be a rate between %v and %v requests per second, got %v", capacity.MinRate, capacity.MaxRate, r.Max)
	} else if r.Max < r.From {
		l.errf("search.rate.max", "must be ≥ search.rate.from (%v), got %v", r.From, r.Max)
	}
	if r.Resolution != 0 && !(r.Resolution >= capacity.MinResolution && r.Resolution <= capacity.MaxResolution) {
		l.errf("search.rate.resolution", "must be a fraction between %v and %v (0: %v), got %v", capacity.MinResolution, capacity.MaxResolution, capacity.DefaultResolution, r.Resolution)
	}
	if r.Factor != 0 && !(r.Factor >= capacity.MinFactor && r.Factor <= capacity.MaxFactor) {
		l.errf("search.rate.factor", "must be between %v and %v (0: %v), got %v", capacity.MinFactor, capacity.MaxFactor, capacity.DefaultFactor, r.Factor)
	}
	if c := sr.Confirm; c != nil && (*c < 0 || *c > capacity.MaxConfirm) {
		l.errf("search.confirm", "must be 0 to %d samples, got %d", capacity.MaxConfirm, *c)
	}
	if sr.Searches < 0 || sr.Searches > capacity.MaxSearches {
		l.errf("search.searches", "must be 1 to %d (0: 1), got %d", capacity.MaxSearches, sr.Searches)
	}
	if len(s.Matrix.Rates) > 0 {
		l.errf("matrix.rates", "a search decides the rates: remove matrix.rates (search.rate gives the range)")
	}
	for i, c := range s.Matrix.Cases {
		if len(c.Rates) > 0 {
			l.errf(index("matrix.cases", i)+".rates", "a search decides the rates: remove the case's rates")
		}
	}
	if s.Requests > 0 {
		l.errf("requests", "a search's steps are bounded by phases.load: remove requests")
	}
}

// SearchConfig is a search plan's capacity.Config, each step estimated at
// the plan's startup and phases.
func (p *Plan) SearchConfig() capacity.Config {
	return p.Search.Config(p.Startup + p.Phases.Total())
}

// SearchSample is the sample of a search step of cell ci: key is the
// step's key in the results file (result.SearchKey), its seed derived from
// the suite's seed and the key as every sample's is, and the cell at the
// step's rate.
func (p *Plan) SearchSample(ci int, key string, rate float64) (Cell, Sample) {
	c := p.Cells[ci]
	c.Rate = rate
	return c, Sample{Index: -1, Key: key, Cell: ci, CellID: p.Cells[ci].ID, Seed: sampleSeed(p.Seed, key)}
}
