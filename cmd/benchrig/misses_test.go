package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/exitcode"
	"github.com/benchrig/benchrig/internal/resp/resptest"
	"github.com/benchrig/benchrig/internal/result"
)

// missRun runs benchrig with a generous guard and returns its stdout and
// the one sample.
func missRun(t *testing.T, args ...string) (string, *result.Sample) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "m.json")
	args = append(args, "-d", "500ms", "--sample-interval", "100ms", "--no-calibrate", "-o", out)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var o, e bytes.Buffer
	if err := run(ctx, args, &o, &e); err != nil {
		t.Fatalf("benchrig %s: %v\n%s", strings.Join(args, " "), err, e.String())
	}
	d := readResults(t, out)
	if len(d.Samples) != 1 || d.Samples[0].Load == nil {
		t.Fatalf("want one sample with a load window: %+v", d.Samples)
	}
	return o.String(), &d.Samples[0]
}

// A nil reply to a read is a miss: its own outcome class, never a success,
// shown beside the errors, recorded per sample, and UNHEALTHY past
// --max-miss — by default where benchrig filled the keys (every pg path),
// else reported and tolerated (issue 26, item 6).
func TestMissesAreNotSuccesses(t *testing.T) {
	t.Parallel() // waits more than it works: runs beside the others

	srv, err := resptest.Start(resptest.Options{}) // an empty server
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()

	t.Run("resp empty server", func(t *testing.T) {
		stdout, s := missRun(t, "resp", "--addr", srv.Addr(), "--command", "GET", "-c", "2")
		l := s.Load
		if l.Misses == 0 || l.Requests != 0 || l.Misses+l.OutstandingAtEnd != l.Sent {
			t.Errorf("%d requests, %d misses, %d outstanding of %d sent: want every answered GET a miss", l.Requests, l.Misses, l.OutstandingAtEnd, l.Sent)
		}
		if !strings.Contains(stdout, " misses") || !strings.Contains(stdout, "Is the key space filled?") {
			t.Errorf("the report does not show the misses:\n%s", stdout)
		}
		// Nobody filled the keys: reported, tolerated.
		if strings.Contains(strings.Join(s.Verdict.Reasons, "; "), "missed") {
			t.Errorf("misses of keys nobody filled made the sample UNHEALTHY: %q", s.Verdict.Reasons)
		}
	})
	t.Run("resp --max-miss 0", func(t *testing.T) {
		_, s := missRun(t, "resp", "--addr", srv.Addr(), "--command", "GET", "-c", "2", "--max-miss", "0")
		if s.Verdict.Healthy || !strings.Contains(strings.Join(s.Verdict.Reasons, "; "), "reads missed (100 % of the reads answered) > max_miss 0 %") {
			t.Errorf("verdict %+v, want UNHEALTHY for the misses", s.Verdict)
		}
	})
	t.Run("resp --max-miss out of range", func(t *testing.T) {
		_, stderr, code := invoke(t, "resp", "--addr", srv.Addr(), "--max-miss", "2", "-d", "500ms", "--no-calibrate")
		if code != exitcode.BadUsage || !strings.Contains(stderr, "--max-miss") {
			t.Errorf("exit %d: %s", code, stderr)
		}
	})
	t.Run("pg sql path with missing rows", func(t *testing.T) {
		pg, err := pgWindowServer(t)
		if err != nil {
			pgSkip(t, err)
		}
		// Even keys come back NULL: a row missing for them.
		sql := "SELECT array_to_json(array_agg(CASE WHEN u.k % 2 = 0 THEN NULL ELSE row_to_json(t) END ORDER BY u.n)) " +
			"FROM unnest($1::bigint[]) WITH ORDINALITY u(k, n) LEFT JOIN items t ON t.id = u.k"
		_, s := missRun(t, "pg", "--dsn", pg.DSN(), "--path", "sql", "--sql", sql, "--batch", "4", "-c", "2",
			"--baseline", "0s", "--settle", "0s", "--recovery", "0s")
		l := s.Load
		if l.Misses == 0 || l.Requests+l.Misses+l.OutstandingAtEnd != l.Sent {
			t.Errorf("%d requests, %d misses, %d outstanding of %d sent", l.Requests, l.Misses, l.OutstandingAtEnd, l.Sent)
		}
		// benchrig checked the table: no read may miss by default.
		if s.Verdict.Healthy || !strings.Contains(strings.Join(s.Verdict.Reasons, "; "), "reads missed") {
			t.Errorf("verdict %+v, want UNHEALTHY for the misses", s.Verdict)
		}
	})
}
