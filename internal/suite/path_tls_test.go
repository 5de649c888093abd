package suite_test

import (
	"strings"
	"testing"

	_ "github.com/benchrig/benchrig/internal/protocol/all"
	httpproto "github.com/benchrig/benchrig/internal/protocol/http"
	. "github.com/benchrig/benchrig/internal/suite"
)

// https and h2c paths, their TLS and HTTP/2 fields, and what is refused
// with the field's position.
func TestHTTPPathTLSAndHTTP2(t *testing.T) {
	head := "name: t\ntargets:\n  web: {command: [./srv], port: 8443}\npaths:\n  hello: {http: "
	ok := []string{
		`{url: "https://127.0.0.1:{port}/", http2: true, tls: {cacert: ca.pem, cert: c.pem, key: c.key, server_name: localhost}}`,
		`{url: "https://127.0.0.1:{port}/", tls: {insecure: true}}`,
		`{url: "h2c://127.0.0.1:{port}/"}`,
		`{url: "http://127.0.0.1:{port}/", h2c: true}`,
	}
	for _, p := range ok {
		s := mustParse(t, "ok.yaml", head+p+"}\n"+okMatrix)
		if h, _ := s.Paths["hello"].Spec.(*httpproto.Path); h == nil || h.URL == "" {
			t.Errorf("%s: parsed %+v", p, s.Paths["hello"])
		}
	}
	s := mustParse(t, "ok.yaml", head+ok[0]+"}\n"+okMatrix)
	if h := s.Paths["hello"].Spec.(*httpproto.Path); !h.HTTP2 || h.TLS == nil || h.TLS.CACert != "ca.pem" || h.TLS.ServerName != "localhost" {
		t.Errorf("fields: %+v %+v", h, h.TLS)
	}
	for _, c := range []struct{ path, want string }{
		{`{url: "http://127.0.0.1:{port}/", http2: true}`, "ok.yaml:5:17: paths.hello.http.http2: HTTP/2 over TLS needs an https:// URL"},
		{`{url: "https://127.0.0.1:{port}/", h2c: true}`, "paths.hello.http.h2c: h2c is cleartext HTTP/2"},
		{`{url: "http://127.0.0.1:{port}/", tls: {insecure: true}}`, "paths.hello.http.tls: TLS settings given for a http:// URL"},
		{`{url: "https://127.0.0.1:{port}/", tls: {cert: c.pem}}`, "paths.hello.http.tls: cert and key go together"},
		{`{url: "ftp://127.0.0.1:{port}/"}`, "paths.hello.http.url: not an http URL"},
	} {
		_, err := Parse("ok.yaml", []byte(head+c.path+"}\n"+okMatrix))
		if err == nil || !strings.Contains(err.Error(), strings.TrimPrefix(c.want, "ok.yaml:5:17: ")) {
			t.Errorf("%s: error %v, want %q", c.path, err, c.want)
		}
	}
}
