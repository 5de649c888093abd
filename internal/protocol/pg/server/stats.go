package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/proc"
	"github.com/benchrig/benchrig/internal/protocol/pg/driver"
)

// pgStats reads pg_stat_database and the table for Spec.Stats. Measure
// takes two readings per sample, before and after the load window; odd
// calls are "before", even calls "after".
//
// A backend publishes its counters at most once a second, at the end of a
// transaction, and otherwise only when an idle timer of up to 10 s fires or
// it exits. With the sample's driver known (Spec), the readings are exact:
// before the window, once a second has passed since the warm-up's last
// operation, every connection runs one operation (seq 0 of the workload),
// whose end publishes what the warm-up left pending (event loops run one
// operation per connection the same way); after the window the
// sample's connections are closed (the load is over) and the reading waits
// until their backends have exited, which publishes the rest. The control
// connection's own reading transactions, and the plan count readings on
// the sample's connections right after the warm-up's publishing operation
// (plans.go), add a few commits to the delta.
//
// Every step is bounded (TouchTimeout per connection, StatsTimeout per
// reading): a server that stops answering fails the reading, and once the
// "before" reading failed the "after" one only closes the connections
// (its delta could not be taken anyway).
type pgStats struct {
	s *PGServer
	d *pgSampleDriver // nil: plain readings
	n int
	// beforeFailed: the last "before" reading failed.
	beforeFailed bool
}

// StatsTimeout bounds one statistics reading on the control connection
// (pg_stat_database, the table's row count, the statistics query).
const StatsTimeout = 5 * time.Second

// Snapshot takes the next reading (see pgStats).
func (st *pgStats) Snapshot(ctx context.Context) (map[string]float64, error) {
	st.n++
	before := st.n%2 == 1
	out, err := st.snapshot(ctx, before)
	if before {
		st.beforeFailed = err != nil
	}
	return out, err
}

func (st *pgStats) snapshot(ctx context.Context, before bool) (map[string]float64, error) {
	if st.d != nil {
		if before {
			if err := st.publishWarmup(ctx); err != nil {
				return nil, err
			}
		} else if err := st.closeSample(ctx); err != nil {
			return nil, err
		}
	}
	if !before && st.beforeFailed {
		return nil, errors.New("postgres: no reading after the window: the one before it failed")
	}
	out, err := st.s.readStats(ctx, before)
	if err == nil && !before && st.d != nil {
		st.d.plans.stats(out)
	}
	return out, err
}

// publishWarmup makes each connection's backend publish its pending
// counters: one operation, a flush interval after the last one. The
// operations run one at a time: a backend's flush at the end of a
// transaction gives up on a statistics entry another backend is flushing
// at the same moment, and keeps it pending for a second (into the window).
func (st *pgStats) publishWarmup(ctx context.Context) error {
	conns, loops := st.d.open()
	var last int64
	for _, c := range conns {
		last = max(last, c.last.Load())
	}
	for _, l := range loops {
		last = max(last, l.LastDone())
	}
	if last == 0 {
		return nil // no operation yet: nothing of the sample is pending
	}
	wait := time.Duration(last + int64(pgclient.StatsFlushDelay+statsMargin) - driver.Now())
	if err := sleepCtx(ctx, wait); err != nil {
		return err
	}
	out := make([]driver.Outcome, 1)
	for i, c := range conns {
		if c.Conn.Closed() {
			continue // its backend publishes as it exits
		}
		// Do watches no context during a request: a connection that does
		// not answer in time is closed (the engine reopens it).
		tctx, cancel := context.WithTimeout(ctx, pg.TouchTimeout)
		stop := context.AfterFunc(tctx, func() { _ = c.Conn.Close() })
		_ = c.Conn.Do(tctx, []driver.Request{{Seq: 0}}, out)
		late := !stop()
		cancel()
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if late || out[0].Class != driver.OK {
			st.d.plans.failed.Store(true) // no plan reading at close either
			why := fmt.Sprintf("did not answer within %s", pg.TouchTimeout)
			if !late {
				why = "failed: " + out[0].Class.String() + ": " + out[0].Msg
			}
			return fmt.Errorf("pg: publishing the warm-up's statistics: connection %d of %d %s", i+1, len(conns), why)
		}
	}
	for _, l := range loops {
		if err := l.Touch(ctx); err != nil {
			st.d.plans.failed.Store(true)
			return fmt.Errorf("publishing the warm-up's statistics: %w", err)
		}
	}
	// The plan counts' base: the window's counts start here, after the
	// warm-up and the publishing operation.
	pctx, cancel := context.WithTimeout(ctx, StatsTimeout)
	defer cancel()
	for _, c := range conns {
		if _, err := c.Conn.PlanStats(pctx); err != nil && pctx.Err() != nil {
			break
		}
	}
	for _, l := range loops {
		if _, err := l.PlanStats(pctx); err != nil && pctx.Err() != nil {
			break
		}
	}
	return ctx.Err()
}

// statsMargin covers clock differences between benchrig's view of an
// operation's end and the server's.
const statsMargin = 150 * time.Millisecond

