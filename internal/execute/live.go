package execute

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/benchrig/benchrig/internal/live"
	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/proc"
	"github.com/benchrig/benchrig/internal/reportsrc"
	"github.com/benchrig/benchrig/internal/result"
	"github.com/benchrig/benchrig/internal/run"
	"github.com/benchrig/benchrig/internal/sample"
	"github.com/benchrig/benchrig/internal/suite"
)

// UI is --ui: a read-only live page of the run in the browser (package
// live), fed once a second from what the engine and the sampler already
// count; the run never waits for it.
type UI struct {
	// On starts the page.
	On bool
	// Addr is where it listens (default 127.0.0.1 on a free port); an
	// address off loopback needs a token: TokenEnv's value, or one
	// generated and printed.
	Addr     string
	TokenEnv string
	// Linger is how long the page stays up after the run, showing the
	// final report; 0: until Ctrl-C.
	Linger time.Duration
}

// livePage feeds a live.Server from a run's callbacks.
type livePage struct {
	srv    *live.Server
	phases []live.Phase
	stderr io.Writer

	mu      sync.Mutex
	current string
	started time.Time
	phase   string
	engine  load.Watched
	sampler *sample.Sampler
	last    load.Progress // the engine's previous reading
	// agentsCPU is an agents run's agents' CPU seconds at their last
	// reading.
	agentsCPU float64

	stop chan struct{}
	done chan struct{}
}

// startLive starts the page of plan p and prints its URL first.
func startLive(ui UI, title string, p *suite.Plan, stderr io.Writer) (*livePage, error) {
	token := ""
	if ui.TokenEnv != "" {
		if token = os.Getenv(ui.TokenEnv); token == "" {
			return nil, fmt.Errorf("--ui-token-env: $%s is empty", ui.TokenEnv)
		}
	}
	srv, err := live.Start(live.Options{Addr: ui.Addr, Token: token, Title: title})
	if err != nil {
		return nil, fmt.Errorf("--ui: %w", err)
	}
	fmt.Fprintf(stderr, "benchrig: live page at %s\n", srv.URL())
	l := &livePage{srv: srv, phases: live.PhasesOf(run.PhasesOf(p)), stderr: stderr, stop: make(chan struct{}), done: make(chan struct{})}
	items := make([]live.PlanItem, 0, len(p.Samples))
	for _, s := range p.Samples {
		c := p.Cells[s.Cell]
		items = append(items, live.PlanItem{ID: s.Key, Label: fmt.Sprintf("%s · %s, repeat %d", c.CaseLabel(), c.VariantLabel(), s.Repeat)})
	}
	srv.SetPlan(items, p.Estimate(p.Startup))
	go l.loop()
	return l, nil
}

// progress is run.PlanOptions.OnProgress: a new key starts a sample.
func (l *livePage) progress(pr run.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if pr.Key != l.current {
		l.current, l.started, l.engine, l.sampler, l.last = pr.Key, time.Now(), nil, nil, load.Progress{}
		l.srv.SampleStarted(pr.Key, l.phases)
	}
	l.phase = pr.Phase
}

func (l *livePage) setEngine(e load.Watched) {
	l.mu.Lock()
	l.engine, l.last = e, load.Progress{}
	l.mu.Unlock()
}

func (l *livePage) setSampler(s *sample.Sampler) {
	l.mu.Lock()
	l.sampler = s
	l.mu.Unlock()
}

// finished is a sample written.
func (l *livePage) finished(s *result.Sample) { l.srv.SampleFinished(s) }

// loop ticks once a second: the requests and failures of the second (the
// engine's running counts), the target's latest reading and benchrig's
// own CPU.
func (l *livePage) loop() {
	defer close(l.done)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		l.mu.Lock()
		if l.current == "" {
			l.mu.Unlock()
			continue
		}
		pt := live.Point{Offset: time.Since(l.started), Phase: l.phase}
		if e := l.engine; e != nil {
			if pr := e.Progress(); pr.Running {
				fromProgress(&pt, pr, &l.last)
				if pr.ClientCPU > 0 {
					l.agentsCPU = pr.ClientCPU // kept between windows: the agents' processes live on
				}
			}
		}
		if s := l.sampler; s != nil {
			if r, ok := s.Last(); ok {
				pt.ServerCPU, pt.ServerRSS, pt.ServerPSS = r.CPUUser+r.CPUSystem, r.RSS, r.PSS
			}
		}
		l.mu.Unlock()
		u, sy := proc.SelfCPU()
		pt.ClientCPU = (u + sy).Seconds() + l.agentsCPU // an agents run: the coordinator's and its agents'
		l.srv.Tick(pt)
	}
}

// finish shows the final report of the results file (when one was
// written) and, with wait, keeps the page up for ui.Linger (0: until ctx
// ends, at Ctrl-C); without, it closes the page at once (a failed run).
func (l *livePage) finish(ctx context.Context, ui UI, path string, wait bool) {
	close(l.stop)
	<-l.done
	if path != "" {
		if src, err := reportsrc.Load(path, true); err == nil {
			if err := l.srv.Finished(src); err != nil {
				fmt.Fprintf(l.stderr, "benchrig: live page: %v\n", err)
			}
		}
	}
	if wait && ctx.Err() == nil {
		fmt.Fprintf(l.stderr, "benchrig: the live page shows the report at %s", l.srv.URL())
		var after <-chan time.Time
		if ui.Linger > 0 {
			fmt.Fprintf(l.stderr, " for %s (Ctrl-C ends it)\n", ui.Linger)
			after = time.After(ui.Linger)
		} else {
			fmt.Fprintln(l.stderr, " until Ctrl-C")
		}
		select {
		case <-ctx.Done():
		case <-after:
		}
	}
	_ = l.srv.Close()
}

// fromProgress sets the point's per-second counts from an engine's
// running counts since its previous reading last (a new window counts
// from 0), the latest complete second's percentiles, and each agent's
// requests in a distributed run; last becomes pr.
func fromProgress(pt *live.Point, pr load.Progress, last *load.Progress) {
	if pr.Elapsed < last.Elapsed || pr.Requests < last.Requests || pr.Failures < last.Failures || pr.Misses < last.Misses {
		*last = load.Progress{} // a new window
	}
	pt.Requests, pt.Errors, pt.Misses = pr.Requests-last.Requests, pr.Failures-last.Failures, pr.Misses-last.Misses
	if pr.Second.T >= 0 && pr.Second.Requests > 0 {
		pt.P50US, pt.P99US = pr.Second.P50US, pr.Second.P99US
	}
	if len(pr.Parts) > 1 {
		pt.Parts = make([]live.Part, len(pr.Parts))
		for i, part := range pr.Parts {
			pt.Parts[i] = live.Part{Agent: part.Agent, Requests: part.Requests}
			if i < len(last.Parts) && last.Parts[i].Agent == part.Agent && part.Requests >= last.Parts[i].Requests {
				pt.Parts[i].Requests -= last.Parts[i].Requests
			}
		}
	}
	*last = pr
}
