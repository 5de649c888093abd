package secret_test

import (
	"fmt"

	"github.com/benchrig/benchrig/internal/secret"
)

func Example() {
	var found secret.Set
	p := secret.NewPolicy([]string{"X-Tenant"}, nil)
	fmt.Println(p.URL("https://u:hunter2@h/x?access_token=abc&q=1", &found))
	fmt.Println(p.Argv([]string{"srv", "--password=s3", "--db-password", "s4", "--port", "80"}, &found))
	fmt.Println(p.Env([]string{"DATABASE_URL=postgres://u:s5@h/db", "PORT=80"}, &found))
	fmt.Println(p.HeaderLine("X-Tenant: t6", &found))
	fmt.Println(found.Scrub("login hunter2 failed in context; s3, s4, s5 and t6 too"))
	// Output:
	// https://u:[redacted]@h/x?access_token=[redacted]&q=1
	// [srv --password=[redacted] --db-password [redacted] --port 80]
	// [DATABASE_URL=postgres://u:[redacted]@h/db PORT=80]
	// X-Tenant: [redacted]
	// login [redacted] failed in context; [redacted], [redacted], [redacted] and [redacted] too
}

func ExampleValue() {
	dsn := secret.New("postgres://u:pw@h/db")
	fmt.Printf("%v %q %#v\n", dsn, dsn, dsn)
	fmt.Println(len(dsn.Reveal()))
	// Output:
	// [redacted] "[redacted]" secret.Value("[redacted]")
	// 20
}

func ExampleScrub() {
	fmt.Println(secret.Scrub("user x rejected: context deadline", "x"))
	// Output:
	// user [redacted] rejected: context deadline
}
