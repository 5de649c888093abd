package sample

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Status tells how sampling went: whether the root process exited, and
// whether readings failed.
type Status struct {
	// RootExited says the root process exited while it was being sampled.
	// Sampling stopped then; the samples taken so far are kept.
	RootExited bool `json:"root_exited"`
	// ExitedAt is when the sampler noticed the exit (UTC), at most one
	// interval after it happened.
	ExitedAt time.Time `json:"exited_at,omitzero"`
	// Errors counts readings that failed (the process list or the root's
	// stat could not be read) and produced no sample.
	Errors int `json:"errors,omitempty"`
	// LastError is the message of the last failed reading.
	LastError string `json:"last_error,omitempty"`
}

// Sampler samples one process tree at a fixed interval until it is stopped,
// its context ends or the root process exits. Its methods are safe for
// concurrent use.
type Sampler struct {
	cfg       Config
	reader    *reader
	rootStart uint64
	// also maps the further roots (Config.Also) to their start times.
	also    map[int]uint64
	begin   time.Time // monotonic origin of Sample.Offset
	lastPSS time.Time // when PSS was last read
	// now is the clock of the PSS decisions (Config.clock or time.Now).
	now func() time.Time
	// lastPSSSum, lastPSSRSS and lastPSSUnavailable are that reading's
	// tree PSS, its tree RSS and whether some process's PSS could not be
	// read.
	lastPSSSum         uint64
	lastPSSRSS         uint64
	lastPSSUnavailable bool
	// nextMark is when the phase in progress is planned to end (MarkUntil),
	// zero when no end is planned: that edge's mark reads PSS.
	nextMark time.Time

	mu      sync.Mutex
	phase   string
	samples []Sample
	cpu     cpuAccount
	sched   schedAccount
	status  Status
	done    bool // no more samples: stopped, context ended or root exited

	quit     chan struct{}
	finished chan struct{}
	stopOnce sync.Once
}

// Start checks cfg, takes a first sample of the tree rooted at cfg.PID (with
// an empty phase) and then samples it every cfg.Interval in a goroutine until
// Stop is called, ctx ends or the root process exits. It fails when cfg is
// invalid, procfs cannot be read or the root process does not exist.
func Start(ctx context.Context, cfg Config) (*Sampler, error) {
	cfg, err := cfg.resolved()
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("start sampler of pid %d: %w", cfg.PID, err)
	}
	r, err := newReader(cfg.Root)
	if err != nil {
		return nil, fmt.Errorf("start sampler of pid %d: %w", cfg.PID, err)
	}
	r.mode = cfg.readMode
	rootStart, err := r.rootStart(cfg.PID)
	if err != nil {
		return nil, fmt.Errorf("start sampler: %w", err)
	}
	also := make(map[int]uint64, len(cfg.Also))
	for _, pid := range cfg.Also {
		if also[pid], err = r.rootStart(pid); err != nil {
			return nil, fmt.Errorf("start sampler: %w", err)
		}
	}
	if cfg.clock == nil {
		cfg.clock = time.Now
	}
	s := &Sampler{
		cfg:       cfg,
		reader:    r,
		rootStart: rootStart,
		also:      also,
		begin:     time.Now(),
		now:       cfg.clock,
		quit:      make(chan struct{}),
		finished:  make(chan struct{}),
	}
	s.mu.Lock()
	err = s.takeLocked(true)
	exited := s.status.RootExited
	s.mu.Unlock()
	if err != nil || exited {
		r.close()
	}
	if err != nil {
		return nil, fmt.Errorf("start sampler: first sample of pid %d: %w", cfg.PID, err)
	}
	if exited {
		return nil, fmt.Errorf("start sampler: root process %d exited before the first sample", cfg.PID)
	}
	go s.loop(ctx)
	return s, nil
}

// Config returns the resolved configuration the sampler runs with.
func (s *Sampler) Config() Config { return s.cfg }

// loop takes a sample at every tick until Stop, ctx or the root's exit,
// then closes the reader's files.
func (s *Sampler) loop(ctx context.Context) {
	defer close(s.finished)
	defer func() {
		s.mu.Lock()
		s.done = true
		s.reader.close()
		s.mu.Unlock()
	}()
	ticker := time.NewTicker(s.cfg.Interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			s.mu.Lock()
			s.done = true
			s.mu.Unlock()
			return
		case <-s.quit:
			return
		case <-ticker.C:
			s.mu.Lock()
			if !s.done {
				_ = s.takeLocked(false) // recorded in s.status
			}
			done := s.done
			s.mu.Unlock()
			if done {
				return
			}
		}
	}
}

