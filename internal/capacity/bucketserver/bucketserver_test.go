package bucketserver

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// offer sends rate requests a second to url for d, each due at its slot
// of a constant schedule (late ones sent at once), from at most 64 at a
// time, and returns how many were answered 200 and 503, and the rate
// actually offered.
func offer(t *testing.T, url string, rate float64, d time.Duration) (ok, refused int, offered float64) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 5 * time.Second}
	defer client.CloseIdleConnections()
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 64)
	n := int(rate * d.Seconds())
	start := time.Now()
	for i := range n {
		time.Sleep(time.Until(start.Add(time.Duration(float64(i) / rate * float64(time.Second)))))
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			resp, err := client.Get(url)
			if err != nil {
				t.Error(err)
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			switch resp.StatusCode {
			case http.StatusOK:
				ok++
			case http.StatusServiceUnavailable:
				refused++
			default:
				t.Errorf("status %d", resp.StatusCode)
			}
		}()
	}
	elapsed := time.Since(start)
	wg.Wait()
	return ok, refused, float64(n) / elapsed.Seconds()
}

// Above its rate the bucket accepts N a second. A machine that starves
// the server for longer than the burst (50 ms) bunches arrivals, and the
// bucket, rightly, accepts fewer: a round that accepted too few is
// repeated (up to 3); one that accepted too many fails at once.
func TestOverCapacity(t *testing.T) {
	const N = 400
	for attempt := 1; ; attempt++ {
		s, err := Start("127.0.0.1:0", N)
		if err != nil {
			t.Fatal(err)
		}
		ok, refused, offered := offer(t, s.URL(), 2*N, 2*time.Second)
		accepted, refusedC := s.Accepted.Load(), s.Refused.Load()
		s.Close()
		t.Logf("attempt %d: offered %.0f/s for 2 s: %d accepted, %d refused", attempt, offered, ok, refused)
		if offered < 1.5*N {
			t.Skipf("the machine offered %.0f/s of %d/s: too busy to test", offered, 2*N)
		}
		if refused == 0 || int64(ok) != accepted || int64(refused) != refusedC {
			t.Fatalf("%d accepted, %d refused; counters %d, %d", ok, refused, accepted, refusedC)
		}
		if ok > 2*N*5/4 {
			t.Fatalf("%d accepted in 2 s at %d/s offered: want %d ±25 %%", ok, 2*N, 2*N)
		}
		if ok >= 2*N*3/4 {
			return
		}
		if attempt == 3 {
			t.Fatalf("%d accepted in 2 s at %d/s offered, in each of 3 rounds too few: want %d ±25 %%", ok, 2*N, 2*N)
		}
	}
}

// At half its rate the bucket refuses nothing, as long as arrivals do
// not bunch beyond its burst (50 ms of N): a machine that starves the
// offering loop or the server for longer than that bunches them, and the
// bucket rightly refuses some. Such a round is repeated (up to 3): a
// bucket that refuses under its rate does so every time.
func TestUnderCapacity(t *testing.T) {
	const N = 400
	for attempt := 1; ; attempt++ {
		s, err := Start("", N)
		if err != nil {
			t.Fatal(err)
		}
		ok, refused, offered := offer(t, s.URL(), N/2, 2*time.Second)
		accepted, refusedC := s.Accepted.Load(), s.Refused.Load()
		s.Close()
		t.Logf("attempt %d: offered %.0f/s for 2 s: %d accepted, %d refused", attempt, offered, ok, refused)
		if ok+refused != N || int64(ok) != accepted || int64(refused) != refusedC {
			t.Fatalf("at N/2: %d accepted, %d refused of %d offered (counters %d, %d)", ok, refused, N, accepted, refusedC)
		}
		if refused == 0 {
			return
		}
		if attempt == 3 {
			t.Fatalf("at N/2: %d refused in each of 3 rounds (the last: %d accepted): the bucket refuses under its rate", refused, ok)
		}
	}
}

// TestBucketClock: the bucket on a fake clock admits its burst at once
// and then one token each 1/N s.
func TestBucketClock(t *testing.T) {
	now := time.Unix(0, 0)
	b, err := newBucket(1000, func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	if b.Burst() != 50 || b.PerSecond() != 1000 {
		t.Fatalf("burst %v rate %v", b.Burst(), b.PerSecond())
	}
	got := 0
	for range 100 {
		if b.Take() {
			got++
		}
	}
	if got != 50 {
		t.Fatalf("a full bucket admitted %d of 100 at once, want 50", got)
	}
	got = 0
	for range 10000 { // 5 s at 2000/s offered: one each 0.5 ms
		now = now.Add(500 * time.Microsecond)
		if b.Take() {
			got++
		}
	}
	if got < 4999 || got > 5001 {
		t.Fatalf("5 s at 2000/s offered: %d admitted, want 5000", got)
	}
	small, _ := newBucket(5, func() time.Time { return now })
	if small.Burst() != 1 {
		t.Fatalf("burst of 5/s: %v", small.Burst())
	}
}

func TestStartErrors(t *testing.T) {
	for _, tc := range []struct {
		addr string
		rate float64
		want string
	}{
		{"127.0.0.1:0", 0, "accepted a finite rate above 0"},
		{"0.0.0.0:0", 10, "127.0.0.1:port only"},
		{"nonsense", 10, "address"},
	} {
		if _, err := Start(tc.addr, tc.rate); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Start(%q, %v): %v", tc.addr, tc.rate, err)
		}
	}
	s, err := Start("", 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}
