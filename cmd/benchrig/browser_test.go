package main

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

	"github.com/benchrig/benchrig/internal/testenv"
)

// chromiumPath finds a Chromium to drive: BENCHRIG_CHROMIUM when set (a
// path or a command name), else the usual names on PATH. A missing one is
// decided by testenv (a failure under CI=true and in make test).
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

// pageCheck is what the page measures of itself (pageCheckJS).
type pageCheck struct {
	OverTime    int      `json:"overtime"`    // over-time charts drawn (visible)
	Bands       int      `json:"bands"`       // phase bands in them
	BandNames   int      `json:"bandNames"`   // phase names written over them
	Texts       int      `json:"texts"`       // text elements measured
	Small       []string `json:"small"`       // those under 11 CSS px
	ScrollWidth int      `json:"scrollWidth"` // the page's width…
	Width       int      `json:"width"`       // …and the window's
}

// pageCheckJS measures every visible text: SVG text by its computed font
// size times the scale its SVG is drawn at (getBoundingClientRect of the
// SVG over its viewBox), HTML text by the computed font size of the
// element holding it, visible when its getBoundingClientRect has a size.
const pageCheckJS = `(() => {
  const out = {overtime: 0, bands: 0, bandNames: 0, texts: 0, small: [],
    scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth};
  const visible = r => r.width > 0 && r.height > 0;
  for (const s of document.querySelectorAll('svg.overtime')) {
    if (!visible(s.getBoundingClientRect())) continue;
    out.overtime++;
    out.bands += s.querySelectorAll('rect.band').length;
    out.bandNames += s.querySelectorAll('text.bandname').length;
  }
  for (const t of document.querySelectorAll('svg text')) {
    const r = t.getBoundingClientRect();
    if (!visible(r) || !t.textContent.trim()) continue;
    const svg = t.ownerSVGElement;
    const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
    const px = parseFloat(getComputedStyle(t).fontSize) * scale;
    out.texts++;
    if (px < 11) out.small.push('svg text "' + t.textContent.slice(0, 40) + '" ' + px.toFixed(2) + ' px (box ' + r.height.toFixed(1) + ' px high)');
  }
  const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const el = n.parentElement;
    if (!n.textContent.trim() || el.closest('svg')) continue;
    const range = document.createRange(); range.selectNodeContents(n);
    if (!visible(range.getBoundingClientRect())) continue;
    const px = parseFloat(getComputedStyle(el).fontSize);
    out.texts++;
    if (px < 11) out.small.push(el.tagName.toLowerCase() + ' "' + n.textContent.trim().slice(0, 40) + '" ' + px.toFixed(2) + ' px');
  }
  return out;
})()`

// TestReportInBrowser opens the HTML report of committed results files in
// a real Chromium by file URL, at 1400 and 400 CSS px wide, and checks that
// the over-time charts are drawn with their phase bands, that no text is
// smaller than 11 CSS px, that the page itself does not scroll sideways
// at 400 px (tables scroll within themselves), and that the console shows
// no error. Full-page screenshots are written to BENCHRIG_SCREENSHOTS, or
// to the test's temp dir, and named in the log.
func TestReportInBrowser(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others
	chrome := chromiumPath(t)
	shots := os.Getenv("BENCHRIG_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	for _, name := range []string{"rate", "failing", "pgresp"} {
		page := filepath.Join(t.TempDir(), name+".html")
		if _, errOut, code := invoke(t, "report", filepath.Join(fixtures, "results", name+".json"), "-o", page); code != 0 {
			t.Fatalf("report %s: exit %d: %s", name, code, errOut)
		}
		abs, err := filepath.Abs(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, width := range []int{1400, 400} {
			t.Run(fmt.Sprintf("%s@%d", name, width), func(t *testing.T) {
				check, shot := browse(t, chrome, "file://"+abs, width, filepath.Join(shots, fmt.Sprintf("%s-%d.png", name, width)))
				t.Logf("screenshot %s; %d texts measured, %d over-time charts with %d phase bands", shot, check.Texts, check.OverTime, check.Bands)
				if check.OverTime == 0 || check.Bands < check.OverTime || check.BandNames == 0 {
					t.Errorf("over-time charts: %d drawn, %d phase bands, %d phase names: want charts, each with its bands, named", check.OverTime, check.Bands, check.BandNames)
				}
				if len(check.Small) > 0 {
					t.Errorf("%d of %d texts are smaller than 11 CSS px at %d px wide:\n  %s", len(check.Small), check.Texts, width, strings.Join(check.Small[:min(len(check.Small), 20)], "\n  "))
				}
				if check.ScrollWidth > check.Width+1 {
					t.Errorf("the page is %d px wide in a %d px window: it scrolls sideways", check.ScrollWidth, check.Width)
				}
			})
		}
	}
}

// TestBrowserCheckCatchesSmallText proves the measurement can fail: a
// page with 9 px HTML text and an SVG of 11 px text drawn at half size has
// both reported, and one without over-time charts has none counted.
func TestBrowserCheckCatchesSmallText(t *testing.T) {
	chrome := chromiumPath(t)
	page := filepath.Join(t.TempDir(), "small.html")
	html := `<!DOCTYPE html><html><head><meta name="viewport" content="width=device-width"></head><body>` +
		`<p style="font-size:9px">tiny words</p><p>normal words</p>` +
		`<svg viewBox="0 0 400 100" width="200" height="50"><text x="10" y="50" font-size="11">halved</text></svg></body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	check, _ := browse(t, chrome, "file://"+page, 400, filepath.Join(t.TempDir(), "small.png"))
	got := strings.Join(check.Small, "\n")
	if len(check.Small) != 2 || !strings.Contains(got, `p "tiny words" 9.00 px`) || !strings.Contains(got, `svg text "halved" 5.50 px`) || check.OverTime != 0 {
		t.Errorf("small texts %q, over-time charts %d: want the 9 px paragraph and the 5.5 px SVG text, no chart", check.Small, check.OverTime)
	}
}

// browse loads url in a fresh headless Chromium of its own profile, with
// the window width given, and returns what pageCheckJS measured and the
// screenshot's path; console errors and exceptions fail the test.
func browse(t *testing.T, chrome, url string, width int, shot string) (pageCheck, string) {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chrome), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(width, 900),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
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
	err := chromedp.Do(ctx, chromedp.EmulateViewport(int64(width), 900), chromedp.Navigate(url), chromedp.WaitReady("body"))
	if err != nil {
		t.Fatalf("chromium at %d px: %v", width, err)
	}
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](pageCheckJS))
	if err != nil {
		t.Fatalf("page check at %d px: %v", width, err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot at %d px: %v", width, err)
	}
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	stopConsole()
	<-consoleDone
	if len(problems) > 0 {
		t.Errorf("console at %d px:\n  %s", width, strings.Join(problems, "\n  "))
	}
	var check pageCheck
	if err := json.Unmarshal(raw, &check); err != nil {
		t.Fatalf("page check: %v (%s)", err, raw)
	}
	return check, shot
}
