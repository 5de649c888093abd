package suite

import (
	"strings"
	"testing"
)

// TestPathKey: the protocol keys RegisterProtocol accepts, at their bounds.
func TestPathKey(t *testing.T) {
	for _, tc := range []struct {
		k  string
		ok bool
	}{
		{"http", true}, {"pg", true}, {"a", true}, {"h2", true}, {"a" + strings.Repeat("b", 31), true},
		{"", false}, {"a" + strings.Repeat("b", 32), false}, {"2h", false}, {"Http", false}, {"http-2", false}, {"http_2", false}, {"é", false},
	} {
		if got := pathKey(tc.k); got != tc.ok {
			t.Errorf("pathKey(%q) = %v, want %v", tc.k, got, tc.ok)
		}
	}
}
