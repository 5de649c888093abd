package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/result"
)

// synth makes a sample with the given throughput and p99 (ms).
func synth(rps, p99ms float64) *result.Sample {
	return &result.Sample{
		Load: &result.Load{RequestsPerSec: rps, Requests: int64(rps), Seconds: 1,
			Latency: result.Latency{Count: int64(rps), MaxUS: int64(p99ms * 2000),
				Percentiles: []result.Percentile{{Q: 50, US: int64(p99ms * 500)}, {Q: 99, US: int64(p99ms * 1000)}}}},
		Verdict: result.Verdict{Healthy: true},
	}
}

// source makes a Source whose cell (c, v) holds one sample per value.
func source(name string, cells map[[2]string][][2]float64) *Source {
	src := &Source{Path: name + ".json", Kind: "suite", Title: name}
	for _, k := range sortedPairs(cells) {
		for _, x := range cells[k] {
			src.Rows = append(src.Rows, Row{Case: k[0], Variant: k[1], Sample: synth(x[0], x[1])})
		}
	}
	return src
}

func sortedPairs(m map[[2]string][][2]float64) [][2]string {
	var keys [][2]string
	for k := range m {
		keys = append(keys, k)
	}
	for i := range keys {
		for j := i + 1; j < len(keys); j++ {
			if keys[j][0]+keys[j][1] < keys[i][0]+keys[i][1] {
				keys[i], keys[j] = keys[j], keys[i]
			}
		}
	}
	return keys
}

// row finds the row of table caption whose first cell is label.
func row(t *testing.T, d *Doc, caption, label string) []string {
	t.Helper()
	for _, s := range d.Sections {
		for _, tb := range s.Tables {
			if !strings.HasPrefix(tb.Caption, caption) {
				continue
			}
			for _, r := range tb.Rows {
				if r[0] == label {
					return r
				}
			}
		}
	}
	t.Fatalf("no row %q in table %q", label, caption)
	return nil
}

