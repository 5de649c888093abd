package postgres_test

import (
	"context"
	"fmt"

	"github.com/benchrig/benchrig/internal/target/postgres"
)

// Example starts a throwaway server sized for 64 benchmark connections,
// loads the dataset, checks the connection reserve and measures a sample's
// statistics.
func Example() {
	ctx := context.Background()
	srv, err := postgres.StartEphemeral(ctx, postgres.Options{MaxConnections: postgres.MaxConnectionsFor(64)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer srv.Stop(context.Background())
	conn, err := postgres.Connect(ctx, srv.DSN())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer conn.Close(ctx)
	if err := postgres.CreateDataset(ctx, conn, postgres.Dataset{Rows: 4096, PayloadBytes: 128}); err != nil {
		fmt.Println(err)
		return
	}
	if err := postgres.CheckReserve(ctx, conn, 64); err != nil {
		fmt.Println(err)
		return
	}
	before, _ := postgres.TakeStats(ctx, conn)
	// … run the sample and close its connections …
	after, _ := postgres.TakeStats(ctx, conn)
	fmt.Println(after.Sub(before).HitRatio())
}

// ExampleRedact hides the password of a DSN.
func ExampleRedact() {
	fmt.Println(postgres.Redact("postgres://bench:s3cret@db:5432/app"))
	fmt.Println(postgres.Redact("host=db user=bench password='s3 cret'"))
	// Output:
	// postgres://bench:[redacted]@db:5432/app
	// host=db user=bench password=[redacted]
}