// takeLocked reads the tree and appends a sample stamped with the current
// phase; it records the root's exit or a failed reading in s.status. It reads
// PSS when mark is set or PSSInterval has passed (less half an interval, so
// that tick jitter does not push the reading to the tick after). A mark
// within markPSSReuse of the last PSS reading reuses it, but only while the
// tree's RSS (read every time) is within pssReuseRSSFraction of the RSS at
// that reading: phases of zero length put several edges at one instant, and
// each PSS reading of a big tree costs milliseconds of CPU (PostgreSQL's 70
// backends: ~20 ms), yet memory that moved in between (touching 200 MiB takes
// less than 100 ms) must be read again. The caller holds s.mu.
func (s *Sampler) takeLocked(mark bool) error {
	t0 := s.now()
	reuse := mark && !s.cfg.NoPSS && !s.lastPSS.IsZero() && t0.Sub(s.lastPSS) < markPSSReuse
	withPSS := !reuse && !s.cfg.NoPSS && (mark || (t0.Sub(s.lastPSS) >= s.cfg.PSSInterval-s.cfg.Interval/2 && !s.markSoon(t0)))
	t, err := s.reader.read(s.cfg.PID, s.rootStart, s.also, withPSS, t0)
	if err == nil && reuse && !t.rootGone && rssMoved(s.lastPSSRSS, t.rss) {
		reuse, withPSS = false, true
		t, err = s.reader.read(s.cfg.PID, s.rootStart, s.also, true, t0)
	}
	t1 := s.now()
	if err != nil {
		s.status.Errors++
		s.status.LastError = err.Error()
		return err
	}
	if t.rootGone {
		s.status.RootExited = true
		s.status.ExitedAt = t1.UTC()
		s.done = true
		return nil
	}
	switch {
	case withPSS:
		s.lastPSS, s.lastPSSSum, s.lastPSSRSS, s.lastPSSUnavailable = t0, t.pss, t.rss, t.pssUnavailable
	case reuse:
		t.pss, t.pssRead, t.pssUnavailable = s.lastPSSSum, true, s.lastPSSUnavailable
	}
	s.cpu.update(t)
	s.sched.update(t.sched)
	user, system := s.cpu.seconds()
	at := t0.Add(t1.Sub(t0) / 2) // the middle of the reading
	s.samples = append(s.samples, Sample{
		Time:             at.UTC(),
		Offset:           at.Sub(s.begin).Seconds(),
		Phase:            s.phase,
		CPUUser:          user,
		CPUSystem:        system,
		RSS:              t.rss,
		PSS:              pssOrZero(t),
		PSSSkipped:       !t.pssRead,
		PSSUnavailable:   t.pssUnavailable,
		Threads:          t.threads,
		Processes:        t.processes,
		SchedRunNS:       s.sched.cum,
		SchedUnavailable: t.schedUnavailable,
	})
	return nil
}

// markSoon reports whether the phase in progress is planned to end, and
// its mark to read PSS, within half a PSS interval of t: a periodic reading
// then would read the tree again moments before that mark does (in a 5 s
// load phase, one time in two), a sweep of every process's page tables
// while the load runs for no figure the mark does not give. The reading
// that is left keeps PSS readings at most 1.5 PSS intervals apart; should
// the mark not come, the first tick after its time reads PSS.
func (s *Sampler) markSoon(t time.Time) bool {
	return !s.nextMark.IsZero() && !t.After(s.nextMark) && s.nextMark.Sub(t) < s.cfg.PSSInterval/2
}

// markPSSReuse is how recent a PSS reading a phase edge reuses.
const markPSSReuse = 100 * time.Millisecond

// pssReuseRSSFraction is how far the tree's RSS may have moved since a PSS
// reading (as a fraction of the RSS then) for a phase edge to reuse it.
const pssReuseRSSFraction = 0.01

// rssMoved reports whether the tree's RSS moved from then to now by more
// than pssReuseRSSFraction of then.
func rssMoved(then, now uint64) bool {
	d := float64(now) - float64(then)
	if d < 0 {
		d = -d
	}
	return d > pssReuseRSSFraction*float64(then)
}

// pssOrZero returns the tree's PSS, or 0 when it was not read or could not be
// read for every process: a partial sum would understate the tree.
func pssOrZero(t tree) uint64 {
	if !t.pssRead || t.pssUnavailable {
		return 0
	}
	return t.pss
}

// SetPhase sets the phase stamped on the samples taken from now on.
func (s *Sampler) SetPhase(name string) {
	s.mu.Lock()
	s.phase = name
	s.mu.Unlock()
}

// Mark sets the phase like SetPhase and takes a sample at once, stamped with
// the new phase and with PSS read, so that a phase's first sample is taken
// exactly at its start and the next phase's first sample exactly at its end.
// After Stop, the end of the context or the root's exit it only sets the
// phase.
func (s *Sampler) Mark(name string) { s.MarkUntil(name, time.Time{}) }

// MarkUntil is Mark for a phase planned to end at end (zero: no planned
// end), whose end is marked in turn: a periodic PSS reading due within half
// a PSS interval before end is left to that mark.
func (s *Sampler) MarkUntil(name string, end time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.phase = name
	if !s.done {
		_ = s.takeLocked(true) // a mark reads PSS whatever nextMark says
	}
	s.nextMark = end
}

// Samples returns a copy of the samples taken so far, in time order.
func (s *Sampler) Samples() []Sample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.samples)
}

// Last returns the latest sample, without copying the others (false
// before the first).
func (s *Sampler) Last() (Sample, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.samples) == 0 {
		return Sample{}, false
	}
	return s.samples[len(s.samples)-1], true
}

// Status returns whether the root exited and how many readings failed.
func (s *Sampler) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

// Stop stops sampling, waits for the sampling goroutine to end and returns
// all samples. It may be called more than once; later calls return the same
// samples.
func (s *Sampler) Stop() []Sample {
	s.stopOnce.Do(func() {
		s.mu.Lock()
		s.done = true
		s.mu.Unlock()
		close(s.quit)
	})
	<-s.finished
	return s.Samples()
}
