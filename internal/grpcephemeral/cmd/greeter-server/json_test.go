package main

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestJSONServer: SayHello in gRPC's JSON mapping, and the refusals.
func TestJSONServer(t *testing.T) {
	j, err := newJSONServer()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what, method, path, body string
		status                   int
		want                     string // the body, or a part of an error's
	}{
		{"hello", "POST", jsonPath, `{"name":"x","id":1}`, 200, `{"message":"hello x","id":"1"}`},
		{"id as a string", "POST", jsonPath, `{"name":"y","id":"9223372036854775807"}`, 200, `{"message":"hello y","id":"9223372036854775807"}`},
		{"empty message", "POST", jsonPath, `{}`, 200, `{"message":"hello ","id":"0"}`},
		{"not escaped", "POST", jsonPath, `{"name":"<a&b>"}`, 200, `{"message":"hello <a&b>","id":"0"}`},
		{"GET", "GET", jsonPath, "", 405, "method GET: /benchrig.test.v1.Greeter/SayHello takes POST"},
		{"not JSON", "POST", jsonPath, `name=x`, 400, "body: not a JSON benchrig.test.v1.HelloRequest"},
		{"unknown field", "POST", jsonPath, `{"name":"x","nme":1}`, 400, `unknown field "nme"`},
		{"id not an integer", "POST", jsonPath, `{"id":1.5}`, 400, "body: not a JSON benchrig.test.v1.HelloRequest"},
		{"too large", "POST", jsonPath, `{"name":"` + strings.Repeat("a", maxJSONBody) + `"}`, 413, "body: more than 1048576 bytes"},
		{"another method", "POST", "/benchrig.test.v1.Greeter/Fail", `{}`, 404, `no method at "/benchrig.test.v1.Greeter/Fail"`},
	} {
		rec := httptest.NewRecorder()
		j.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, strings.NewReader(c.body)))
		got := rec.Body.String()
		if rec.Code != c.status || (c.status == 200 && got != c.want) || !strings.Contains(got, c.want) {
			t.Errorf("%s: %d %q, want %d %q", c.what, rec.Code, got, c.status, c.want)
		}
		if c.status == 200 && rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: Content-Type %q", c.what, rec.Header().Get("Content-Type"))
		}
		if c.status == http.StatusMethodNotAllowed && rec.Header().Get("Allow") != "POST" {
			t.Errorf("%s: Allow %q", c.what, rec.Header().Get("Allow"))
		}
	}
	// Calls are the POSTs to the path; messages those decoded.
	if c, m := j.calls.Load(), j.messages.Load(); c != 8 || m != 4 {
		t.Errorf("counted %d calls, %d messages; want 8, 4", c, m)
	}
}
