package http

import (
	"bytes"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
	"golang.org/x/net/http/httpguts"
)

// FuzzTargetsFile: a --targets file (vegeta's format, with weights and
// comments) is read by parseTargets. Any text is read or refused without a
// panic; a refusal names the file and line; every request read has an
// upper-case method, a URL that ParseURL takes and NormalizeURL leaves as
// it is, a weight within its bounds and headers with names; and a driver
// is made of them, or refused, without a panic. Inputs that name a body
// file (@path) are left out: they would read the machine's files.
func FuzzTargetsFile(f *testing.F) {
	for _, s := range []string{
		"GET http://127.0.0.1:8080/\n",
		"# comment\nPOST http://h/x weight=3\nContent-Type: application/json\n@<<EOF\n{\"a\":1}\nEOF\n\nGET h:81/y\nX-A: 1\nX-A: 2\n",
		"GET https://h/\n@<<T\nnever ends\n", "PUT h2c://h/ weight=0\n", "get http://h/\n", "GET http://u:p@h/\n",
		"GET http://h/#frag\n", "X: y\n", "GET http://h/\nbad header\n", "GET http://h/\n@<<\n",
	} {
		f.Add([]byte(s))
	}
	fuzzcheck.Limit()
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, line := range bytes.Split(data, []byte("\n")) {
			if l := bytes.TrimSpace(line); bytes.HasPrefix(l, []byte("@")) && !bytes.HasPrefix(l, []byte("@<<")) {
				return
			}
		}
		fuzzcheck.Bound(t, len(data), func() {
			reqs, err := parseTargets(bytes.NewReader(data), "t.txt", "/nonexistent")
			if err != nil {
				if !strings.HasPrefix(err.Error(), "t.txt:") {
					t.Fatalf("error does not name the file: %v", err)
				}
				return
			}
			if len(reqs) == 0 || len(reqs) > MaxRequests {
				t.Fatalf("%d requests", len(reqs))
			}
			for i, r := range reqs {
				if r.Method == "" || strings.ToUpper(r.Method) != r.Method || r.Weight < 0 || r.Weight > MaxWeight {
					t.Fatalf("request %d: %+v", i, r)
				}
				if _, _, err := ParseURL(r.URL); err != nil {
					t.Fatalf("request %d: URL %q accepted, but ParseURL: %v", i, r.URL, err)
				}
				if n, err := NormalizeURL(r.URL); err != nil || n != r.URL {
					t.Fatalf("request %d: URL %q normalizes to %q (%v)", i, r.URL, n, err)
				}
				for k, v := range r.Headers {
					if !httpguts.ValidHeaderFieldName(k) || !httpguts.ValidHeaderFieldValue(v) {
						t.Fatalf("request %d: header %q: %q", i, k, v)
					}
				}
			}
			if d, err := New(Config{URL: reqs[0].URL, Requests: reqs}); err == nil && d.Addr() == "" {
				t.Fatal("a driver with no address")
			}
		})
	})
}

// FuzzURL: every URL (a quick run's argument, a suite's, a --targets
// line's) goes through NormalizeURL and ParseURL. Any text is accepted or
// refused without a panic; an accepted URL passes ParseURL, normalizes to
// itself, holds no space, fragment or credentials, and has a port 1–65535
// in its address.
func FuzzURL(f *testing.F) {
	for _, s := range []string{"http://127.0.0.1:8080/", "localhost:3000", "h2c://h/x?y=1", "https://[::1]:443/", "http://u:pw@h/", "u:pw@h", "http://h:0/", "http://h:65536/",
		"ftp://h/", "http://h/#f", "  http://h  ", "http://h/%zz", "//h/", "h?x@y", "http://[fe80::1%25eth0]/", "HTTP://H/"} {
		f.Add(s)
	}
	fuzzcheck.Limit()
	f.Fuzz(func(t *testing.T, s string) {
		fuzzcheck.Bound(t, len(s), func() {
			n, err := NormalizeURL(s)
			if err != nil {
				return
			}
			u, addr, err := ParseURL(n)
			if err != nil {
				t.Fatalf("%q normalizes to %q, which ParseURL refuses: %v", s, n, err)
			}
			if again, err := NormalizeURL(n); err != nil || again != n {
				t.Fatalf("%q normalizes to %q, then to %q (%v)", s, n, again, err)
			}
			if strings.ContainsAny(n, " \t\r\n#") || u.User != nil || u.Hostname() == "" || addr == "" {
				t.Fatalf("%q normalizes to %q (user %v, address %q)", s, n, u.User, addr)
			}
		})
	})
}
