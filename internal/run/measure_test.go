package run

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/system"
)

// okDriver answers every request after a millisecond (idle, so the client
// is not saturated).
type okDriver struct{}

func (okDriver) Name() string                                   { return "ok" }
func (okDriver) Ops() []string                                  { return []string{"op"} }
func (okDriver) MaxPipeline() int                               { return 1 }
func (okDriver) Open(context.Context, int) (driver.Conn, error) { return okConn{}, nil }

type okConn struct{}

func (okConn) Do(_ context.Context, reqs []driver.Request, out []driver.Outcome) error {
	time.Sleep(time.Millisecond)
	for i := range reqs {
		out[i] = driver.Outcome{Class: driver.OK, Done: driver.Now()}
	}
	return nil
}
func (okConn) Close() error { return nil }

// stats fails its n-th snapshot (1-based), answers the others.
type stats struct {
	n, fail int
}

func (s *stats) Snapshot(context.Context) (map[string]float64, error) {
	s.n++
	if s.n == s.fail {
		return nil, errors.New("connection refused")
	}
	return map[string]float64{"calls": float64(s.n * 10)}, nil
}

// A sample whose target statistics cannot be read before or after its
// window is UNHEALTHY and says so; one whose both reads work records their
// difference and is healthy.
func TestStatisticsFailureIsInTheVerdict(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fail    int
		healthy bool
	}{{"before", 1, false}, {"after", 2, false}, {"neither", 0, true}} {
		t.Run(tc.name, func(t *testing.T) {
			spec := system.Spec{Key: "k", Cell: "c", Protocol: "test", Driver: okDriver{},
				Engine: load.Config{EngineConfig: result.EngineConfig{Connections: 1, Pipeline: 1}},
				Phases: result.Phases{Load: 50 * time.Millisecond}, Stats: &stats{fail: tc.fail},
				Thresholds: result.Thresholds{P99: time.Hour}}
			s := Measure(context.Background(), spec)
			if s.Error != "" {
				t.Fatalf("sample failed: %s", s.Error)
			}
			reasons := strings.Join(s.Verdict.Reasons, "; ")
			if s.Verdict.Healthy != tc.healthy || strings.Contains(reasons, "target statistics: connection refused") == tc.healthy {
				t.Errorf("statistics read %d failing: verdict healthy=%v (%q), want healthy=%v naming the statistics", tc.fail, s.Verdict.Healthy, reasons, tc.healthy)
			}
			if tc.healthy && s.Stats["calls"] != 10 {
				t.Errorf("stats %v, want calls 10 (20 after − 10 before)", s.Stats)
			}
		})
	}
}
