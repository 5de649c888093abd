package result

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func testSample(key string) *Sample {
	h := NewHistogram()
	for i := int64(1); i <= 100; i++ {
		_ = h.RecordValue(i * 10)
	}
	lat, _ := Summarise(h)
	t0 := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return &Sample{Key: key, Protocol: "http", Config: &Config{Protocol: "http"}, Started: t0, Finished: t0.Add(2 * time.Second),
		Load: &Load{Mode: "closed", Start: t0, End: t0.Add(time.Second), Seconds: 1, Sent: 102, Requests: 100, Errors: 2, RequestsPerSec: 100,
			Messages: map[string]int64{"error: connection refused": 2}, Latency: lat,
			Timeline: []Second{{T: 0, Requests: 100, P50US: 500, P99US: 990}}},
		Verdict: Verdict{Healthy: true}}
}

func testHeader(keys ...string) Header {
	h := Header{Suite: SuiteInfo{Name: "t", Resolved: json.RawMessage(`{"a":1}`)}}
	for i, k := range keys {
		h.Plan = append(h.Plan, PlanEntry{Index: i, Key: k, Cell: strings.Split(k, "#")[0], Repeat: 1})
	}
	return h
}

func TestWriteVerifyResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	w, err := Create(path, testHeader("a#1", "b#1", "c#1"), false)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Append(testSample("a#1")); err != nil {
		t.Fatal(err)
	}
	if err := w.Append(testSample("b#1")); err != nil {
		t.Fatal(err)
	}
	// the run dies here: no footer, and a torn half line
	w.Abandon()
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"type":"sample","key":"c#1","prot`)
	f.Close()

	r, err := Verify(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.OK() || !r.Incomplete || r.Complete {
		t.Fatalf("partial file: %+v", r)
	}
	if _, err := Create(path, testHeader("x#1"), false); err == nil || !strings.Contains(err.Error(), "refusing to overwrite") {
		t.Errorf("Create over an existing file: %v", err)
	}
	w, hdr, err := Resume(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(hdr.Plan) != 3 || !w.Done("a#1") || !w.Done("b#1") || w.Done("c#1") {
		t.Fatalf("resume state wrong: plan %d", len(hdr.Plan))
	}
	if err := w.Append(testSample("c#1")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(false); err != nil {
		t.Fatal(err)
	}
	r, err = Verify(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !r.OK() {
		t.Fatalf("resumed file: %v", r.Problems)
	}
	if _, _, err := Resume(path); !errors.Is(err, ErrComplete) {
		t.Errorf("Resume of a complete file: %v", err)
	}
	// replanning that disagrees with the recorded plan is a problem
	r, _ = Verify(path, func(json.RawMessage, bool) ([]PlanEntry, error) { return nil, nil })
	if r.OK() || !strings.Contains(strings.Join(r.Problems, "\n"), "differs from the plan") {
		t.Errorf("replan mismatch not reported: %v", r.Problems)
	}
}

func TestFlippedByteFailsVerify(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.json")
	w, _ := Create(path, testHeader("a#1"), false)
	w.Append(testSample("a#1"))
	w.Close(false)
	data, _ := os.ReadFile(path)
	i := bytes.Index(data, []byte(`"requests":100`))
	data[i+len(`"requests":10`)] = '1' // 100 → 101
	os.WriteFile(path, data, 0o644)
	r, err := Verify(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(r.Problems, "\n")
	if r.OK() || !strings.Contains(all, "checksum mismatch") || !strings.Contains(all, "counts do not add up") {
		t.Errorf("flipped byte: %v", r.Problems)
	}
}

func TestCheckSampleFindsInconsistencies(t *testing.T) {
	s := testSample("a#1")
	s.Load.Latency.Percentiles[3].US = 1
	s.Load.Timeline[0].Requests = 99
	s.Load.Seconds = -1
	p := strings.Join(checkSample(s), "\n")
	for _, want := range []string{"not monotonic", "timeline holds 99", "negative load window"} {
		if !strings.Contains(p, want) {
			t.Errorf("missing %q in %s", want, p)
		}
	}
}
