package metrics_test

import (
	"fmt"
	"strings"

	"github.com/benchrig/benchrig/internal/metrics"
)

func ExampleParse() {
	text := `# TYPE nodejs_heap_size_used_bytes gauge
nodejs_heap_size_used_bytes 5242880
# TYPE http_requests_total counter
http_requests_total{code="200"} 41
http_requests_total{code="500"} 1
`
	values, missing, err := metrics.Parse(strings.NewReader(text), []string{"nodejs_heap_size_used_bytes", "http_requests_total", "nope"})
	fmt.Println(values["nodejs_heap_size_used_bytes"], values[`http_requests_total{code="500"}`], missing, err)
	// Output: 5.24288e+06 1 [nope] <nil>
}
