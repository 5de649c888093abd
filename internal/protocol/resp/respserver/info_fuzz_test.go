package respserver

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
)

// infoServer is a RESP server that answers every command with one bulk
// string, the INFO text of the moment.
type infoServer struct {
	ln   net.Listener
	mu   sync.Mutex
	text string
}

func startInfoServer(t testing.TB) *infoServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &infoServer{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return s
}

func (s *infoServer) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		// a command: *N, then $len and the argument, N times
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		for i := 0; i < 2*n; i++ {
			if _, err := br.ReadString('\n'); err != nil {
				return
			}
		}
		s.mu.Lock()
		text := s.text
		s.mu.Unlock()
		if _, err := fmt.Fprintf(c, "$%d\r\n%s\r\n", len(text), text); err != nil {
			return
		}
	}
}

// FuzzINFO: the statistics of a RESP target (keyspace_hits,
// used_memory…, and a suite's own stats: fields) are read from INFO's
// text. Whatever text a server answers, Snapshot returns every field asked
// for as the integer its line holds, or an error naming the server and the
// field; never a panic, a field not asked for, or a value of another line.
func FuzzINFO(f *testing.F) {
	for _, s := range []string{
		"# Stats\r\nkeyspace_hits:10\r\nkeyspace_misses:2\r\ntotal_commands_processed:99\r\n# Memory\r\nused_memory:1048576\r\n",
		"keyspace_hits:1\nkeyspace_misses:x\n", "cache_hits: 7 \r\nkeyspace_hits:9223372036854775808\r\n", ":\r\n#:\r\nkeyspace_hits::1\r\n", "",
		"keyspace_hits:1\r\nkeyspace_hits:2\r\nkeyspace_misses:0\r\ntotal_commands_processed:-5\r\nused_memory:+3\r\ncache_hits:0x10\r\n",
	} {
		f.Add(s)
	}
	srv := startInfoServer(f)
	s := &RedisServer{addr: srv.ln.Addr().String(), opts: RedisOptions{AdminTimeout: 5 * time.Second}, hasInfo: true}
	ctx := context.Background()
	fuzzcheck.Limit()
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 1<<16 {
			return
		}
		srv.mu.Lock()
		srv.text = text
		srv.mu.Unlock()
		// what the text says, line by line, as INFO's reader sees it
		lines := map[string]string{}
		for _, l := range strings.Split(text, "\n") {
			l = strings.TrimRight(l, "\r")
			if l == "" || l[0] == '#' {
				continue
			}
			if k, v, ok := strings.Cut(l, ":"); ok {
				lines[k] = v
			}
		}
		fuzzcheck.Bound(t, len(text), func() {
			for _, src := range []struct {
				name   string
				fields []string
				snap   func() (map[string]float64, error)
			}{
				{"redis", redisStatNames, func() (map[string]float64, error) { return s.Stats().Snapshot(ctx) }},
				{"stats fields", []string{"cache_hits", "keyspace_hits"}, func() (map[string]float64, error) {
					return s.FieldStats([]string{"cache_hits", "keyspace_hits"}).Snapshot(ctx)
				}},
			} {
				m, err := src.snap()
				if err != nil {
					if !strings.Contains(err.Error(), "redis") || !strings.Contains(err.Error(), "INFO") {
						t.Fatalf("%s: error names neither the server nor INFO: %v", src.name, err)
					}
					continue
				}
				if len(m) != len(src.fields) {
					t.Fatalf("%s: %d fields, asked for %d: %v", src.name, len(m), len(src.fields), m)
				}
				for _, k := range src.fields {
					n, err := strconv.ParseInt(strings.TrimSpace(lines[k]), 10, 64)
					if v, ok := m[k]; !ok || err != nil || v != float64(n) {
						t.Fatalf("%s: field %s = %v (%v), its line says %q", src.name, k, v, ok, lines[k])
					}
				}
			}
		})
	})
}