func TestCompareSignificance(t *testing.T) {
	five := func(base, p99 float64) [][2]float64 {
		return [][2]float64{{base, p99}, {base + 1, p99}, {base + 2, p99}, {base + 3, p99}, {base + 4, p99}}
	}
	a := source("A", map[[2]string][][2]float64{
		{"4 conns", "go"}: five(100, 2),
		{"8 conns", "go"}: five(100, 2),
		{"1 conns", "go"}: five(100, 2),
	})
	b := source("B", map[[2]string][][2]float64{
		{"4 conns", "go"}: five(200, 1),   // twice the throughput, half the p99
		{"8 conns", "go"}: five(101, 2),   // overlapping: no difference
		{"2 conns", "go"}: five(100, 2),   // only in B
		{"1 conns", "go"}: five(100.5, 2), // overlapping
	})
	d, err := CompareDoc(a, b, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := row(t, d, "Requests/s", "4 conns · go")
	if r[3] != "+98.04 % better" || r[4] != "p=0.008 n=5" {
		t.Errorf("4 conns requests/s: %q; want +98.04 %% better (medians 102 → 202) at p=0.008 n=5", r)
	}
	if r := row(t, d, "p99", "4 conns · go"); r[3] != "-50.00 % better" {
		t.Errorf("4 conns p99: %q; want -50.00 %% better (lower latency is better)", r)
	}
	if r := row(t, d, "Requests/s", "8 conns · go"); r[3] != "~" {
		t.Errorf("8 conns: %q; want ~ (the repeats overlap)", r)
	}
	if r := row(t, d, "Requests/s", "geomean of B/A"); r[3] == "" || r[4] != "3 cells" {
		t.Errorf("geomean row %q", r)
	}
	notes := strings.Join(d.Notes, "\n")
	if !strings.Contains(notes, "Only in B (not compared): 2 conns · go") || strings.Contains(notes, "Only in A") {
		t.Errorf("notes %q: want the cell only in B named, nothing only in A", notes)
	}
	if strings.Contains(notes, "repeat(s) on a side") {
		t.Errorf("notes %q: 5 repeats per side are enough at 0.05", notes)
	}
	var text bytes.Buffer
	if err := Text(&text, d); err != nil || !strings.Contains(text.String(), "+98.04 % better") {
		t.Errorf("text rendering (%v):\n%s", err, text.String())
	}
}

func TestCompareFewRepeatsNeverSignificant(t *testing.T) {
	a := source("A", map[[2]string][][2]float64{{"4 conns", "go"}: {{100, 1}, {101, 1}, {102, 1}}})
	b := source("B", map[[2]string][][2]float64{{"4 conns", "go"}: {{900, 1}, {901, 1}, {902, 1}}})
	d, err := CompareDoc(a, b, CompareOptions{Alpha: 0.05})
	if err != nil {
		t.Fatal(err)
	}
	if r := row(t, d, "Requests/s", "4 conns · go"); r[3] != "+792.08 % (untested)" || r[4] != "p=0.100 n=3" {
		t.Errorf("3 against 3 repeats: %q; want the change marked untested at p=0.100 (the smallest p of 3 vs 3)", r)
	}
	if notes := strings.Join(d.Notes, "\n"); !strings.Contains(notes, "fewer than 4 per side") {
		t.Errorf("notes %q: want the repeats a difference needs", notes)
	}
	if got := uTestMinRepeats(0.05); got != 4 {
		t.Errorf("uTestMinRepeats(0.05) = %d, want 4", got)
	}
	if got := uTestMinRepeats(0.01); got != 5 {
		t.Errorf("uTestMinRepeats(0.01) = %d, want 5", got)
	}
}

func TestCompareMatching(t *testing.T) {
	// One variant each, named differently: matched by case.
	a := source("A", map[[2]string][][2]float64{{"4 conns", "node18 app"}: {{100, 1}}, {"8 conns", "node18 app"}: {{100, 1}}})
	b := source("B", map[[2]string][][2]float64{{"4 conns", "node20 app"}: {{110, 1}}})
	d, err := CompareDoc(a, b, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := row(t, d, "Requests/s", "4 conns"); r[1] != "100" || r[2] != "110" || r[3] != "+10.00 % (untested)" {
		t.Errorf("matched by case: %q", r)
	}
	if notes := strings.Join(d.Notes, "\n"); !strings.Contains(notes, "Only in A (not compared): 8 conns · node18 app") {
		t.Errorf("notes %q", notes)
	}

	// A keyed protocol's one key per request against an unkeyed protocol's
	// request (a gRPC call against JSON over HTTP): the same case.
	a = source("A", map[[2]string][][2]float64{{"1 key · 4 conns", "grpc"}: {{100, 1}}, {"1 key · 8 conns", "grpc"}: {{100, 1}}})
	b = source("B", map[[2]string][][2]float64{{"4 conns", "json"}: {{120, 1}}, {"16 conns", "json"}: {{120, 1}}})
	if d, err = CompareDoc(a, b, CompareOptions{}); err != nil {
		t.Fatal(err)
	}
	if r := row(t, d, "Requests/s", "4 conns"); r[1] != "100" || r[2] != "120" {
		t.Errorf("1 key against no key: %q", r)
	}
	if notes := strings.Join(d.Notes, "\n"); !strings.Contains(notes, "Only in A (not compared): 1 key · 8 conns · grpc") || !strings.Contains(notes, "Only in B (not compared): 16 conns · json") {
		t.Errorf("notes %q", notes)
	}
	// Two keys are another case.
	b = source("B", map[[2]string][][2]float64{{"2 keys · 4 conns", "resp"}: {{1, 1}}})
	if _, err := CompareDoc(a, b, CompareOptions{}); err == nil {
		t.Error("1 key against 2 keys: matched")
	}

	// Several variants and nothing in common: an error naming both sides.
	a = source("A", map[[2]string][][2]float64{{"4 conns", "x"}: {{1, 1}}, {"4 conns", "y"}: {{1, 1}}})
	b = source("B", map[[2]string][][2]float64{{"4 conns", "z"}: {{1, 1}}})
	if _, err := CompareDoc(a, b, CompareOptions{}); err == nil || !strings.Contains(err.Error(), "A has 4 conns · x; 4 conns · y; B has 4 conns · z") {
		t.Errorf("no matching cell: %v", err)
	}
	if _, err := CompareDoc(a, &Source{Path: "empty.json"}, CompareOptions{}); err == nil || !strings.Contains(err.Error(), "no samples") {
		t.Errorf("empty file: %v", err)
	}
	if _, err := CompareDoc(a, a, CompareOptions{Alpha: 1.5}); err == nil || !strings.Contains(err.Error(), "between 0 and 1") {
		t.Errorf("alpha 1.5: %v", err)
	}
}

// A sample that failed has no figures: it is left out of the medians and
// counted in the notes.
func TestCompareFailedSamples(t *testing.T) {
	a := source("A", map[[2]string][][2]float64{{"4 conns", "go"}: {{100, 1}, {102, 1}}})
	a.Rows = append(a.Rows, Row{Case: "4 conns", Variant: "go", Sample: &result.Sample{Error: "target did not start"}})
	b := source("B", map[[2]string][][2]float64{{"4 conns", "go"}: {{100, 1}}})
	d, err := CompareDoc(a, b, CompareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r := row(t, d, "Requests/s", "4 conns · go"); r[1] != "101 [100–102]" || !strings.HasSuffix(r[4], "n=2+1") {
		t.Errorf("row %q: want A over its 2 good samples", r)
	}
	if notes := strings.Join(d.Notes, "\n"); !strings.Contains(notes, "A: 1 of 3 samples failed") {
		t.Errorf("notes %q", notes)
	}
}