// backendExitTimeout bounds the wait for the sample's backends to exit.
const backendExitTimeout = 5 * time.Second

// closeSample closes the sample's connections and waits, bounded, until
// their backends have exited (and so published their counters).
func (st *pgStats) closeSample(ctx context.Context) error {
	var pids []int
	conns, loops := st.d.open()
	for _, c := range conns {
		pids = append(pids, int(c.PID()))
		_ = c.Close() // reads the plan counts if the engine did not close it
	}
	for _, l := range loops {
		for _, pid := range l.PIDs() {
			pids = append(pids, int(pid))
		}
		_ = l.Close()
	}
	if len(pids) == 0 || st.beforeFailed {
		return nil // no reading follows: nothing to wait for
	}
	return st.s.waitBackendsGone(ctx, pids)
}

// waitBackendsGone waits until the backends have exited: their processes
// gone (or zombies) when the server is visible here, else absent from
// pg_stat_activity and a short grace for the exit to finish.
func (s *PGServer) waitBackendsGone(ctx context.Context, pids []int) error {
	deadline := time.Now().Add(backendExitTimeout)
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	from := 0
	for time.Now().Before(deadline) {
		left, err := s.backendsLeft(ctx, pids, &from)
		if err != nil {
			if ctx.Err() == context.DeadlineExceeded && time.Now().After(deadline) {
				return fmt.Errorf("postgres: the sample's backends were not seen to exit within %s (the server does not answer)", backendExitTimeout)
			}
			return err
		}
		if left == 0 {
			if s.proc == nil {
				return sleepCtx(ctx, 100*time.Millisecond)
			}
			return nil
		}
		if err := sleepCtx(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
	return nil // best effort: read what is there
}

// backendsLeft counts the backends among pids that still run: on this
// machine, pids[from:] holds them all (those before it were seen gone), and
// it stops at the first that runs (1: one is enough to wait again), moving
// from past the ones gone, so that a wait of 64 backends reads one
// /proc/PID/stat a poll, not 64.
func (s *PGServer) backendsLeft(ctx context.Context, pids []int, from *int) (int, error) {
	if s.proc != nil {
		for ; *from < len(pids); *from++ {
			if proc.Default().Alive(pids[*from]) {
				return 1, nil
			}
		}
		return 0, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ctlErr(); err != nil {
		return 0, err
	}
	var n int
	err := s.ctl.QueryRow(ctx, "SELECT count(*)::int FROM pg_stat_get_activity(NULL) a WHERE a.pid = ANY($1)", pids).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("postgres: wait for the sample's backends to exit: %w", err)
	}
	return n, nil
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// readStats reads pg_stat_database and the table's row count and revision
// sum. The table is read before the statistics in a "before" reading and
// after them in an "after" one, so that the control connection's own scan
// lands in neither window.
func (s *PGServer) readStats(ctx context.Context, before bool) (map[string]float64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.ctlErr(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, StatsTimeout)
	defer cancel()
	out := map[string]float64{}
	var err error
	if before {
		err = s.readTable(ctx, out)
	}
	if err == nil {
		var st pgclient.Stats
		if st, err = pgclient.TakeStats(ctx, s.ctl); err == nil {
			for k, v := range map[string]int64{
				"xact_commit": st.XactCommit, "xact_rollback": st.XactRollback,
				"blks_hit": st.BlksHit, "blks_read": st.BlksRead,
				"tup_returned": st.TupReturned, "tup_fetched": st.TupFetched,
				"tup_inserted": st.TupInserted, "tup_updated": st.TupUpdated, "tup_deleted": st.TupDeleted,
			} {
				out[k] = float64(v)
			}
		}
	}
	if err == nil && !before {
		err = s.readTable(ctx, out)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readTable reads the dataset table's row count, and the sum of its
// revision column when it has one.
func (s *PGServer) readTable(ctx context.Context, out map[string]float64) error {
	id, err := pgclient.ParseIdent("dataset.table", s.opts.Dataset.Table)
	if err != nil {
		return err
	}
	table := id.Sanitize()
	if s.hasRevision == nil {
		var has bool
		if err := s.ctl.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_attribute
			WHERE attrelid = to_regclass($1) AND attname = 'revision' AND attnum > 0 AND NOT attisdropped)`, table).Scan(&has); err != nil {
			return fmt.Errorf("postgres: read columns of table %q: %w", s.opts.Dataset.Table, err)
		}
		s.hasRevision = &has
	}
	var rows, revisions int64
	q := "SELECT count(*), 0::bigint FROM " + table
	if *s.hasRevision {
		q = "SELECT count(*), coalesce(sum(revision), 0)::bigint FROM " + table
	}
	if err := s.ctl.QueryRow(ctx, q).Scan(&rows, &revisions); err != nil {
		return fmt.Errorf("postgres: count rows of table %q: %w", s.opts.Dataset.Table, err)
	}
	out["rows"] = float64(rows)
	if *s.hasRevision {
		out["revisions"] = float64(revisions)
	}
	return nil
}
