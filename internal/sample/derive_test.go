package sample

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"
)

// synth builds a sample at offset off seconds with cumulative CPU cpu (split
// 3:1 user:system) and the given memory.
func synth(phase string, off, cpu float64, rss, pss uint64) Sample {
	t0 := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	return Sample{
		Time:       t0.Add(time.Duration(off * float64(time.Second))),
		Offset:     off,
		Phase:      phase,
		CPUUser:    cpu * 0.75,
		CPUSystem:  cpu * 0.25,
		RSS:        rss,
		PSS:        pss,
		Threads:    int(off) + 1,
		Processes:  2,
		SchedRunNS: uint64(cpu * 1e9),
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestDerive(t *testing.T) {
	const mib = 1 << 20
	// A run as the runner records it: Mark at each phase change, periodic
	// samples in between. The load window is 10 s to 20 s, with 5 CPU
	// seconds used in it.
	run := []Sample{
		synth("", 0, 1.0, 10*mib, 5*mib),
		synth(PhaseBaseline, 1, 1.0, 10*mib, 5*mib),
		synth(PhaseBaseline, 2, 1.1, 12*mib, 6*mib),
		synth(PhaseBaseline, 3, 1.1, 11*mib, 7*mib),
		synth("warmup", 4, 1.2, 40*mib, 20*mib),
		synth(PhaseLoad, 10, 2.0, 50*mib, 30*mib),
		synth(PhaseLoad, 13, 3.0, 60*mib, 31*mib),
		synth(PhaseLoad, 16, 5.0, 80*mib, 32*mib),
		synth(PhaseLoad, 19, 6.5, 70*mib, 33*mib),
		synth(PhaseRecovery, 20, 7.0, 30*mib, 18*mib),
		synth(PhaseRecovery, 25, 7.1, 20*mib, 16*mib),
	}
	pssGone := slices.Clone(run)
	for i := range pssGone {
		pssGone[i].PSS, pssGone[i].PSSUnavailable = 0, true
	}
	t0 := run[0].Time

	tests := []struct {
		name      string
		samples   []Sample
		window    Window
		completed int64
		online    int
		want      Figures // Missing compared separately
		wantMiss  []string
	}{
		{
			name: "load phase", samples: run, window: Window{Phase: PhaseLoad}, completed: 50000, online: 4,
			want: Figures{
				WindowSeconds: 10, CPUSeconds: 5, CPUUserSeconds: 3.75, CPUSystemSeconds: 1.25, SchedCPUSeconds: 5,
				Cores: 0.5, MachinePercent: 12.5, MicrosPerRequest: 100, Completed: 50000, OnlineCPUs: 4,
				RSSBaseline: 11 * mib, RSSLoad: (60*mib + 70*mib) / 2, RSSAfter: 25 * mib, RSSPeak: 80 * mib,
				PSSBaseline: 6 * mib, PSSLoad: (31*mib + 32*mib) / 2, PSSAfter: 17 * mib, PSSPeak: 33 * mib,
				MaxThreads: 26, MaxProcesses: 2,
			},
		},
		{
			name: "time window equal to the load phase", samples: run,
			window:    Window{Start: t0.Add(10 * time.Second), End: t0.Add(20 * time.Second)},
			completed: 50000, online: 4,
			want: Figures{
				WindowSeconds: 10, CPUSeconds: 5, CPUUserSeconds: 3.75, CPUSystemSeconds: 1.25, SchedCPUSeconds: 5,
				Cores: 0.5, MachinePercent: 12.5, MicrosPerRequest: 100, Completed: 50000, OnlineCPUs: 4,
				RSSBaseline: 11 * mib, RSSLoad: 65 * mib, RSSAfter: 25 * mib, RSSPeak: 80 * mib,
				PSSBaseline: 6 * mib, PSSLoad: 31*mib + mib/2, PSSAfter: 17 * mib, PSSPeak: 33 * mib,
				MaxThreads: 26, MaxProcesses: 2,
			},
		},
		{
			name: "time window between samples snaps inwards", samples: run,
			window:    Window{Start: t0.Add(12 * time.Second), End: t0.Add(17 * time.Second)},
			completed: 1000, online: 2,
			want: Figures{
				WindowSeconds: 3, CPUSeconds: 2, CPUUserSeconds: 1.5, CPUSystemSeconds: 0.5, SchedCPUSeconds: 2,
				Cores: 2.0 / 3, MachinePercent: 100.0 / 3, MicrosPerRequest: 2000, Completed: 1000, OnlineCPUs: 2,
				RSSBaseline: 11 * mib, RSSLoad: 65 * mib, RSSAfter: 25 * mib, RSSPeak: 80 * mib,
				PSSBaseline: 6 * mib, PSSLoad: 31*mib + mib/2, PSSAfter: 17 * mib, PSSPeak: 33 * mib,
				MaxThreads: 26, MaxProcesses: 2,
			},
		},
		{
			name: "last phase runs to its last sample", samples: run, window: Window{Phase: PhaseRecovery}, completed: 0, online: 0,
			want: Figures{
				WindowSeconds: 5, CPUSeconds: 0.1, CPUUserSeconds: 0.075, CPUSystemSeconds: 0.025, SchedCPUSeconds: 0.1,
				Cores:       0.02,
				RSSBaseline: 11 * mib, RSSLoad: 65 * mib, RSSAfter: 25 * mib, RSSPeak: 80 * mib,
				PSSBaseline: 6 * mib, PSSLoad: 31*mib + mib/2, PSSAfter: 17 * mib, PSSPeak: 33 * mib,
				MaxThreads: 26, MaxProcesses: 2,
			},
			wantMiss: []string{"machine_pct", "us_per_request"},
		},
		{
			name: "PSS unavailable", samples: pssGone, window: Window{Phase: PhaseLoad}, completed: 50000, online: 4,
			want: Figures{
				WindowSeconds: 10, CPUSeconds: 5, CPUUserSeconds: 3.75, CPUSystemSeconds: 1.25, SchedCPUSeconds: 5,
				Cores: 0.5, MachinePercent: 12.5, MicrosPerRequest: 100, Completed: 50000, OnlineCPUs: 4,
				RSSBaseline: 11 * mib, RSSLoad: 65 * mib, RSSAfter: 25 * mib, RSSPeak: 80 * mib,
				MaxThreads: 26, MaxProcesses: 2,
			},
			wantMiss: []string{"pss_after_bytes", "pss_baseline_bytes", "pss_load_bytes", "pss_peak_bytes"},
		},
		{
			name: "no baseline or recovery, one load sample", samples: run[5:6], window: Window{Phase: PhaseLoad}, completed: 10, online: 4,
			want: Figures{
				Completed: 10, OnlineCPUs: 4, RSSLoad: 50 * mib, RSSPeak: 50 * mib, PSSLoad: 30 * mib, PSSPeak: 30 * mib,
				MaxThreads: 11, MaxProcesses: 2,
			},
			wantMiss: []string{"cores", "cpu_s", "cpu_system_s", "cpu_user_s", "machine_pct", "pss_after_bytes", "pss_baseline_bytes",
				"rss_after_bytes", "rss_baseline_bytes", "sched_cpu_s", "us_per_request", "window_s"},
		},
		{
			name: "unknown phase", samples: run, window: Window{Phase: "nope"}, completed: 10, online: 4,
			want: Figures{
				Completed: 10, OnlineCPUs: 4,
				RSSBaseline: 11 * mib, RSSLoad: 65 * mib, RSSAfter: 25 * mib, RSSPeak: 80 * mib,
				PSSBaseline: 6 * mib, PSSLoad: 31*mib + mib/2, PSSAfter: 17 * mib, PSSPeak: 33 * mib,
				MaxThreads: 26, MaxProcesses: 2,
			},
			wantMiss: []string{"cores", "cpu_s", "cpu_system_s", "cpu_user_s", "machine_pct", "sched_cpu_s", "us_per_request", "window_s"},
		},
		{
			name: "empty window", samples: run, window: Window{}, completed: 10, online: 4,
			want: Figures{
				Completed: 10, OnlineCPUs: 4,
				RSSBaseline: 11 * mib, RSSLoad: 65 * mib, RSSAfter: 25 * mib, RSSPeak: 80 * mib,
				PSSBaseline: 6 * mib, PSSLoad: 31*mib + mib/2, PSSAfter: 17 * mib, PSSPeak: 33 * mib,
				MaxThreads: 26, MaxProcesses: 2,
			},
			wantMiss: []string{"cores", "cpu_s", "cpu_system_s", "cpu_user_s", "machine_pct", "sched_cpu_s", "us_per_request", "window_s"},
		},
		{
			name: "no samples", samples: nil, window: Window{Phase: PhaseLoad}, completed: 10, online: 4,
			want: Figures{Completed: 10, OnlineCPUs: 4},
			wantMiss: []string{"cores", "cpu_s", "cpu_system_s", "cpu_user_s", "machine_pct", "processes_max",
				"pss_after_bytes", "pss_baseline_bytes", "pss_load_bytes", "pss_peak_bytes",
				"rss_after_bytes", "rss_baseline_bytes", "rss_load_bytes", "rss_peak_bytes",
				"sched_cpu_s", "threads_max", "us_per_request", "window_s"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Derive(tc.samples, tc.window, tc.completed, tc.online)
			if !slices.Equal(got.Missing, tc.wantMiss) {
				t.Errorf("Missing = %q, want %q", got.Missing, tc.wantMiss)
			}
			got.Missing = nil
			floats := []struct {
				name      string
				got, want float64
			}{
				{"window_s", got.WindowSeconds, tc.want.WindowSeconds},
				{"cpu_s", got.CPUSeconds, tc.want.CPUSeconds},
				{"cpu_user_s", got.CPUUserSeconds, tc.want.CPUUserSeconds},
				{"cpu_system_s", got.CPUSystemSeconds, tc.want.CPUSystemSeconds},
				{"sched_cpu_s", got.SchedCPUSeconds, tc.want.SchedCPUSeconds},
				{"cores", got.Cores, tc.want.Cores},
				{"machine_pct", got.MachinePercent, tc.want.MachinePercent},
				{"us_per_request", got.MicrosPerRequest, tc.want.MicrosPerRequest},
			}
			for _, f := range floats {
				if !near(f.got, f.want) {
					t.Errorf("%s = %v, want %v", f.name, f.got, f.want)
				}
			}
			// The rest must match exactly.
			for _, g := range []*Figures{&got, &tc.want} {
				g.WindowSeconds, g.CPUSeconds, g.CPUUserSeconds, g.CPUSystemSeconds = 0, 0, 0, 0
				g.SchedCPUSeconds, g.Cores, g.MachinePercent, g.MicrosPerRequest = 0, 0, 0, 0
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Derive =\n %+v\nwant\n %+v", got, tc.want)
			}
		})
	}
}

// TestDerivePure checks that Derive leaves its input alone (it sorts copies
// for the medians).
func TestDerivePure(t *testing.T) {
	in := []Sample{
		synth(PhaseLoad, 0, 1, 30, 3),
		synth(PhaseLoad, 1, 2, 10, 1),
		synth(PhaseLoad, 2, 3, 20, 2),
	}
	keep := slices.Clone(in)
	Derive(in, Window{Phase: PhaseLoad}, 1, 1)
	if !slices.Equal(in, keep) {
		t.Errorf("Derive changed its input: %+v", in)
	}
}

func TestMedian(t *testing.T) {
	tests := []struct {
		in   []uint64
		want uint64
	}{
		{nil, 0},
		{[]uint64{7}, 7},
		{[]uint64{9, 1, 5}, 5},
		{[]uint64{4, 1, 3, 2}, 2}, // (2+3)/2 rounded down
		{[]uint64{math.MaxUint64, math.MaxUint64 - 2}, math.MaxUint64 - 1},
		{[]uint64{3, 3, 3, 3}, 3},
	}
	for _, tc := range tests {
		if got := median(slices.Clone(tc.in)); got != tc.want {
			t.Errorf("median(%v) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

// TestFiguresJSON checks the JSON names that Missing refers to.
func TestFiguresJSON(t *testing.T) {
	b, err := json.Marshal(Derive(nil, Window{}, 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	missing, _ := m["missing"].([]any)
	if len(missing) == 0 {
		t.Fatalf("no missing figures in %s", b)
	}
	for _, name := range missing {
		if _, ok := m[name.(string)]; !ok {
			t.Errorf("Missing names %q, which is not a JSON field of Figures", name)
		}
	}
}
