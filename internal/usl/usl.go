// Package usl reads a connections ladder (throughput and mean latency at
// N = 1, 2, 4 … connections) with Little's law and the Universal
// Scalability Law.
//
// LittleCheck compares each level's N with X·R (Little's law, L = λW):
// a closed-loop load of N connections keeps N requests outstanding, so a
// level whose X·R is far from N was not measuring what it claims (client
// think time, requests queued in the load generator, a latency that
// leaves out part of the request).
//
// Fit fits Gunther's USL, X(N) = λN / (1 + σ(N−1) + κN(N−1)), by least
// squares on X with σ ≥ 0, κ ≥ 0 and λ > 0:
//
//  1. a linearised start: N/X = (1 + σ(N−1) + κN(N−1))/λ is a quadratic
//     c₀ + c₁N + c₂N² in N, fitted by ordinary least squares, with
//     λ = 1/(c₀+c₁+c₂), σ = (c₁+c₂)λ, κ = c₂λ, clamped to the bounds;
//  2. from it, from σ = κ = 0 and from the best point of a coarse
//     logarithmic grid of σ and κ (λ in closed form at each point:
//     for fixed σ and κ the model is linear in λ), a bounded
//     Levenberg–Marquardt on (λ, σ, κ) with Marquardt's diagonal scaling
//     and an active set at the bounds (a parameter at 0 whose gradient
//     points below 0 is held there for the step);
//  3. the lowest sum of squares of the three wins.
//
// The R usl package (version 3) fits the same three-parameter model by
// nls with the same bounds; on its SPEC SDM 91 example Fit gives its
// coefficients (σ 0.02773, κ 0.0001044, λ 90.00, R² 0.9896; see the
// tests).
package usl

import (
	"errors"
	"fmt"
	"math"
	"slices"
)

// Point is one level of the ladder.
type Point struct {
	// N is the number of connections (the concurrency), ≥ 1.
	N float64 `json:"n"`
	// X is the throughput, requests per second.
	X float64 `json:"x"`
	// R is the mean latency in seconds (0 when not measured; only
	// LittleCheck reads it).
	R float64 `json:"r"`
}

// Little is Little's-law check of one point.
type Little struct {
	// Point is the level checked.
	Point
	// NEst is X·R, the concurrency the throughput and latency imply.
	NEst float64 `json:"n_est"`
	// Deviation is (NEst − N)/N: 0 when Little's law holds, −0.2 when
	// the level kept a fifth fewer requests outstanding than it had
	// connections.
	Deviation float64 `json:"deviation"`
}

// LittleCheck gives, for each point in order, N_est = X·R and its
// deviation from N.
func LittleCheck(points []Point) []Little {
	out := make([]Little, len(points))
	for i, p := range points {
		est := p.X * p.R
		out[i] = Little{Point: p, NEst: est, Deviation: (est - p.N) / p.N}
	}
	return out
}

// Refusals of Fit; the error wraps one of them.
var (
	// ErrInput: a point is not a finite N ≥ 1 with a finite X > 0.
	ErrInput = errors.New("usl: invalid point")
	// ErrTooFewLevels: fewer than MinLevels distinct values of N.
	ErrTooFewLevels = errors.New("usl: too few levels")
	// ErrPoorFit: the model explains too little of X (R² below MinR2).
	ErrPoorFit = errors.New("usl: poor fit")
)

const (
	// MinLevels is the fewest distinct N Fit accepts: three parameters
	// need three levels to be determined and a fourth to be checked.
	MinLevels = 4
	// MinR2 is the lowest R² on X at which Fit accepts its model.
	MinR2 = 0.9
)

// Model is a fitted USL.
type Model struct {
	// Lambda is λ, the throughput of one connection without contention
	// (requests per second).
	Lambda float64 `json:"lambda"`
	// Sigma is σ, the contention (serialised fraction) coefficient.
	Sigma float64 `json:"sigma"`
	// Kappa is κ, the coherency (crosstalk) coefficient.
	Kappa float64 `json:"kappa"`
	// R2 is the coefficient of determination on X:
	// 1 − Σ(X−X̂)²/Σ(X−X̄)².
	R2 float64 `json:"r2"`
	// HasPeak is set when the model has a peak at N ≥ 1.
	HasPeak bool `json:"has_peak"`
	// Peak is N* = √((1−σ)/κ), the concurrency of the highest
	// throughput, when HasPeak.
	Peak float64 `json:"peak,omitempty"`
	// PeakX is the model's X at Peak, when HasPeak.
	PeakX float64 `json:"peak_x,omitempty"`
	// PeakNote says where the peak is, or why there is none: "no peak
	// within the model" when κ = 0.
	PeakNote string `json:"peak_note"`
	// Levels is the number of distinct N fitted.
	Levels int `json:"levels"`
	// Points are the points fitted, in the order given.
	Points []Point `json:"points"`
	// Predicted is the model's X at each point's N.
	Predicted []float64 `json:"predicted"`
}

