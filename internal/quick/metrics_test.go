package quick

import (
	"strings"
	"testing"
	"time"
)

// TestMetricsFlags: the metrics flags become the target's metrics key,
// and each bad combination or value is refused under the flag's name.
func TestMetricsFlags(t *testing.T) {
	d, err := Metrics{MetricsURL: "http://127.0.0.1:3000/metrics", MetricsSeries: []string{"a", " b "}}.Doc()
	if err != nil || d["every"] != "1s" || strings.Join(d["series"].([]string), ",") != "a,b" {
		t.Fatalf("doc %v, %v", d, err)
	}
	if d, err := (Metrics{}).Doc(); d != nil || err != nil {
		t.Errorf("no flags: %v %v", d, err)
	}
	many := make([]string, 33)
	for i := range many {
		many[i] = "m"
	}
	for _, tc := range []struct {
		m    Metrics
		want string
	}{
		{Metrics{MetricsSeries: []string{"a"}}, "--metrics-series and --metrics-every need --metrics-url"},
		{Metrics{MetricsURL: "127.0.0.1:3000/metrics", MetricsSeries: []string{"a"}}, "--metrics-url \"127.0.0.1:3000/metrics\": accepted: http://host:port/path"},
		{Metrics{MetricsURL: "http://u:p@127.0.0.1/m", MetricsSeries: []string{"a"}}, "credentials in the URL are not accepted"},
		{Metrics{MetricsURL: "http://127.0.0.1/m"}, "--metrics-url needs --metrics-series"},
		{Metrics{MetricsURL: "http://127.0.0.1/m", MetricsSeries: []string{"a"}, MetricsEvery: 10 * time.Millisecond}, "--metrics-every must be between 100ms and 1m0s, got 10ms"},
		{Metrics{MetricsURL: "http://127.0.0.1/m", MetricsSeries: many}, "--metrics-series: at most 32 series, got 33"},
	} {
		if _, err := tc.m.Doc(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.m, err, tc.want)
		}
	}
}
