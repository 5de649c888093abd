package live

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/benchrig/benchrig/internal/reportsrc"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/testenv"
)

// chromiumPath finds a Chromium to drive as the report's browser test
// does: BENCHRIG_CHROMIUM, else the usual names; a missing one is
// decided by testenv (a failure under CI=true).
func chromiumPath(t *testing.T) string {
	names := []string{"chromium", "chromium-browser", "google-chrome"}
	if p := os.Getenv("BENCHRIG_CHROMIUM"); p != "" {
		names = []string{p}
	}
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Missing(t, testenv.Browser, "chromium not found ("+strings.Join(names, ", ")+")")
	return ""
}

// inFlightJS reads the page: the last event id, the state of each planned
// sample, the "Last seconds" table's requests, the requests chart's
// polyline, the phase bands and their names, the finished table's rows.
const inFlightJS = `(() => {
  const rows = sel => [...document.querySelectorAll(sel)].map(tr => [...tr.cells].map(c => c.textContent));
  const tables = [...document.querySelectorAll('table')];
  const byCaption = c => tables.find(t => t.caption && t.caption.textContent.startsWith(c));
  const secs = byCaption('Last seconds'), plan = document.querySelector('#plan table'), fin = byCaption('Finished samples');
  const req = [...document.querySelectorAll('#current svg.overtime')].find(s => s.getAttribute('aria-label') === 'Requests per second');
  const pl = req && req.querySelector('polyline.line');
  return {
    event: Number(document.body.getAttribute('data-event') || 0),
    plan: plan ? [...plan.tBodies[0].rows].map(r => r.cells[2].textContent) : [],
    seconds: secs ? [...secs.tBodies[0].rows].map(r => r.cells[2].textContent) : [],
    line: pl ? pl.getAttribute('points').split(' ').map(p => p.split(',').map(Number)) : [],
    bands: [...document.querySelectorAll('#current svg.overtime rect.band')].length,
    bandNames: [...new Set([...document.querySelectorAll('#current svg.overtime text.bandname')].map(t => t.textContent))],
    charts: document.querySelectorAll('#current svg.overtime').length,
    finished: fin ? [...fin.tBodies[0].rows].map(r => [...r.cells].slice(1, 4).map(c => c.textContent)) : [],
    scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth,
    title: document.title, scripts: document.scripts.length,
  };
})()`

// pageState is what inFlightJS returns.
type pageState struct {
	Event       int         `json:"event"`
	Plan        []string    `json:"plan"`
	Seconds     []string    `json:"seconds"`
	Line        [][]float64 `json:"line"`
	Bands       int         `json:"bands"`
	BandNames   []string    `json:"bandNames"`
	Charts      int         `json:"charts"`
	Finished    [][]string  `json:"finished"`
	ScrollWidth int         `json:"scrollWidth"`
	Width       int         `json:"width"`
	Title       string      `json:"title"`
	Scripts     int         `json:"scripts"`
}

