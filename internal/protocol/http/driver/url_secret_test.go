package http

import (
	"strings"
	"testing"
)

// TestNormalizeURLNeverEchoesCredentials: a URL that is refused is quoted
// in the error without what stands before its "@" (or not at all), even
// when the credentials are malformed (a space in the password).
func TestNormalizeURLNeverEchoesCredentials(t *testing.T) {
	for _, raw := range []string{
		"http://u:sec ret@h/",
		"https://user:s3cr3t@host:8443/p#frag",
		"http://u:sec\tret@/",
	} {
		_, err := NormalizeURL(raw)
		if err == nil {
			t.Errorf("%q accepted", raw)
			continue
		}
		if strings.Contains(err.Error(), "sec") || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%q: the error quotes the credentials: %v", raw, err)
		}
		if !strings.Contains(err.Error(), "…@") && !strings.Contains(err.Error(), "credentials in the URL") {
			t.Errorf("%q: the error does not show where the credentials were: %v", raw, err)
		}
	}
}
