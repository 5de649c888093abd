//go:build linux

package pg

import (
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/secret"
	"github.com/benchrig/benchrig/internal/workload"
)

// TestSkipDecode: with SkipDecode the loop reads the same rows as without,
// to the byte, with the same misses (keys past the table's rows), but hands
// back Undecoded for each row found; its label says so, and the sql path,
// whose shapes are found by parsing, refuses it.
func TestSkipDecode(t *testing.T) {
	for _, path := range []Path{Any, PreparedOne} {
		t.Run(string(path), func(t *testing.T) {
			wl := workload.Config{Kind: workload.Uniform, Batch: 8, Rows: testRows + 8, Seed: 11}
			tally := func(skip bool) (classes [16]int, bytes int64, rows int) {
				d := loopDriver(t, Config{Path: path, SkipDecode: skip, Workload: wl})
				w := runLoops(t, d, 1, 2, 60, func(l *loop) {
					l.onRows = func(_ uint64, rs []any) {
						for _, r := range rs {
							if _, ok := r.(map[string]any); ok == skip || (skip && r != Undecoded) {
								t.Errorf("skip_decode %v: row %#v", skip, r)
							}
							rows++
						}
					}
				})
				for _, o := range w.outs {
					classes[o.Class]++
					bytes += o.Bytes
				}
				return classes, bytes, rows
			}
			c1, b1, r1 := tally(false)
			c2, b2, r2 := tally(true)
			if c1 != c2 || b1 != b2 || r1 != r2 {
				t.Errorf("decoded: classes %v, %d bytes, %d rows; undecoded: classes %v, %d bytes, %d rows", c1, b1, r1, c2, b2, r2)
			}
			if c1[driver.Miss] == 0 || c1[driver.OK] == 0 || r1 == 0 {
				t.Errorf("classes %v, %d rows: want hits and misses", c1, r1)
			}
		})
	}
	// Pre-flight checks that the hot path finds the rows Fetch finds.
	wl := workload.Config{Rows: testRows}
	paths := []Config{{Path: Any, Workload: wl}, {Path: Any, SkipDecode: true, Workload: wl}, {Path: PreparedOne, SkipDecode: true, Workload: wl}}
	if err := Preflight(testCtx(t), secret.NewDSN(needServer(t).DSN()), paths); err != nil {
		t.Errorf("Preflight with skip_decode: %v", err)
	}
	if got := (Config{Path: Any, SkipDecode: true}).WithDefaults().Label(); got != "any[param]/nodecode" {
		t.Errorf("label %q", got)
	}
	_, err := New(Config{Path: SQL, SQL: sqlRows, SkipDecode: true})
	if err == nil || !strings.Contains(err.Error(), "pg.skip_decode") {
		t.Errorf("sql path with skip_decode: %v", err)
	}
}
