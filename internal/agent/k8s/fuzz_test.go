package k8s

import (
	"bytes"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
)

// FuzzFetch: any log is refused or recovered without a panic, and a block
// Emit wrote inside any log is recovered exactly.
func FuzzFetch(f *testing.F) {
	var b bytes.Buffer
	_ = Emit(&b, strings.NewReader("{\"schema\":\"x\"}\n"))
	f.Add(b.String(), "hello")
	f.Add("-----BEGIN BENCHRIG RESULTS-----\nAAAA\n-----END BENCHRIG RESULTS sha256=00-----\n", "")
	f.Add("x -----BEGIN BENCHRIG RESULTS-----\n", "\x00")
	fuzzcheck.Limit()
	f.Fuzz(func(t *testing.T, log, data string) {
		fuzzcheck.Bound(t, len(log), func() { _, _ = Fetch(strings.NewReader(log)) })
		if strings.Contains(log, "BENCHRIG RESULTS") {
			return
		}
		var out bytes.Buffer
		out.WriteString(log + "\n")
		if err := Emit(&out, strings.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		got, err := Fetch(&out)
		if err != nil || string(got) != data {
			t.Fatalf("emitted %q inside %q: got %q, %v", data, log, got, err)
		}
	})
}
