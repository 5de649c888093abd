package result

import (
	"context"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/capacity"
)

// TestVerifySearchSteps: a search file's steps are not in the plan but
// must be the steps of its searched cells under their keys, and replayed
// from their verdicts they must be the search's own steps in order: a
// step whose rate or verdict was changed is a problem.
func TestVerifySearchSteps(t *testing.T) {
	cfg := capacity.Defaults(100, 800)
	cfg.Confirm = 1
	var samples []Sample
	_, err := capacity.Search(t.Context(), cfg, capacity.ProberFunc(func(_ context.Context, st capacity.Step) (capacity.Outcome, error) {
		s := Sample{Key: SearchKey("c", st), Cell: "c", Search: &st, Verdict: Verdict{Healthy: st.Rate <= 300}}
		if !s.Verdict.Healthy {
			s.Verdict.Reasons = []string{"too fast"}
		}
		samples = append(samples, s)
		return OutcomeOf(&s), nil
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
	sp := &SearchPlan{Config: cfg, Cells: []string{"c"}}
	if p := replaySearches(sp, samples); len(p) != 0 {
		t.Fatalf("a faithful file: %v", p)
	}
	bad := append([]Sample(nil), samples...)
	bad[2].Verdict = Verdict{Healthy: !bad[2].Verdict.Healthy}
	if p := replaySearches(sp, bad); len(p) != 1 || !strings.Contains(p[0], "cell c: the recorded search steps are not the search's") {
		t.Errorf("a flipped verdict: %v", p)
	}
	if p := replaySearches(sp, samples[:3]); len(p) != 0 {
		t.Errorf("an interrupted search is incomplete, not wrong: %v", p)
	}
}
