package capacity

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// seededNoisy is a noisy fake whose verdict is a function of the step
// (search, index, rate) alone, so an interrupted run and its resumption
// see the same verdicts.
type seededNoisy struct {
	C     float64
	calls int
}

// Probe flips a knee's verdict near C by a hash of the step.
func (n *seededNoisy) Probe(_ context.Context, s Step) (Outcome, error) {
	n.calls++
	r := rand.New(rand.NewPCG(uint64(s.Search)<<32|uint64(s.Index), uint64(s.Rate*1000)))
	ok := s.Rate <= n.C
	if s.Rate > n.C/1.2 && s.Rate < n.C*1.2 && r.IntN(3) == 0 {
		ok = !ok
	}
	if ok {
		return Outcome{Healthy: true, P99: 0.01}, nil
	}
	return Outcome{Reasons: []string{"p99 over the bound"}, P99: 0.5}, nil
}

// interrupted fails every probe from the n-th on.
type interrupted struct {
	Prober
	n, calls int
}

var errInterrupted = errors.New("interrupted")

// Probe passes the first n-1 probes to the inner prober.
func (p *interrupted) Probe(ctx context.Context, s Step) (Outcome, error) {
	p.calls++
	if p.calls >= p.n {
		return Outcome{}, errInterrupted
	}
	return p.Prober.Probe(ctx, s)
}

// allSteps are a result's steps in the order they were taken.
func allSteps(res Result) []StepResult {
	var out []StepResult
	for _, sr := range res.Searches {
		out = append(out, sr.Steps...)
	}
	return out
}

// TestResume: a search interrupted after any number of steps, resumed
// with the steps it finished (through a JSON round trip, as from a results
// file), gives the result of the uninterrupted search and probes only the
// steps it had not taken.
func TestResume(t *testing.T) {
	cfg := Defaults(100, 100000)
	cfg.Searches = 3
	full, err := Search(context.Background(), cfg, &seededNoisy{C: 2500}, nil)
	if err != nil {
		t.Fatal(err)
	}
	steps := allSteps(full)
	for cut := 1; cut <= len(steps)+1; cut++ {
		part, err := Search(context.Background(), cfg, &interrupted{Prober: &seededNoisy{C: 2500}, n: cut}, nil)
		if cut <= len(steps) && !errors.Is(err, errInterrupted) {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		b, err := json.Marshal(allSteps(part))
		if err != nil {
			t.Fatal(err)
		}
		var done []StepResult
		if err := json.Unmarshal(b, &done); err != nil {
			t.Fatal(err)
		}
		p := &seededNoisy{C: 2500}
		resumed, err := Search(context.Background(), cfg, p, done)
		if err != nil {
			t.Fatalf("resumed after %d steps: %v", len(done), err)
		}
		if p.calls != len(steps)-len(done) {
			t.Fatalf("resumed after %d of %d steps: probed %d", len(done), len(steps), p.calls)
		}
		if !reflect.DeepEqual(resumed, full) {
			t.Fatalf("resumed after %d steps:\n%s\nuninterrupted:\n%s", len(done), resumed, full)
		}
	}
}

func TestResumeMismatch(t *testing.T) {
	cfg := Defaults(100, 100000)
	full, err := Search(context.Background(), cfg, &knee{C: 2500}, nil)
	if err != nil {
		t.Fatal(err)
	}
	steps := allSteps(full)

	bad := append([]StepResult(nil), steps[:6]...)
	bad[4].Step.Rate *= 1.5
	if _, err := Search(context.Background(), cfg, &knee{C: 2500}, bad); err == nil || !strings.Contains(err.Error(), "finished step 5 (search 1 step 5 (ladder) at 2400/s)") {
		t.Fatalf("changed rate: %v", err)
	}
	bad = append([]StepResult(nil), steps[:6]...)
	bad[2].Outcome.Healthy = false // a different verdict: the search takes another path
	if _, err := Search(context.Background(), cfg, &knee{C: 2500}, bad); err == nil || !strings.Contains(err.Error(), "finished step 4") {
		t.Fatalf("changed verdict: %v", err)
	}
	extra := append(append([]StepResult(nil), steps...), steps[len(steps)-1])
	if _, err := Search(context.Background(), cfg, &knee{C: 2500}, extra); err == nil || !strings.Contains(err.Error(), "past the end") {
		t.Fatalf("a step too many: %v", err)
	}
	other := cfg
	other.Factor = 3
	if _, err := Search(context.Background(), other, &knee{C: 2500}, steps); err == nil || !strings.Contains(err.Error(), "finished step 2") {
		t.Fatalf("another config: %v", err)
	}
}

// TestResumeMaxTime: replayed steps count StepTime each against MaxTime.
func TestResumeMaxTime(t *testing.T) {
	cfg := Defaults(100, 100000)
	full, err := Search(context.Background(), cfg, &knee{C: 2500}, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.StepTime, cfg.MaxTime = time.Minute, 10*time.Minute
	cp := &clockProber{Prober: &knee{C: 2500}, now: time.Unix(0, 0), step: time.Minute}
	res, err := search(context.Background(), cfg, cp, allSteps(full)[:7], cp.clock)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cut || len(res.Searches[0].Steps) != 10 {
		t.Fatalf("resumed with 7 steps of 10 minutes: %s, %d steps", res, len(res.Searches[0].Steps))
	}
}
