package message

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// codeNames are the canonical names of the gRPC status codes 0–16.
var codeNames = [...]string{
	"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND",
	"ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
	"ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
	"UNAUTHENTICATED",
}

// maxCodeDigits bounds the decimal text of a status code.
const maxCodeDigits = 10

// parseDecimal parses s as a decimal number of 1 to maxCodeDigits digits.
func parseDecimal(s string) (uint64, bool) {
	if len(s) == 0 || len(s) > maxCodeDigits {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, true
}

// CodeName returns the canonical name of a grpc-status value, given the
// header's decimal text: "OK", "CANCELLED", …, "UNAUTHENTICATED" for 0–16
// (without allocating), "CODE(17)" beyond. ok is false for text that is
// not a decimal number of at most 10 digits.
func CodeName(status string) (name string, ok bool) {
	v, ok := parseDecimal(status)
	if !ok {
		return "", false
	}
	if v < uint64(len(codeNames)) {
		return codeNames[v], true
	}
	return "CODE(" + strconv.FormatUint(v, 10) + ")", true
}

// ParseCode is CodeName's reverse, for an expected status: a name in any
// case ("UNAVAILABLE", "unavailable"), "CODE(n)", or a decimal number of
// at most 10 digits ("14").
func ParseCode(s string) (int, error) {
	upper := strings.ToUpper(strings.TrimSpace(s))
	if v, ok := parseDecimal(upper); ok {
		return int(v), nil
	}
	for i, name := range codeNames {
		if upper == name {
			return i, nil
		}
	}
	if inner, ok := strings.CutPrefix(upper, "CODE("); ok {
		if inner, ok := strings.CutSuffix(inner, ")"); ok {
			if v, ok := parseDecimal(inner); ok {
				return int(v), nil
			}
		}
	}
	return 0, fmt.Errorf("unknown gRPC status %q; want a number or a name: %s", s, strings.Join(codeNames[:], ", "))
}

// maxDecodedMessage bounds the text DecodeMessage returns, in bytes.
const maxDecodedMessage = 200

// unhex is the value of a hexadecimal digit, or -1.
func unhex(c byte) int {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0')
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// DecodeMessage percent-decodes a grpc-message trailer value (the gRPC
// spec's percent-encoded UTF-8; a % not followed by two hexadecimal digits
// is kept as is), replaces invalid UTF-8 with U+FFFD and clips the text to
// at most 200 bytes on a character boundary.
func DecodeMessage(s string) string {
	if strings.IndexByte(s, '%') < 0 && len(s) <= maxDecodedMessage && utf8.ValidString(s) {
		return s
	}
	// Decoding stops a character's length past the bound: enough to know
	// whether the last character under it is whole.
	b := make([]byte, 0, min(len(s), maxDecodedMessage+utf8.UTFMax))
	for i := 0; i < len(s) && len(b) < maxDecodedMessage+utf8.UTFMax; i++ {
		if s[i] == '%' && i+2 < len(s) {
			if hi, lo := unhex(s[i+1]), unhex(s[i+2]); hi >= 0 && lo >= 0 {
				b = append(b, byte(hi<<4|lo))
				i += 2
				continue
			}
		}
		b = append(b, s[i])
	}
	out := strings.ToValidUTF8(string(b), "\uFFFD")
	if len(out) <= maxDecodedMessage {
		return out
	}
	cut := maxDecodedMessage
	for cut > 0 && !utf8.RuneStart(out[cut]) {
		cut--
	}
	return out[:cut]
}

// timeoutUnits are grpc-timeout's units, finest first.
var timeoutUnits = [...]struct {
	d    time.Duration
	unit string
}{
	{time.Nanosecond, "n"}, {time.Microsecond, "u"}, {time.Millisecond, "m"},
	{time.Second, "S"}, {time.Minute, "M"}, {time.Hour, "H"},
}

// maxTimeoutValue is the largest grpc-timeout value: 8 digits.
const maxTimeoutValue = 99999999

// Timeout renders the grpc-timeout header value of a duration: at most 8
// digits and a unit (n, u, m, S, M, H), the finest unit in which the
// duration fits, rounded up. A duration ≤ 0 is an error.
func Timeout(d time.Duration) (string, error) {
	if d <= 0 {
		return "", fmt.Errorf("a gRPC timeout of %v: want more than 0", d)
	}
	for _, u := range timeoutUnits {
		v := d / u.d
		if d%u.d != 0 {
			v++
		}
		if v <= maxTimeoutValue {
			return strconv.FormatInt(int64(v), 10) + u.unit, nil
		}
	}
	// Unreachable: the longest Duration is about 2.6 million hours.
	return "", fmt.Errorf("a gRPC timeout of %v: too long", d)
}
