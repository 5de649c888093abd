package main

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/result"
)

// TestExportHgrm exports a constant-rate case and reads the files back:
// one corrected and one service-time distribution per sample, whose last
// line is the histogram's maximum (in ms) at its total count.
func TestExportHgrm(t *testing.T) {
	file := filepath.Join(fixtures, "results", "rate.json")
	dir := filepath.Join(t.TempDir(), "hgrm")
	out, stderr, code := invoke(t, "export", "hgrm", file, "--case", "32 conns · 200 req/s", "--variant", "go-hello hello", "-o", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "4 .hgrm file(s)") {
		t.Errorf("output %q: want 4 files (2 repeats × corrected and service)", out)
	}
	_, samples, _, err := result.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, s := range samples {
		if s.Case != "32 conns · 200 req/s" || s.Variant != "go-hello hello" {
			continue
		}
		for suffix, l := range map[string]result.Latency{".hgrm": s.Load.Latency, ".service.hgrm": *s.Load.Service} {
			name := filepath.Join(dir, "32-conns-200-req-s_go-hello-hello_r"+strconv.Itoa(s.Repeat)+suffix)
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasPrefix(b, []byte(" Value\tPercentile\tTotalCount\t1/(1-Percentile)")) {
				t.Errorf("%s: not an HdrHistogram percentile distribution:\n%.200s", name, b)
			}
			var last []string
			sc := bufio.NewScanner(bytes.NewReader(b))
			for sc.Scan() {
				if f := strings.Fields(sc.Text()); len(f) == 4 && f[1] == "1.000000" {
					last = f
				}
			}
			if last == nil {
				t.Fatalf("%s: no 100 %% line", name)
			}
			maxMS, _ := strconv.ParseFloat(last[0], 64)
			n, _ := strconv.ParseInt(last[2], 10, 64)
			if n != l.Count || maxMS < float64(l.MaxUS)/1000*0.999 || maxMS > float64(l.MaxUS)/1000*1.001 {
				t.Errorf("%s: 100 %% at %v ms of %d, want the max %d µs of %d", name, maxMS, n, l.MaxUS, l.Count)
			}
			checked++
		}
	}
	if checked != 4 {
		t.Errorf("checked %d files, want 4", checked)
	}
	for _, bad := range [][]string{
		{"export", "hgrm", file, "--case", "nope", "-o", dir},
		{"export", "hgrm", file, "--case", "32 conns · 200 req/s", "--variant", "nope", "-o", dir},
		{"export", "hgrm", file, "-o", dir},
		{"export", "hgrm", file, "--case", "32 conns · 200 req/s"},
	} {
		if _, stderr, code := invoke(t, bad...); code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", bad, code, stderr)
		}
	}
}
