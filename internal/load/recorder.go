package load

import (
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/result"
)

// recorder is one worker's private record of a window: no locks on the hot
// path. Recorders are merged when the window ends.
type recorder struct {
	start    int64 // driver.Now() at window start
	deadline int64 // driver.Now() at the window's planned end (0: none)
	rate     bool

	latency *hdr.Histogram // headline: corrected in rate mode, service in closed loop
	service *hdr.Histogram // rate mode only
	lag     *hdr.Histogram // rate mode only
	ops     []opRecorder

	sent, bytes, reconnects int64
	resent                  int64
	messages                map[string]int64
	// failed counts the failures by class: errors, timeouts, unexpected.
	failed [3]int64
	causes map[string]int64 // reconnects by cause
	// outstanding counts the requests unanswered at the deadline, and
	// oldest is the largest age (ns) one of them had there.
	outstanding, oldest int64
	// answered counts those of them answered OK after the deadline.
	answered int64
	// misses counts the reads answered without a value for a key.
	misses int64
	// unsent counts requests handed to the worker and never sent (the
	// window ended while its connection was being reopened): in rate
	// mode they are scheduled and dropped.
	unsent int64

	// the per-second timeline: the current second's figures, handed to
	// the shared timeline when the second changes.
	sec      int
	secHist  *hdr.Histogram
	secCount result.Second
	timeline *timeline
}

type opRecorder struct {
	hist     *hdr.Histogram
	requests int64
	answered int64 // outstanding at the deadline, answered OK after it
	misses   int64
	failed   [3]int64 // by failure class (failError, failTimeout, failUnexpected)
}

func newRecorder(start, deadline int64, nops int, rate bool, tl *timeline) *recorder {
	r := &recorder{
		start:    start,
		deadline: deadline,
		rate:     rate,
		latency:  result.NewHistogram(),
		messages: map[string]int64{},
		causes:   map[string]int64{},
		secHist:  newSecondHistogram(),
		timeline: tl,
	}
	if rate {
		r.service = result.NewHistogram()
		r.lag = result.NewHistogram()
	}
	if nops > 1 {
		r.ops = make([]opRecorder, nops)
		for i := range r.ops {
			r.ops[i].hist = result.NewHistogram()
		}
	}
	return r
}

func us(ns int64) int64 {
	v := ns / 1000
	if v < result.HistMinUS {
		return result.HistMinUS
	}
	if v > result.HistMaxUS {
		return result.HistMaxUS
	}
	return v
}

// record stores one outcome. from is when the latency clock started (the
// due time in rate mode, the send in closed loop); sent is the actual send.
// An outcome at or after the window's deadline (or one a Loop reported
// Outstanding) belongs to no class: its request was outstanding at the
// window's end, counted with its age there.
func (r *recorder) record(o *driver.Outcome, from, sent int64) {
	if o.Class == driver.Drained {
		r.answer(o) // reported Outstanding before
		return
	}
	if o.Class == driver.Outstanding || (r.deadline != 0 && o.Done >= r.deadline) {
		end := o.Done
		if r.deadline != 0 {
			end = r.deadline
		}
		r.outstanding++
		r.oldest = max(r.oldest, end-sent)
		if o.Class == driver.OK || o.Class == driver.Miss {
			r.answer(o)
		}
		return
	}
	sec := int((o.Done - r.start) / 1e9)
	if sec < 0 {
		sec = 0
	}
	if sec != r.sec {
		r.flushSecond()
		r.sec = sec
	}
	r.secCount.Bytes += o.Bytes
	r.bytes += o.Bytes
	var op *opRecorder
	if r.ops != nil && int(o.Op) < len(r.ops) {
		op = &r.ops[o.Op]
	}
	if o.Class == driver.Miss {
		r.misses++
		if op != nil {
			op.misses++
		}
		return
	}
	if o.Class != driver.OK {
		r.secCount.Errors++
		r.messages[o.Class.String()+": "+o.Msg]++
		r.failed[failureClass(o.Class)]++
		if op != nil {
			op.failed[failureClass(o.Class)]++
		}
		return
	}
	v := us(o.Done - from)
	_ = r.latency.RecordValue(v)
	_ = r.secHist.RecordValue(v)
	r.secCount.Requests++
	if r.rate {
		_ = r.service.RecordValue(us(o.Done - sent))
	}
	if op != nil {
		op.requests++
		_ = op.hist.RecordValue(v)
	}
}

