package result

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// windowSample is a consistent sample of a 10 s window in its load phase,
// with a timeline of 11 seconds (the last one partial).
func windowSample() *Sample {
	s := testSample("a#1")
	t0 := s.Started
	l := s.Load
	l.Start, l.End, l.Seconds = t0.Add(time.Second), t0.Add(11*time.Second+5*time.Millisecond), 10.005
	l.Timeline = nil
	for i := 0; i <= 10; i++ {
		l.Timeline = append(l.Timeline, Second{T: i, Requests: 10, P50US: 500, P99US: 990})
	}
	l.Timeline[10].Requests = 0
	l.RequestsPerSec = float64(l.Requests) / l.Seconds
	l.Client = Client{UserSeconds: 1, SystemSeconds: 1, Cores: 2 / l.Seconds}
	s.Finished = t0.Add(12 * time.Second)
	s.Phases = []Phase{{Name: "settle", Start: t0, End: t0.Add(time.Second - time.Millisecond)},
		{Name: "load", Start: t0.Add(time.Second - time.Millisecond), End: t0.Add(11*time.Second + 7*time.Millisecond)}}
	return s
}

// TestWindowChecks: a sample's load window must agree with its edges, its
// load phase, its timeline and the figures divided by it. A re-signed file
// passes the checksum, so these catch an edited window: load.seconds
// halved alone, or halved with its end, requests/s and cores made to
// agree.
func TestWindowChecks(t *testing.T) {
	if p := checkSample(windowSample()); len(p) != 0 {
		t.Fatalf("a consistent sample: %q", p)
	}
	for _, tc := range []struct {
		name string
		edit func(l *Load)
		want []string
	}{
		{"seconds halved", func(l *Load) { l.Seconds /= 2 },
			[]string{"load window of 5.003 s, but it starts at", "ends 10.005 s later", "requests_per_sec 9.995, but 100 requests in 5.003 s are 19.990", "client cores 0.200, but 2.000 CPU-seconds in 5.003 s are 0.400"}},
		{"seconds, end, requests/s and cores halved together", func(l *Load) {
			l.Seconds /= 2
			l.End = l.Start.Add(time.Duration(l.Seconds * float64(time.Second)))
			l.RequestsPerSec = float64(l.Requests) / l.Seconds
			l.Client.Cores = 2 / l.Seconds
		}, []string{"load window of 5.003 s in a load phase of 10.008 s", "the timeline runs to second 10 of a 5.003 s window"}},
		{"the window moved out of its phase", func(l *Load) {
			l.Start, l.End = l.Start.Add(time.Hour), l.End.Add(time.Hour)
		}, []string{"lies outside its load phase"}},
		{"seconds doubled with the end", func(l *Load) {
			l.Seconds *= 2
			l.End = l.Start.Add(time.Duration(l.Seconds * float64(time.Second)))
			l.RequestsPerSec = float64(l.Requests) / l.Seconds
			l.Client.Cores = 2 / l.Seconds
		}, []string{"lies outside its load phase"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := windowSample()
			tc.edit(s.Load)
			got := strings.Join(checkSample(s), "\n")
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in\n%s", w, got)
				}
			}
		})
	}
}

// TestCheckReadsPastDamage: Check reads every line (a damaged line is a
// problem, the samples after it are still read and verified), hashes the
// bytes before the footer wherever it is, and names a line after the
// footer; ReadFile stops at the first damaged line. CheckReader reads
// nothing but its reader.
func TestCheckReadsPastDamage(t *testing.T) {
	var b bytes.Buffer
	good := completeFile(t, "a#1", "b#1", "c#1")
	lines := strings.SplitAfter(string(good), "\n")
	damaged := lines[0] + lines[1] + "not json\n" + lines[2] + lines[3] + lines[4] + lines[2]
	b.WriteString(damaged)
	c := CheckReader("mem.json", &b, nil)
	if len(c.Samples) != 3 || c.Footer == nil {
		t.Fatalf("read %d samples, footer %v: want the 3 around the damaged line", len(c.Samples), c.Footer)
	}
	got := strings.Join(c.Report.Problems, "\n")
	for _, want := range []string{"mem.json:3: not JSON", `mem.json:7: a "sample" line after the footer (line 6)`, "checksum mismatch"} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in\n%s", want, got)
		}
	}
	if c.Report.Verdict() != "failed" {
		t.Errorf("verdict %s", c.Report.Verdict())
	}
	// the footer's checksum covers the bytes before it, not what follows
	c = CheckReader("mem.json", strings.NewReader(string(good)+lines[1]), nil)
	if got := strings.Join(c.Report.Problems, "\n"); strings.Contains(got, "checksum") || !strings.Contains(got, "after the footer") {
		t.Errorf("a line appended after the footer: %s", got)
	}
	if c := CheckReader("mem.json", strings.NewReader(string(good)), nil); !c.Report.OK() || c.Report.Notice("mem.json", true) != nil {
		t.Errorf("the good file: %+v", c.Report)
	}
}

// completeFile is a complete results file of samples with these keys.
func completeFile(t *testing.T, keys ...string) []byte {
	t.Helper()
	path := t.TempDir() + "/r.json"
	w, err := Create(path, testHeader(keys...), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := w.Append(testSample(k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(false); err != nil {
		t.Fatal(err)
	}
	return mustRead(t, path)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
