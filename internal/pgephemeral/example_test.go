package pgephemeral_test

import (
	"context"
	"fmt"

	"github.com/benchrig/benchrig/internal/pgclient"
	"github.com/benchrig/benchrig/internal/pgephemeral"
)

// Example starts a throwaway server sized for 64 benchmark connections,
// loads the dataset, checks the connection reserve and measures a sample's
// statistics.
func Example() {
	ctx := context.Background()
	srv, err := pgephemeral.StartEphemeral(ctx, pgephemeral.Options{MaxConnections: pgephemeral.MaxConnectionsFor(64)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop(context.Background())
	conn, err := pgclient.Connect(ctx, srv.DSN())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close(ctx)
	if err := pgclient.CreateDataset(ctx, conn, pgclient.Dataset{Rows: 4096, PayloadBytes: 128}); err != nil {
		fmt.Println(err)
		return
	}
	if err := pgclient.CheckReserve(ctx, conn, 64); err != nil {
		fmt.Println(err)
		return
	}
	before, _ := pgclient.TakeStats(ctx, conn)
	// … run the sample and close its connections …
	after, _ := pgclient.TakeStats(ctx, conn)
	fmt.Println(after.Sub(before).HitRatio())
}