// answer counts an OK answer, after the deadline, to a request
// outstanding there.
func (r *recorder) answer(o *driver.Outcome) {
	r.answered++
	if r.ops != nil && int(o.Op) < len(r.ops) {
		r.ops[o.Op].answered++
	}
}

// reconnected counts one reopened connection and why the old one ended
// (driver.CauseError when no cause is known).
func (r *recorder) reconnected(cause string) {
	if cause == "" {
		cause = driver.CauseError
	}
	r.reconnects++
	r.causes[cause]++
}

func (r *recorder) flushSecond() {
	if r.secCount.Requests == 0 && r.secCount.Errors == 0 && r.secCount.Bytes == 0 {
		return
	}
	r.timeline.add(r.sec, r.secCount, r.secHist)
	r.secCount = result.Second{}
	r.secHist.Reset()
}

// timeline merges the workers' seconds. Workers hand over a second at most
// once per second each, so a mutex is cheap here.
type timeline struct {
	mu   sync.Mutex
	secs map[int]*secondAgg
}

type secondAgg struct {
	count result.Second
	hist  *hdr.Histogram
}

// newSecondHistogram is coarser than the window's histograms (2 significant
// digits, about 28 KiB): it only feeds the per-second p50 and p99.
func newSecondHistogram() *hdr.Histogram {
	return hdr.New(result.HistMinUS, result.HistMaxUS, 2)
}

func (t *timeline) add(sec int, c result.Second, h *hdr.Histogram) {
	t.mu.Lock()
	defer t.mu.Unlock()
	a := t.secs[sec]
	if a == nil {
		a = &secondAgg{hist: newSecondHistogram()}
		t.secs[sec] = a
	}
	a.count.Requests += c.Requests
	a.count.Bytes += c.Bytes
	a.count.Errors += c.Errors
	a.hist.Merge(h)
}

// live returns second s as handed over so far (T -1 when s < 0).
func (t *timeline) live(s int) LiveSecond {
	if s < 0 {
		return LiveSecond{T: -1}
	}
	out := LiveSecond{T: s}
	t.mu.Lock()
	defer t.mu.Unlock()
	if a := t.secs[s]; a != nil {
		out.Requests, out.Errors = a.count.Requests, a.count.Errors
		if a.hist.TotalCount() > 0 {
			out.P50US, out.P99US = a.hist.ValueAtQuantile(50), a.hist.ValueAtQuantile(99)
			out.Buckets = SparseBuckets(a.hist)
		}
	}
	return out
}

// seconds returns the timeline from second 0 to the last second with data,
// including empty seconds (a stall shows as a zero).
func (t *timeline) seconds(last int) []result.Second {
	t.mu.Lock()
	defer t.mu.Unlock()
	for s := range t.secs {
		if s > last {
			last = s
		}
	}
	out := make([]result.Second, 0, last+1)
	for s := 0; s <= last; s++ {
		row := result.Second{T: s}
		if a := t.secs[s]; a != nil {
			row = a.count
			row.T = s
			if a.hist.TotalCount() > 0 {
				row.P50US = a.hist.ValueAtQuantile(50)
				row.P99US = a.hist.ValueAtQuantile(99)
			}
		}
		out = append(out, row)
	}
	return out
}

// Failure classes, indexing recorder.failed: the class is kept as a field,
// never parsed back from a message.
const (
	failError = iota
	failTimeout
	failUnexpected
)

// failureClass maps a non-OK outcome class onto recorder.failed.
func failureClass(c driver.Class) int {
	switch c {
	case driver.Timeout:
		return failTimeout
	case driver.Unexpected:
		return failUnexpected
	}
	return failError
}
