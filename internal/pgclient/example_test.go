package pgclient_test

import (
	"fmt"

	"github.com/benchrig/benchrig/internal/pgclient"
)

// ExampleRedact hides the password of a DSN.
func ExampleRedact() {
	fmt.Println(pgclient.Redact("postgres://bench:s3cret@db:5432/app"))
	fmt.Println(pgclient.Redact("host=db user=bench password='s3 cret'"))
	// Output:
	// postgres://bench:[redacted]@db:5432/app
	// host=db user=bench password=[redacted]
}
