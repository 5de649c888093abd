package k8s

import (
	"math/rand/v2"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

// TestCheckQuantity: the quantities a pod's resources are written in, the
// bounds, and the message of a refusal.
func TestCheckQuantity(t *testing.T) {
	for _, s := range []string{"1", "500m", "0.5", ".5", "1.", "256Mi", "1Gi", "2E", "1e3", "1E3", "5e-1", "1e+2", "007", strings.Repeat("9", 29) + "Mi"} {
		if err := checkQuantity(s); err != nil {
			t.Errorf("%q refused: %v", s, err)
		}
	}
	for s, want := range map[string]string{
		"":                            "1 to 32 bytes, got 0",
		strings.Repeat("1", 33):       "1 to 32 bytes, got 33",
		"0":                           "it is zero",
		"0.000m":                      "it is zero",
		"-1":                          `no digits before the suffix "-1"`,
		"+1":                          "no digits",
		"lots":                        "no digits",
		".":                           "no digits",
		"Mi":                          "no digits",
		"1mi":                         `unknown suffix "mi"`,
		"1KiB":                        `unknown suffix "KiB"`,
		"1e":                          `unknown suffix "e"`,
		"1e123":                       `unknown suffix "e123"`,
		"1e3m":                        `unknown suffix "e3m"`,
		"1 ":                          `unknown suffix " "`,
		"1.2.3":                       `unknown suffix ".3"`,
		"1\u00a0":                     "unknown suffix",
		"1" + strings.Repeat("0", 31): "",
	} {
		err := checkQuantity(s)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q refused: %v", s, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "positive Kubernetes quantity")):
			t.Errorf("%q: error %v, want one saying %q", s, err, want)
		}
	}
}

// TestCheckQuantityAgainstKubernetes: every string checkQuantity accepts,
// among 200,000 made of a quantity's characters, Kubernetes' parser
// accepts as a value above zero, and a written quantity it refuses is one
// Kubernetes refuses or reads as zero or less, or one outside the forms
// documented above (a sign, a long exponent, too long).
func TestCheckQuantityAgainstKubernetes(t *testing.T) {
	const alphabet = "0123456789.+-eEmkMGTPiK "
	r := rand.New(rand.NewPCG(1, 2))
	accepted := 0
	for n := 0; n < 200000; n++ {
		b := make([]byte, 1+r.IntN(8))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		s := string(b)
		mine := checkQuantity(s)
		q, theirs := resource.ParseQuantity(s)
		if mine == nil {
			accepted++
			if theirs != nil || q.Sign() <= 0 {
				t.Fatalf("%q accepted here, by Kubernetes: %v, sign %d", s, theirs, q.Sign())
			}
		}
		if mine != nil && theirs == nil && q.Sign() > 0 && !strings.ContainsAny(s, "+-") && len(s) <= maxQuantity {
			if i := strings.IndexAny(s, "eE"); i < 0 || len(s)-i <= 3 {
				t.Errorf("%q refused here (%v) but Kubernetes reads %s", s, mine, q.String())
			}
		}
	}
	if accepted < 1000 {
		t.Errorf("only %d of 200,000 accepted: the generator makes too few quantities", accepted)
	}
}
