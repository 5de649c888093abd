package k8s

import "fmt"

// maxQuantity bounds a quantity's length: "512Mi" is 5 bytes, and a number
// of more digits than a request can mean is a mistake.
const maxQuantity = 32

// checkQuantity accepts a positive Kubernetes quantity as a pod's request
// or limit is written: a decimal number (digits, a fraction or both, no
// sign), then a binary suffix (Ki Mi Gi Ti Pi Ei), a decimal one (m k M G
// T P E, or none) or an exponent (e or E, an optional sign, 1 or 2
// digits); at most maxQuantity bytes, and not zero. Every string it
// accepts Kubernetes' own parser (resource.ParseQuantity) accepts as a
// positive value (the tests check both on generated strings); the
// manifests carry it as written, and the API server writes it in its own
// canonical form.
func checkQuantity(s string) error {
	const want = `want a positive Kubernetes quantity ("1", "500m", "0.5", "256Mi", "1e3")`
	if len(s) == 0 || len(s) > maxQuantity {
		return fmt.Errorf("%s of 1 to %d bytes, got %d bytes", want, maxQuantity, len(s))
	}
	i, digits, nonzero := 0, 0, false
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		digits++
		nonzero = nonzero || s[i] != '0'
	}
	if i < len(s) && s[i] == '.' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
			digits++
			nonzero = nonzero || s[i] != '0'
		}
	}
	if digits == 0 {
		return fmt.Errorf("%s: no digits before the suffix %q", want, s[i:])
	}
	if !nonzero {
		return fmt.Errorf("%s: it is zero", want)
	}
	switch suffix := s[i:]; suffix {
	case "", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei":
		return nil
	default:
		if suffix[0] == 'e' || suffix[0] == 'E' {
			exp := suffix[1:]
			if len(exp) > 0 && (exp[0] == '+' || exp[0] == '-') {
				exp = exp[1:]
			}
			ok := len(exp) >= 1 && len(exp) <= 2
			for j := 0; ok && j < len(exp); j++ {
				ok = exp[j] >= '0' && exp[j] <= '9'
			}
			if ok {
				return nil
			}
		}
		return fmt.Errorf("%s: unknown suffix %q (Ki Mi Gi Ti Pi Ei, m k M G T P E, or an exponent e3)", want, suffix)
	}
}
