package redisephemeral_test

import (
	"context"
	"fmt"
	"time"

	"github.com/benchrig/benchrig/internal/redisephemeral"
)

// Start an ephemeral server, take statistics around some work, stop it.
// (Not run as a test: it needs redis-server.)
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := redisephemeral.Start(ctx, redisephemeral.Options{Password: "from-a-secret-store", MaxClients: 128})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop(context.Background())

	before, err := srv.Stats(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	srv.Do(ctx, "SET", "item:1", "one")
	srv.Do(ctx, "GET", "item:1")
	after, err := srv.Stats(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(srv.Version(), srv.Addr(), after.Sub(before).KeyspaceHits)
}
