package capacity

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	ok := Defaults(100, 100000)
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := (Config{From: 1, Max: 2}).Validate(); err != nil {
		t.Fatalf("zero settings with defaults: %v", err)
	}
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.From = 0 }, "From 0 is out of bounds: accepted 0.001 to 10000000 requests/s"},
		{func(c *Config) { c.From = math.NaN() }, "From NaN is out of bounds"},
		{func(c *Config) { c.Max = 2e7 }, "Max 2e+07 is out of bounds: accepted 0.001 to 10000000"},
		{func(c *Config) { c.Max = math.Inf(1) }, "Max +Inf is out of bounds"},
		{func(c *Config) { c.Max = 50 }, "Max 50 is below From 100: accepted Max ≥ From"},
		{func(c *Config) { c.Resolution = 0.6 }, "Resolution 0.6 is out of bounds: accepted 0.001 to 0.5"},
		{func(c *Config) { c.Resolution = -1 }, "Resolution -1 is out of bounds"},
		{func(c *Config) { c.Factor = 1.05 }, "Factor 1.05 is out of bounds: accepted 1.1 to 10"},
		{func(c *Config) { c.Confirm = 101 }, "Confirm 101 is out of bounds: accepted 0 (no confirmation) to 100"},
		{func(c *Config) { c.Confirm = -1 }, "Confirm -1 is out of bounds"},
		{func(c *Config) { c.Searches = 101 }, "Searches 101 is out of bounds: accepted 1 to 100"},
		{func(c *Config) { c.MaxTime = -time.Second }, "MaxTime -1s is negative"},
		{func(c *Config) { c.StepTime = -time.Second }, "StepTime -1s is negative"},
	} {
		c := ok
		tc.edit(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want %q, got %v", tc.want, err)
		}
	}
	two := Config{From: -1, Max: 1, Factor: 20}
	if err := two.Validate(); err == nil || !strings.Contains(err.Error(), "From") || !strings.Contains(err.Error(), "Factor") {
		t.Errorf("every bad field named: %v", err)
	}
}

func TestWorstCase(t *testing.T) {
	cfg := Defaults(100, 100000)
	cfg.StepTime = 30 * time.Second
	// 11 rungs (100 … 51200, 100000), 4 bisections (ratio 2 at 5 %),
	// 12 confirmation levels (100000 down to 100: 4 single steps, then
	// 2, 4 … 64 steps, then From) and one above, 3 samples each.
	steps, d := WorstCase(cfg)
	if steps != 11+4+13*3 || d != time.Duration(steps)*30*time.Second {
		t.Fatalf("WorstCase: %d steps, %v", steps, d)
	}
	cfg.Searches, cfg.Confirm = 3, 0
	if steps, _ := WorstCase(cfg); steps != 3*(11+4) {
		t.Fatalf("WorstCase without confirmation, 3 searches: %d", steps)
	}
	if steps, d := WorstCase(Config{From: 0}); steps != 0 || d != 0 {
		t.Fatalf("WorstCase of an invalid config: %d %v", steps, d)
	}
	if got := cfg.bisectSteps(100, 200); got != 4 {
		t.Fatalf("bisectSteps(100, 200) at 5 %%: %d", got)
	}
}

func TestFormat(t *testing.T) {
	for r, want := range map[float64]string{1414.21356: "1414.2", 100000: "100000", 0.5: "0.5", 1e7: "10000000", 123456789: "123460000", 0: "0"} {
		if got := FormatRate(r); got != want {
			t.Errorf("FormatRate(%v) = %q, want %q", r, got, want)
		}
	}
	if s := (Step{Search: 1, Phase: PhaseBisect, Index: 7, Rate: 1414.21356}).String(); s != "search 1 step 7 (bisect) at 1414.2/s" {
		t.Errorf("Step.String: %q", s)
	}
}
