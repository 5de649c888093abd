package pg_test

import (
	"context"
	"fmt"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/driver/pg"
	"github.com/benchrig/benchrig/internal/workload"
)

// Example checks two read paths against each other, then performs one
// operation of a mixed workload on one connection.
func Example() {
	ctx := context.Background()
	dsn := "postgres://bench@127.0.0.1:5432/bench"
	wl := workload.Config{Kind: workload.Mixed, Batch: 16}
	paths := []pg.Config{
		{Path: pg.PreparedOne, Workload: wl},
		{Path: pg.Any, Workload: wl},
	}
	if err := pg.Preflight(ctx, dsn, paths); err != nil {
		fmt.Println(err)
		return
	}
	d, err := pg.New(pg.Config{DSN: dsn, Path: pg.Any, Workload: wl})
	if err != nil {
		fmt.Println(err)
		return
	}
	conn, err := d.Open(ctx, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()
	out := make([]driver.Outcome, 1)
	if err := conn.Do(ctx, []driver.Request{{Seq: 19}}, out); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(d.Ops()[out[0].Op], out[0].Class)
}
