package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/benchrig/benchrig/internal/result"
)

// NoiseSpread is the spread of a cell's repeats, (max − min) ÷ median of
// requests/s, above which a report warns that the cell is noisy.
const NoiseSpread = 0.10

// AASpread is the difference between two variants that run the same
// target command and workload, larger ÷ smaller − 1 of their median
// requests/s, above which a report warns that an A/A pair disagrees.
const AASpread = 0.20

// noiseNotes warns of the cells whose repeats spread more than
// NoiseSpread, with advice.
func noiseNotes(g *grid) []string {
	var noisy []string
	worst := 0.0
	for _, c := range g.cases {
		for _, v := range g.variants {
			vals := mReqPerSec.values(g.at(c, v))
			if len(vals) < 2 {
				continue
			}
			med := median(vals)
			if med <= 0 {
				continue
			}
			if sp := (vals[len(vals)-1] - vals[0]) / med; sp > NoiseSpread {
				noisy = append(noisy, fmt.Sprintf("%s · %s (%.0f %%)", c, v, sp*100))
				worst = math.Max(worst, sp)
			}
		}
	}
	if len(noisy) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("Noisy: the repeats of %d cell(s) spread more than %.0f %% in requests/s (min–max over median, worst %.0f %%): %s. "+
		"Differences smaller than that spread mean little. Run more repeats (REPEATS=5 or more, so compare can test them), "+
		"pin client and server to separate CPUs (placement: client_cpus / target_cpus), and keep other work off the machine.",
		len(noisy), NoiseSpread*100, worst*100, listSome(noisy))}
}

// loopbackPort matches an address on 127.0.0.1, whose port changes from
// sample to sample.
var loopbackPort = regexp.MustCompile(`127\.0\.0\.1:\d+`)

// workSignature is what a sample ran, without the names given to it: the
// target's kind, command and binary, and the driver and engine
// configuration, ports and the seed left out. Two variants with the same
// signature are an A/A pair.
func workSignature(s *result.Sample) string {
	if s.Target == nil || len(s.Target.Argv) == 0 && s.Target.SHA256 == "" {
		return ""
	}
	var cfg map[string]json.RawMessage
	raw, _ := json.Marshal(s.Config)
	_ = json.Unmarshal(raw, &cfg)
	var cell map[string]any
	_ = json.Unmarshal(cfg["cell"], &cell)
	delete(cell, "id")
	delete(cell, "target")
	delete(cfg, "cell")
	var engine map[string]any
	_ = json.Unmarshal(cfg["engine"], &engine)
	delete(engine, "seed")
	delete(cfg, "engine")
	b, _ := json.Marshal([]any{s.Target.Kind, s.Target.Argv, s.Target.SHA256, cell, engine, cfg})
	return loopbackPort.ReplaceAllString(string(b), "127.0.0.1:PORT")
}

// aaNotes warns when two variants of one case ran the same target command
// and workload (an A/A pair) and yet their median requests/s differ by
// more than AASpread: the machine, not the targets, made the difference.
func aaNotes(g *grid) []string {
	var notes []string
	for _, c := range g.cases {
		sigs := map[string]string{} // signature → first variant
		for _, v := range g.variants {
			ss := g.at(c, v)
			if len(ss) == 0 {
				continue
			}
			sig := workSignature(ss[0])
			if sig == "" {
				continue
			}
			first, ok := sigs[sig]
			if !ok {
				sigs[sig] = v
				continue
			}
			a, b := mReqPerSec.values(g.at(c, first)), mReqPerSec.values(ss)
			if len(a) == 0 || len(b) == 0 {
				continue
			}
			ma, mb := median(a), median(b)
			lo, hi := math.Min(ma, mb), math.Max(ma, mb)
			if lo <= 0 || hi/lo-1 <= AASpread {
				continue
			}
			advice := "Run more repeats and pin the processes before reading differences between variants."
			if len(a) == 1 || len(b) == 1 {
				advice = "With 1 repeat nothing tells this noise from a real difference: run 5 repeats or more, and pin client and server to separate CPUs."
			}
			notes = append(notes, fmt.Sprintf("A/A check failed: %s: %q and %q run the same command and workload, yet gave %s and %s req/s (%.0f %% apart, more than %.0f %%). %s",
				c, first, v, figure(ma), figure(mb), (hi/lo-1)*100, AASpread*100, advice))
		}
	}
	return notes
}

// planModeSetting is the target setting that holds the plan_cache_mode a
// pg sample's connections ran with (server/postgres.PlansModeSetting).
const planModeSetting = "plans.plan_cache_mode"

// customOnly returns the statement roles of a pg sample's Stats
// ("plans.<role>.generic", "plans.<role>.custom") that ran and got no
// generic plan in the window, with their custom plan counts.
func customOnly(s *result.Sample) map[string]float64 {
	out := map[string]float64{}
	for k, v := range s.Stats {
		role, ok := strings.CutSuffix(k, ".custom")
		if !ok || !strings.HasPrefix(role, "plans.") || v <= 0 {
			continue
		}
		if g, ok := s.Stats[role+".generic"]; ok && g == 0 {
			out[strings.TrimPrefix(role, "plans.")] = v
		}
	}
	return out
}

// planNotes warns of the pg cells whose statement was custom-planned on
// every call in every repeat (no generic plan in the load window): the
// server ran its planner for each request, which the figures include.
func planNotes(g *grid) []string {
	var notes []string
	for _, c := range g.cases {
		for _, v := range g.variants {
			ss := g.at(c, v)
			if len(ss) == 0 {
				continue
			}
			// The roles custom-only in every repeat, their counts summed.
			counts := customOnly(ss[0])
			modes := map[string]bool{}
			for i, s := range ss {
				if i > 0 {
					co := customOnly(s)
					for role := range counts {
						if n, ok := co[role]; ok {
							counts[role] += n
						} else {
							delete(counts, role)
						}
					}
				}
				if s.Target != nil && s.Target.Settings[planModeSetting] != "" {
					modes[s.Target.Settings[planModeSetting]] = true
				}
			}
			if len(counts) == 0 {
				continue
			}
			mode := strings.Join(slices.Sorted(maps.Keys(modes)), ",")
			if mode == "" {
				mode = "unknown"
			}
			for _, role := range slices.Sorted(maps.Keys(counts)) {
				notes = append(notes, fmt.Sprintf("Custom-planned on every call: %s · %s: statement %q got no generic plan in the load window (%s custom plans over %d sample(s), plan_cache_mode %s), so the server planned each request and the figures include the planner. "+
					"If the benchmark means a cached plan, write the statement as pgbench does (form: array, \"= ANY(ARRAY[$1,…,$k])\", generic after 5 executions) or set the path's plan_cache_mode: force_generic_plan.",
					c, v, role, figure(counts[role]), len(ss), mode))
			}
		}
	}
	return notes
}
