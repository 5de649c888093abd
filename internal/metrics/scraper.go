package metrics

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/benchrig/benchrig/internal/result"
)

// Bounds of a metrics configuration (the suite checks them where it parses
// them; Start clamps what it is given).
const (
	// DefaultEvery is the scrape period when none is given.
	DefaultEvery = time.Second
	// MinEvery and MaxEvery bound the scrape period.
	MinEvery = 100 * time.Millisecond
	MaxEvery = time.Minute
	// MaxSeries bounds the series names asked for.
	MaxSeries = 32
	// MaxBody bounds one scrape's answer: a larger one is a failed scrape.
	MaxBody = 4 << 20
	// maxTimeout bounds one scrape (it is also at most the period).
	maxTimeout = time.Second
	// maxNotes bounds the notes of one sample.
	maxNotes = 5
)

// Config says what to scrape.
type Config struct {
	// URL is the endpoint, placeholders filled (http://127.0.0.1:PORT/metrics).
	URL string
	// Every is the scrape period (DefaultEvery when 0).
	Every time.Duration
	// Series are the family names to keep.
	Series []string
}

// Scraper scrapes one endpoint through a sample. Its methods may be
// called on a nil *Scraper (no endpoint): they do nothing.
type Scraper struct {
	cfg    Config
	client *http.Client
	begin  time.Time
	kick   chan struct{}
	quit   chan struct{}
	done   chan struct{}

	mu       sync.Mutex
	phase    string
	rec      result.Metrics
	missing  map[string]bool
	firstErr string
}

// Start starts scraping: once now, then every cfg.Every until Stop. It
// never fails: an endpoint that does not answer gives failed scrapes,
// counted and noted in the record.
func Start(ctx context.Context, cfg Config) *Scraper {
	if cfg.Every <= 0 {
		cfg.Every = DefaultEvery
	}
	cfg.Every = min(max(cfg.Every, MinEvery), MaxEvery)
	timeout := min(cfg.Every, maxTimeout)
	s := &Scraper{
		cfg: cfg,
		client: &http.Client{
			Timeout: timeout,
			// one idle connection of its own, never the load's
			Transport: &http.Transport{MaxIdleConns: 1, MaxIdleConnsPerHost: 1, IdleConnTimeout: 2 * cfg.Every,
				DisableCompression: true, ResponseHeaderTimeout: timeout},
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		begin: time.Now(), kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{}),
		missing: map[string]bool{},
	}
	s.rec = result.Metrics{URL: cfg.URL, EverySeconds: cfg.Every.Seconds(), Series: append([]string(nil), cfg.Series...)}
	go s.loop(ctx)
	return s
}

func (s *Scraper) loop(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(s.cfg.Every)
	defer t.Stop()
	s.scrape(ctx)
	for {
		select {
		case <-s.quit:
			return
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.kick:
		}
		s.scrape(ctx)
	}
}

// Mark starts a phase: the next scrape, taken at once unless one is in
// flight, carries it.
func (s *Scraper) Mark(phase string) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.phase = phase
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// scrape takes one scrape and records it.
func (s *Scraper) scrape(ctx context.Context) {
	s.mu.Lock()
	phase := s.phase
	s.mu.Unlock()
	t0 := time.Now()
	pt := result.MetricsPoint{Time: t0.UTC(), Offset: t0.Sub(s.begin).Seconds(), Phase: phase}
	n, values, missing, err := s.get(ctx)
	wall := time.Since(t0).Seconds()

	s.mu.Lock()
	defer s.mu.Unlock()
	c := &s.rec.Cost
	c.Scrapes++
	c.WallSeconds += wall
	c.Bytes += n
	if phase == "load" {
		c.InLoad++
	}
	if err != nil {
		c.Failed++
		pt.Error = err.Error()
		if s.firstErr == "" {
			s.firstErr = pt.Error
		}
	} else {
		pt.Values = values
		for _, m := range missing {
			s.missing[m] = true
		}
	}
	s.rec.Points = append(s.rec.Points, pt)
}

// get requests the endpoint and parses its answer.
func (s *Scraper) get(ctx context.Context) (n int64, values map[string]float64, missing []string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.cfg.URL, nil)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("metrics URL: %w", err)
	}
	req.Header.Set("Accept", "text/plain;version=0.0.4")
	resp, err := s.client.Do(req)
	if err != nil {
		var ue interface{ Timeout() bool }
		if errors.As(err, &ue) && ue.Timeout() {
			return 0, nil, nil, fmt.Errorf("GET %s: no answer within %s", s.cfg.URL, s.client.Timeout)
		}
		return 0, nil, nil, fmt.Errorf("GET %s: %w", s.cfg.URL, unwrapURL(err))
	}
	defer resp.Body.Close()
	body := &countingReader{r: io.LimitReader(resp.Body, MaxBody+1)}
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, body)
		return body.n, nil, nil, fmt.Errorf("GET %s: status %d, want 200", s.cfg.URL, resp.StatusCode)
	}
	values, missing, err = Parse(body, s.cfg.Series)
	_, _ = io.Copy(io.Discard, body)
	if body.n > MaxBody {
		return body.n, nil, nil, fmt.Errorf("GET %s: answer longer than %d bytes (%d MiB), the bound of a scrape", s.cfg.URL, MaxBody, MaxBody>>20)
	}
	if err != nil {
		return body.n, nil, nil, fmt.Errorf("GET %s: %w", s.cfg.URL, err)
	}
	return body.n, values, missing, nil
}

// unwrapURL drops net/http's "Get "URL": " prefix (the caller names it).
func unwrapURL(err error) error {
	var ue interface{ Unwrap() error }
	if errors.As(err, &ue) {
		if inner := ue.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

// Stop takes a last scrape, stops scraping and returns the record, its
// notes written.
func (s *Scraper) Stop() *result.Metrics {
	if s == nil {
		return nil
	}
	close(s.quit)
	<-s.done
	ctx, cancel := context.WithTimeout(context.Background(), s.client.Timeout)
	s.scrape(ctx)
	cancel()
	s.client.CloseIdleConnections()
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.rec
	if c := rec.Cost; c.Failed > 0 {
		rec.Notes = append(rec.Notes, fmt.Sprintf("%d of %d metrics scrapes failed; the first: %s", c.Failed, c.Scrapes, s.firstErr))
	}
	if len(s.missing) > 0 {
		var names []string
		for m := range s.missing {
			names = append(names, m)
		}
		sort.Strings(names)
		rec.Notes = append(rec.Notes, "metrics series not in the scrape (at least once): "+strings.Join(names, ", "))
	}
	if len(rec.Notes) > maxNotes {
		rec.Notes = rec.Notes[:maxNotes]
	}
	return &rec
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
