package usl

import "math"

// params is a point of the search with its sum of squares.
type params struct {
	lambda, sigma, kappa, sse float64
}

// fitter holds the data being fitted.
type fitter struct {
	n, x []float64
}

// sse is the sum of squared residuals of X at (lambda, sigma, kappa).
func (f fitter) sse(lambda, sigma, kappa float64) float64 {
	s := 0.0
	for i, n := range f.n {
		r := f.x[i] - x(lambda, sigma, kappa, n)
		s += r * r
	}
	return s
}

// withLambda is (σ, κ) with the λ that minimises the sum of squares
// there: X = λ·g(N) with g = N/(1+σ(N−1)+κN(N−1)) is linear in λ, so
// λ = Σ X g / Σ g².
func (f fitter) withLambda(sigma, kappa float64) params {
	var xg, gg float64
	for i, n := range f.n {
		g := n / (1 + sigma*(n-1) + kappa*n*(n-1))
		xg += f.x[i] * g
		gg += g * g
	}
	l := xg / gg
	return params{lambda: l, sigma: sigma, kappa: kappa, sse: f.sse(l, sigma, kappa)}
}

// linearStart fits N/X = c₀ + c₁N + c₂N² by ordinary least squares and
// reads λ, σ, κ from the coefficients (clamped to σ, κ ≥ 0, λ then in
// closed form).
func (f fitter) linearStart() params {
	var a [3][4]float64
	for i, n := range f.n {
		row := [3]float64{1, n, n * n}
		y := n / f.x[i]
		for r := range 3 {
			for c := range 3 {
				a[r][c] += row[r] * row[c]
			}
			a[r][3] += row[r] * y
		}
	}
	c, ok := solve3(a)
	if !ok {
		return f.withLambda(0, 0)
	}
	l := 1 / (c[0] + c[1] + c[2])
	sigma, kappa := (c[1]+c[2])*l, c[2]*l
	if !(l > 0) || math.IsInf(l, 0) {
		return f.withLambda(0, 0)
	}
	return f.withLambda(math.Max(0, sigma), math.Max(0, kappa))
}

// gridStart is the best point of a logarithmic grid of σ (0 and 1e-4 to
// 1) and κ (0 and 1e-8 to 1), λ in closed form at each.
func (f fitter) gridStart() params {
	best := f.withLambda(0, 0)
	for si := -1; si <= 16; si++ {
		sigma := 0.0
		if si >= 0 {
			sigma = math.Pow(10, -4+float64(si)/4)
		}
		for ki := -1; ki <= 32; ki++ {
			kappa := 0.0
			if ki >= 0 {
				kappa = math.Pow(10, -8+float64(ki)/4)
			}
			if p := f.withLambda(sigma, kappa); p.sse < best.sse {
				best = p
			}
		}
	}
	return best
}

// lm runs a bounded Levenberg–Marquardt from p on (λ, σ, κ), σ and κ
// held at 0 while the gradient points below it, and returns the best
// point reached.
func (f fitter) lm(p params) params {
	mu := 1e-3
	for iter := 0; iter < 500 && mu < 1e20; iter++ {
		// Jacobian of the model, J ᵀJ and J ᵀr.
		var jtj [3][3]float64
		var jtr [3]float64
		for i, n := range f.n {
			d := 1 + p.sigma*(n-1) + p.kappa*n*(n-1)
			j := [3]float64{n / d, -p.lambda * n * (n - 1) / (d * d), -p.lambda * n * n * (n - 1) / (d * d)}
			r := f.x[i] - p.lambda*n/d
			for a := range 3 {
				for b := range 3 {
					jtj[a][b] += j[a] * j[b]
				}
				jtr[a] += j[a] * r
			}
		}
		// Free parameters: λ always; σ and κ unless at 0 with a
		// gradient pointing below 0 (J ᵀr < 0 lowers them).
		free := []int{0}
		if p.sigma > 0 || jtr[1] > 0 {
			free = append(free, 1)
		}
		if p.kappa > 0 || jtr[2] > 0 {
			free = append(free, 2)
		}
		var a [3][4]float64
		for r, fr := range free {
			for c, fc := range free {
				a[r][c] = jtj[fr][fc]
			}
			a[r][r] += mu * math.Max(jtj[fr][fr], 1e-300)
			a[r][3] = jtr[fr]
		}
		delta, ok := solveN(a, len(free))
		if !ok {
			mu *= 10
			continue
		}
		step := [3]float64{}
		for r, fr := range free {
			step[fr] = delta[r]
		}
		q := params{lambda: p.lambda + step[0], sigma: math.Max(0, p.sigma+step[1]), kappa: math.Max(0, p.kappa+step[2])}
		if !(q.lambda > 0) {
			mu *= 10
			continue
		}
		q.sse = f.sse(q.lambda, q.sigma, q.kappa)
		if q.sse < p.sse {
			done := p.sse-q.sse <= 1e-14*p.sse
			p = q
			mu = math.Max(mu/3, 1e-12)
			if done {
				break
			}
		} else {
			mu *= 4
		}
	}
	return p
}

// solve3 solves the 3×3 system of the augmented matrix a.
func solve3(a [3][4]float64) ([3]float64, bool) { return solveN(a, 3) }

// solveN solves the n×n (n ≤ 3) system of the augmented matrix a by
// Gaussian elimination with partial pivoting.
func solveN(a [3][4]float64, n int) ([3]float64, bool) {
	var out [3]float64
	for c := range n {
		piv := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r][c]) > math.Abs(a[piv][c]) {
				piv = r
			}
		}
		if a[piv][c] == 0 || math.IsNaN(a[piv][c]) {
			return out, false
		}
		a[c], a[piv] = a[piv], a[c]
		for r := c + 1; r < n; r++ {
			k := a[r][c] / a[c][c]
			for k2 := c; k2 < n; k2++ {
				a[r][k2] -= k * a[c][k2]
			}
			a[r][3] -= k * a[c][3]
		}
	}
	for r := n - 1; r >= 0; r-- {
		s := a[r][3]
		for c := r + 1; c < n; c++ {
			s -= a[r][c] * out[c]
		}
		out[r] = s / a[r][r]
	}
	for _, v := range out[:n] {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return out, false
		}
	}
	return out, true
}
