package calibrate_test

import (
	"context"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/calibrate"
	_ "github.com/benchrig/benchrig/internal/protocol/all"
)

// TestMeasureEveryProtocol drives each driver against its null peer: every
// request succeeds, latencies are ordered, and the client's CPU per request
// (its own process's, the peer being another) is positive.
func TestMeasureEveryProtocol(t *testing.T) {
	f := calibrate.Measure(context.Background(), []string{"resp", "http", "pg"}, nil, 300*time.Millisecond)
	if len(f.Protocols) != 3 || f.Protocols[0].Protocol != "http" || f.Protocols[1].Protocol != "pg" || f.Protocols[2].Protocol != "resp" {
		t.Fatalf("protocols %+v: want http, pg, resp in that order", f.Protocols)
	}
	for _, e := range f.Protocols {
		if e.Error != "" {
			t.Errorf("%s: %s", e.Protocol, e.Error)
			continue
		}
		if e.Requests < 10 || e.P50US <= 0 || e.P99US < e.P50US || e.ClientCPUUS <= 0 {
			t.Errorf("%s: %+v", e.Protocol, e)
		}
	}
}

// TestMeasureUnknown: a protocol without a null peer is said so, the
// others are still measured.
func TestMeasureUnknown(t *testing.T) {
	f := calibrate.Measure(context.Background(), []string{"h2", "resp"}, nil, 100*time.Millisecond)
	if e := f.Entry("h2"); e == nil || e.Error == "" {
		t.Errorf("h2: %+v", e)
	}
	if e := f.Entry("resp"); e == nil || e.Error != "" || e.Requests == 0 {
		t.Errorf("resp: %+v", e)
	}
}

// TestMeasureLevels: each protocol is measured at each connection count,
// sorted, duplicates and counts past the bound folded, each level named
// in its entry and found by At.
func TestMeasureLevels(t *testing.T) {
	f := calibrate.Measure(context.Background(), []string{"http"}, []int{8, 1, 8, 100000}, 300*time.Millisecond)
	if len(f.Protocols) != 3 {
		t.Fatalf("entries %+v: want http at 1, 8 and %d", f.Protocols, calibrate.MaxConnections)
	}
	for i, want := range []int{1, 8, calibrate.MaxConnections} {
		e := f.Protocols[i]
		if e.Protocol != "http" || e.Conns() != want || e.Error != "" || e.ClientCPUUS <= 0 {
			t.Errorf("entry %d: %+v, want http at %d connections", i, e, want)
		}
	}
	if one, eight := f.At("http", 1), f.At("http", 8); one == nil || eight == nil || eight.Requests == 0 || f.At("http", 2) != nil {
		t.Errorf("At: 1 → %+v; 8 → %+v; 2 (not measured) → %+v", one, eight, f.At("http", 2))
	}
	if f.Entry("http") != f.At("http", 1) {
		t.Errorf("Entry is not the one-connection level")
	}
}
