package resp_test

import (
	"context"
	"fmt"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/protocol/resp/driver"
	"github.com/benchrig/benchrig/internal/resp/resptest"
)

func Example() {
	srv, err := resptest.Start(resptest.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Close()
	srv.Set("item:1", []byte("one"))
	srv.Set("item:3", []byte("three"))

	cfg := resp.DefaultConfig()
	cfg.Addr = srv.Addr()
	cfg.Batch = 4    // MGET of 4 keys per request
	cfg.KeySpace = 4 // keys item:1 … item:4
	d, err := resp.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	conn, err := d.Open(ctx, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close()

	reqs := []driver.Request{{Seq: 0}, {Seq: 1}} // pipelined
	out := make([]driver.Outcome, len(reqs))
	if err := conn.Do(ctx, reqs, out); err != nil {
		fmt.Println(err)
		return
	}
	st := d.Stats()
	// item:2 and item:4 are missing: each MGET is a miss, never a success.
	fmt.Println(out[0].Class, out[1].Class, st.Hits, "hits", st.Nils, "nils")
	// Output: miss miss 4 hits 4 nils
}
