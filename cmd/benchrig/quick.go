package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/load"
	"github.com/benchrig/benchrig/internal/report"
	"github.com/benchrig/benchrig/internal/result"
)

func toolInfo() result.Tool {
	t := result.ReadTool(version)
	if commit != "" {
		t.Commit, t.Dirty = strings.TrimSuffix(commit, "-dirty"), strings.HasSuffix(commit, "-dirty")
	}
	return t
}

// runQuick opens the connections, runs the warm-up and the recorded window,
// and fills s with the load figures and the verdict.
func runQuick(ctx context.Context, s *result.Sample, cfg load.Config, w load.Window, drv driver.Driver, q *quickFlags, stderr io.Writer) error {
	e, err := load.New(cfg, drv)
	if err != nil {
		return usageError{err}
	}
	s.Started = time.Now().UTC()
	if err := e.Open(ctx); err != nil {
		return err
	}
	defer e.Close()
	if q.warmup > 0 {
		stop := statusLine(stderr, "warm-up", e)
		wr, err := e.Run(ctx, load.Window{Duration: q.warmup})
		stop()
		if err != nil {
			return err
		}
		s.Warmup = &result.WarmupSummary{Seconds: wr.Seconds, Requests: wr.Requests, Failures: wr.Errors + wr.Timeouts + wr.Unexpected}
	}
	stop := statusLine(stderr, "load", e)
	res, err := e.Run(ctx, w)
	stop()
	if err != nil {
		return err
	}
	s.Finished = time.Now().UTC()
	s.Load = res
	s.Verdict = result.Judge(res, q.thresholds())
	return nil
}

// finishQuick prints the report (or JSON), writes -o, and maps the verdict
// to the exit code.
func finishQuick(s *result.Sample, q *quickFlags, title string, stdout io.Writer) error {
	doc := result.Quick{Schema: result.QuickSchema, Tool: toolInfo(), Host: result.ReadHost(), Args: os.Args[1:], Sample: *s}
	if q.out != "" {
		if err := writeJSONFile(q.out, doc); err != nil {
			return err
		}
	}
	if q.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			return err
		}
	} else {
		if err := report.Terminal(stdout, s, report.TerminalOptions{Title: title, ShowVerdict: q.failUnhealthy}); err != nil {
			return err
		}
		if q.out != "" {
			fmt.Fprintf(stdout, "\nResult written to %s\n", q.out)
		}
	}
	if s.Load != nil && s.Load.Interrupted {
		return fmt.Errorf("interrupted: the figures above cover the %.1f s that ran", s.Load.Seconds)
	}
	if q.failUnhealthy && !s.Verdict.Healthy {
		return errUnhealthy
	}
	return nil
}

// writeJSONFile writes v atomically: a temp file in the same directory,
// synced, then renamed over path.
func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
