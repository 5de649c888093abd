package calibrate_test

import (
	"context"
	"fmt"
	"time"

	"github.com/benchrig/benchrig/internal/calibrate"
)

func ExampleMeasure() {
	f := calibrate.Measure(context.Background(), []string{"resp"}, nil, 100*time.Millisecond)
	e := f.Entry("resp")
	fmt.Println(e.Protocol, e.Error == "", e.Requests > 0, e.P99US >= e.P50US)
	// Output: resp true true true
}