// X is the model's throughput at n connections.
func (m Model) X(n float64) float64 { return x(m.Lambda, m.Sigma, m.Kappa, n) }

// x is the USL at n.
func x(lambda, sigma, kappa, n float64) float64 {
	return lambda * n / (1 + sigma*(n-1) + kappa*n*(n-1))
}

// String gives the model in one line.
func (m Model) String() string {
	return fmt.Sprintf("λ %.4g/s σ %.4g κ %.4g R² %.4f; %s", m.Lambda, m.Sigma, m.Kappa, m.R2, m.PeakNote)
}

// Fit fits the USL to points by bounded least squares on X (see the
// package doc). It refuses, with an error wrapping ErrInput,
// ErrTooFewLevels or ErrPoorFit, points that are not finite (N ≥ 1,
// X > 0), fewer than MinLevels distinct N, or a fit with R² below MinR2;
// with ErrPoorFit it returns the model too, for a caller to show beside
// the refusal.
func Fit(points []Point) (Model, error) {
	levels := map[float64]bool{}
	for i, p := range points {
		if !(p.N >= 1) || math.IsInf(p.N, 0) || !(p.X > 0) || math.IsInf(p.X, 0) {
			return Model{}, fmt.Errorf("%w: point %d (N %v, X %v): want a finite N ≥ 1 and X > 0", ErrInput, i+1, p.N, p.X)
		}
		levels[p.N] = true
	}
	if len(levels) < MinLevels {
		return Model{}, fmt.Errorf("%w: %d distinct N, want at least %d", ErrTooFewLevels, len(levels), MinLevels)
	}
	n := make([]float64, len(points))
	xs := make([]float64, len(points))
	for i, p := range points {
		n[i], xs[i] = p.N, p.X
	}
	f := fitter{n: n, x: xs}
	best := params{sse: math.Inf(1)}
	for _, start := range []params{f.linearStart(), f.withLambda(0, 0), f.gridStart()} {
		if p := f.lm(start); p.sse < best.sse {
			best = p
		}
	}
	m := Model{Lambda: best.lambda, Sigma: best.sigma, Kappa: best.kappa, Levels: len(levels), Points: slices.Clone(points)}
	mean := 0.0
	for _, v := range xs {
		mean += v
	}
	mean /= float64(len(xs))
	sst := 0.0
	for i, v := range xs {
		sst += (v - mean) * (v - mean)
		m.Predicted = append(m.Predicted, m.X(n[i]))
	}
	m.R2 = 1 - best.sse/sst
	if sst == 0 {
		m.R2 = 0
		if best.sse == 0 {
			m.R2 = 1
		}
	}
	m.peak()
	if !(m.R2 >= MinR2) {
		return m, fmt.Errorf("%w: R² %.3f on X, below %v (%s)", ErrPoorFit, m.R2, MinR2, m)
	}
	return m, nil
}

// peak sets HasPeak, Peak, PeakX and PeakNote.
func (m *Model) peak() {
	switch {
	case m.Kappa == 0:
		m.PeakNote = "no peak within the model (κ = 0: X rises toward λ/σ)"
		if m.Sigma == 0 {
			m.PeakNote = "no peak within the model (σ = κ = 0: X rises linearly)"
		}
	case m.Sigma+m.Kappa >= 1:
		m.PeakNote = "no peak at N ≥ 1 (σ + κ ≥ 1: X falls from N = 1)"
	default:
		m.HasPeak = true
		m.Peak = math.Sqrt((1 - m.Sigma) / m.Kappa)
		m.PeakX = m.X(m.Peak)
		m.PeakNote = fmt.Sprintf("peak at N* = %.3g (X %.4g/s)", m.Peak, m.PeakX)
	}
}
