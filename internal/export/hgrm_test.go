package export

import "testing"

// TestFileSafe: labels become file names of letters, digits, dots and
// dashes, each run of anything else one dash.
func TestFileSafe(t *testing.T) {
	for in, want := range map[string]string{
		"32 conns · 200 req/s": "32-conns-200-req-s",
		"go-hello hello":       "go-hello-hello",
		"v1.2 (pg)":            "v1.2-pg",
	} {
		if got := fileSafe(in); got != want {
			t.Errorf("fileSafe(%q) = %q, want %q", in, got, want)
		}
	}
}