// TestLivePageInBrowser drives a run through the server while a headless
// Chromium shows the page: a plan of three samples, six seconds of the
// first (requests 100, 200 … 600), then the three finished with real
// samples, then the report of their file. The page must show the seconds
// in order (table and chart), the phase bands of the sample in flight,
// update ids that increase, the finished table in the order and with the
// labels of the samples, and at the end the report. Screenshots at 1280
// and 400 px go to BENCHRIG_SCREENSHOTS (else the test's temp dir).
func TestLivePageInBrowser(t *testing.T) {
	chrome := chromiumPath(t)
	shots := os.Getenv("BENCHRIG_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	const fixture = "../report/testdata/results/closed.json"
	samples := fixtureSamples(t, "closed.json")[:3]
	s := start(t, Options{Title: "http-demo"})
	var plan []PlanItem
	for _, smp := range samples {
		plan = append(plan, PlanItem{ID: smp.Key, Label: fmt.Sprintf("%s · %s, repeat %d", smp.Case, smp.Variant, smp.Repeat), Estimate: 12 * time.Second})
	}
	s.SetPlan(plan, 36*time.Second)
	s.SampleStarted(samples[0].Key, PhasesOf(result.Phases{Baseline: 2 * time.Second, Warmup: 2 * time.Second, Settle: time.Second, Load: 8 * time.Second, Recovery: 2 * time.Second}))
	// ten seconds: baseline, warm-up, settle, then load
	phases := []string{"baseline", "baseline", "warmup", "warmup", "settle", "load", "load", "load", "load", "load"}
	reqs := []int64{0, 0, 310, 450, 0, 820, 870, 840, 905, 860}
	var fed []string
	cpu, client := 0.0, 0.0
	for i, n := range reqs {
		cpu += 0.02 + float64(n)/1000
		client += 0.01 + float64(n)/2500
		s.Tick(Point{Offset: time.Duration(i+1) * time.Second, Phase: phases[i], Requests: n, P50US: 700 + n/10, P99US: 1800 + n + int64(i%3)*150,
			ServerCPU: cpu, ServerRSS: uint64(38+min(i, 6)*2) << 20, ServerPSS: uint64(30+min(i, 6)*2) << 20, ClientCPU: client})
		fed = append(fed, fmt.Sprint(n))
	}

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("hide-scrollbars", true), chromedp.UserDataDir(t.TempDir()),
		chromedp.Env("TMPDIR=" + t.TempDir()), // its singleton socket's directory, left when it is killed
		chromedp.WindowSize(1280, 1000),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	// start the browser before listening to its console from another
	// goroutine: both would start one
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	cctx, stopConsole := context.WithCancel(ctx)
	messages := chromedp.Console(cctx)
	var problems []string
	consoleDone := make(chan struct{})
	go func() {
		defer close(consoleDone)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				problems = append(problems, m.String())
			}
		}
	}()
	read := func() pageState {
		t.Helper()
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](inFlightJS))
		if err != nil {
			t.Fatalf("read the page: %v", err)
		}
		var st pageState
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatalf("page state: %v (%s)", err, raw)
		}
		return st
	}
	// until waits, within the test's context, for the page to satisfy js.
	until := func(what, js string) {
		t.Helper()
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](js, chromedp.WithPollingInterval(50*time.Millisecond), chromedp.WithPollingTimeout(20*time.Second))); err != nil {
			t.Fatalf("waiting for %s: %v (page: %+v)", what, err, read())
		}
	}
	shoot := func(name string, width int64) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 1000), chromedp.Sleep(300*time.Millisecond)); err != nil {
			t.Fatalf("viewport %d: %v", width, err)
		}
		png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		path := filepath.Join(shots, name)
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot %s", path)
	}

	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 1000), chromedp.Navigate(s.URL()), chromedp.WaitReady("body")); err != nil {
		t.Fatalf("open %s: %v", s.URL(), err)
	}
	// the first update may come before the ticks are drawn: wait for them
	until("the ten seconds", `Number(document.body.getAttribute('data-event') || 0) > 0 && document.querySelectorAll('#current table tbody tr').length === 10`)
	first := read()
	if strings.Join(first.Seconds, " ") != strings.Join(fed, " ") {
		t.Errorf("last seconds' requests %q, want %q in order", first.Seconds, fed)
	}
	// the requests chart: one point a second, in order, each as high as
	// its figure ranks among the others
	if n := len(first.Line); n != len(reqs) {
		t.Fatalf("requests chart has %d points, want %d", n, len(reqs))
	}
	for i := 1; i < len(reqs); i++ {
		a, b := first.Line[i-1], first.Line[i]
		up, higher := reqs[i] > reqs[i-1], b[1] < a[1]
		if b[0] <= a[0] || reqs[i] != reqs[i-1] && up != higher {
			t.Errorf("requests chart point %d %v after %v: want later, and higher exactly when %d > %d", i, b, a, reqs[i], reqs[i-1])
		}
	}
	// the narrow phases are named by their first letter, as in the report
	if first.Charts < 5 || first.Bands < 5*first.Charts || !contains(first.BandNames, "load") || len(first.BandNames) != 5 {
		t.Errorf("%d charts, %d phase bands named %q: want each chart shaded with the 5 phases, named", first.Charts, first.Bands, first.BandNames)
	}
	if want := "running · load|to come|to come"; strings.Join(first.Plan, "|") != want {
		t.Errorf("plan states %q, want %q", first.Plan, want)
	}
	shoot("live-desktop.png", 1280)
	shoot("live-phone.png", 400)
	if st := read(); st.ScrollWidth > st.Width+1 {
		t.Errorf("at 400 px the page is %d px wide: it scrolls sideways", st.ScrollWidth)
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 1000)); err != nil {
		t.Fatal(err)
	}

	// the three samples finish; the second and third run meanwhile
	s.SampleFinished(&samples[0])
	s.SampleStarted(samples[1].Key, nil)
	until("the second sample in flight", `document.querySelector('#plan table tbody tr:nth-child(2) td:nth-child(3)').textContent.startsWith('running')`)
	s.SampleFinished(&samples[1])
	s.SampleStarted(samples[2].Key, nil)
	s.SampleFinished(&samples[2])
	until("three finished", `(() => { const t = [...document.querySelectorAll('table')].find(t => t.caption && t.caption.textContent.startsWith('Finished')); return t && t.tBodies[0].rows.length === 3; })()`)
	done := read()
	if done.Event <= first.Event {
		t.Errorf("update id %d after %d: ids must increase", done.Event, first.Event)
	}
	for i, smp := range samples {
		want := []string{smp.Case, smp.Variant, fmt.Sprint(smp.Repeat)}
		if i >= len(done.Finished) || strings.Join(done.Finished[i], "|") != strings.Join(want, "|") {
			t.Errorf("finished row %d: %q, want %q", i+1, done.Finished, want)
		}
	}
	if strings.Join(done.Plan, "|") != "done · HEALTHY|done · HEALTHY|done · HEALTHY" {
		t.Errorf("plan states at the end: %q", done.Plan)
	}

	// the run is over: the page reloads as the report of the file
	src, err := reportsrc.Load(fixture, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Finished(src); err != nil {
		t.Fatal(err)
	}
	// the page reloads: read it until it is the report
	var end pageState
	for deadline := time.Now().Add(20 * time.Second); ; {
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](inFlightJS))
		if err == nil && json.Unmarshal(raw, &end) == nil && strings.HasPrefix(end.Title, "benchrig report") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the page did not become the report: %v, %+v", err, end)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if end.Scripts != 0 || end.Title != "benchrig report · http-demo" {
		t.Errorf("final page %q with %d scripts, want the report (no script)", end.Title, end.Scripts)
	}
	shoot("live-end-desktop.png", 1280)
	shoot("live-end-phone.png", 400)
	stopConsole()
	<-consoleDone
	if len(problems) > 0 {
		t.Errorf("console:\n  %s", strings.Join(problems, "\n  "))
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}
