package resp

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/redisephemeral"
	"github.com/benchrig/benchrig/internal/resp/resptest"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/testenv"
)

// Tests against a real redis-server, started per test by package
// redisephemeral.

func startRedis(t *testing.T, opts redisephemeral.Options) *redisephemeral.Server {
	t.Helper()
	testenv.LookPath(t, testenv.Redis, redisephemeral.DefaultBin)
	s, err := redisephemeral.Start(testCtx(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.Stop(ctx)
	})
	return s
}

func redisDo(t *testing.T, s *redisephemeral.Server, args ...string) string {
	t.Helper()
	out, err := s.Do(testCtx(t), args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestRedisMGETOrderDuplicatesAndMissing(t *testing.T) {
	s := startRedis(t, redisephemeral.Options{})
	const tmpl = `CRUD:{db}.public.items:{"id":{id}}`
	stored := map[int64]string{}
	for id := int64(1); id <= 6; id++ {
		if id == 4 {
			continue // missing
		}
		v := `{"id":` + strconv.FormatInt(id, 10) + `,"name":"item ` + strconv.FormatInt(id, 10) + `"}`
		stored[id] = v
		redisDo(t, s, "SET", `CRUD:bench.public.items:{"id":`+strconv.FormatInt(id, 10)+`}`, v)
	}
	// Each request's keys, in order: duplicates, missing keys, reversed order.
	batches := [][]int64{
		{1, 2, 3, 4},
		{3, 3, 3, 3},
		{6, 5, 4, 99},
		{4, 4, 1, 4},
	}
	cfg := Config{
		Addr:            s.Addr(),
		KeyTemplate:     tmpl,
		DB:              "bench",
		Batch:           4,
		Keys:            func(seq uint64, i int) int64 { return batches[seq%uint64(len(batches))][i] },
		ValidateSampled: 1,
		Reference: func(k int64) ([]byte, bool) {
			v, ok := stored[k]
			return []byte(v), ok
		},
	}
	d := newDriver(t, cfg)
	c := open(t, d)
	before, err := s.Stats(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	mustOK(t, c, 0, 1, 2, 3)
	after, err := s.Stats(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	wantHits, wantNils := int64(0), int64(0)
	for _, b := range batches {
		for _, k := range b {
			if _, ok := stored[k]; ok {
				wantHits++
			} else {
				wantNils++
			}
		}
	}
	st := d.Stats()
	if st.Hits != wantHits || st.Nils != wantNils || st.Validated != 16 || st.Mismatches != 0 {
		t.Fatalf("stats %+v, want %d hits, %d nils, 16 validated, 0 mismatches", st, wantHits, wantNils)
	}
	delta := after.Sub(before)
	if delta.KeyspaceHits != wantHits || delta.KeyspaceMisses != wantNils {
		t.Fatalf("redis counted %d hits and %d misses; driver %d and %d", delta.KeyspaceHits, delta.KeyspaceMisses, wantHits, wantNils)
	}

	// A reference that swaps two values is caught: order is checked.
	cfg.Reference = func(k int64) ([]byte, bool) {
		switch k {
		case 1:
			k = 2
		case 2:
			k = 1
		}
		v, ok := stored[k]
		return []byte(v), ok
	}
	d = newDriver(t, cfg)
	out, err := do(t, open(t, d), 0)
	if err != nil || out[0].Class != driver.Unexpected || out[0].Msg != msgValueMismatch {
		t.Fatalf("swapped reference: %v, %v %q", err, out[0].Class, out[0].Msg)
	}
}

func TestRedisAuth(t *testing.T) {
	const pass = "redis-pw-9d2e"
	s := startRedis(t, redisephemeral.Options{Password: secret.New(pass)})
	t.Setenv("BENCHRIG_TEST_REDIS_TOKEN", pass)
	d := newDriver(t, Config{Addr: s.Addr(), Auth: AuthConfig{TokenEnv: "BENCHRIG_TEST_REDIS_TOKEN"}, Command: "GET"})
	mustOK(t, open(t, d), 0)

	d = newDriver(t, Config{Addr: s.Addr(), Auth: AuthConfig{User: "default", Token: secret.New(pass)}})
	mustOK(t, open(t, d), 0)

	d = newDriver(t, Config{Addr: s.Addr(), Auth: AuthConfig{Token: secret.New("not-the-password")}})
	_, err := d.Open(testCtx(t), 0)
	if err == nil || !strings.Contains(err.Error(), "AUTH failed: WRONGPASS") {
		t.Fatalf("wrong password: %v", err)
	}
	if strings.Contains(err.Error(), "not-the-password") {
		t.Fatalf("error shows the token: %v", err)
	}

	d = newDriver(t, Config{Addr: s.Addr()})
	_, err = d.Open(testCtx(t), 0)
	if err == nil || !strings.Contains(err.Error(), "NOAUTH Authentication required") {
		t.Fatalf("no password: %v", err)
	}
}

func TestRedisPipelineExactCounts(t *testing.T) {
	s := startRedis(t, redisephemeral.Options{})
	d := newDriver(t, Config{Addr: s.Addr(), Args: []string{"INCR", "counter"}})
	c := open(t, d)
	const total, depth = 1000, 16
	reqs := make([]driver.Request, depth)
	out := make([]driver.Outcome, depth)
	for seq := 0; seq < total; seq += depth {
		n := min(depth, total-seq)
		for i := 0; i < n; i++ {
			reqs[i].Seq = uint64(seq + i)
		}
		if err := c.Do(testCtx(t), reqs[:n], out[:n]); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i++ {
			if out[i].Class != driver.OK || out[i].Bytes < 4 {
				t.Fatalf("request %d: %+v", seq+i, out[i])
			}
		}
	}
	if got := redisDo(t, s, "GET", "counter"); got != strconv.Itoa(total) {
		t.Fatalf("counter = %s, want %d", got, total)
	}
	stats, err := s.Info(testCtx(t), "commandstats")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stats["cmdstat_incr"], "calls="+strconv.Itoa(total)+",") {
		t.Fatalf("cmdstat_incr = %q, want %d calls", stats["cmdstat_incr"], total)
	}
}

func TestRedisTLS(t *testing.T) {
	certPEM, keyPEM, err := resptest.GenerateCert()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certFile, certPEM, 0o600)
	os.WriteFile(keyFile, keyPEM, 0o600)
	s := startRedis(t, redisephemeral.Options{TLSCertFile: certFile, TLSKeyFile: keyFile})
	redisDo(t, s, "SET", "item:1", "over tls")
	d := newDriver(t, Config{Addr: s.Addr(), Command: "GET", KeySpace: 1, TLS: TLSConfig{Enabled: true, CAFile: certFile}})
	mustOK(t, open(t, d), 0, 1, 2)
	if st := d.Stats(); st.Hits != 3 {
		t.Fatalf("hits %d, want 3", st.Hits)
	}
}

func TestRedisSET(t *testing.T) {
	s := startRedis(t, redisephemeral.Options{})
	d := newDriver(t, Config{Addr: s.Addr(), Command: "SET", KeySpace: 3, Value: "v{id}-{db}", DB: "x"})
	mustOK(t, open(t, d), 0, 1, 2)
	for id := 1; id <= 3; id++ {
		if got := redisDo(t, s, "GET", "item:"+strconv.Itoa(id)); got != "v"+strconv.Itoa(id)+"-x" {
			t.Fatalf("item:%d = %q", id, got)
		}
	}
}
