package target

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// checkServer answers /json with a JSON document, /fail with 500 and a long
// body, /echo with the request's method, header and body, and anything else
// with "hello".
func checkServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"data":{"id":42,"name":"bench","ratio":0.5,"tags":["a","b"],"big":12345678901234567890,"ok":true,"none":null},"items":[{"id":1},{"id":2}]}`)
		case "/fail":
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "internal error: "+strings.Repeat("x", 300))
		case "/echo":
			b, _ := io.ReadAll(r.Body)
			io.WriteString(w, r.Method+" "+r.Header.Get("X-Test")+" "+r.Host+" "+string(b))
		case "/notjson":
			io.WriteString(w, "<html>")
		default:
			io.WriteString(w, "hello")
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func ptr(s string) *string { return &s }

func TestRunCheckPasses(t *testing.T) {
	srv := checkServer(t)
	ctx := context.Background()
	cases := map[string]Check{
		"status any 2xx": {URL: srv.URL + "/"},
		"status exact":   {URL: srv.URL + "/", Status: 200},
		"status 500":     {URL: srv.URL + "/fail", Status: 500},
		"body equals":    {URL: srv.URL + "/", BodyEquals: ptr("hello")},
		"contains":       {URL: srv.URL + "/", BodyContains: "ell"},
		"echo": {Method: "POST", URL: srv.URL + "/echo", Headers: map[string]string{"X-Test": "v", "Host": "example.test"},
			Body: "payload", BodyEquals: ptr("POST v example.test payload")},
		"json fields": {URL: srv.URL + "/json", JSON: map[string]any{
			"data.id":    42,
			"data.name":  "bench",
			"data.ratio": 0.50,
			"data.tags":  []any{"a", "b"},
			"data.big":   uint64(12345678901234567890),
			"data.ok":    true,
			"data.none":  nil,
			"items.1.id": 2.0,
			"items.0":    map[string]any{"id": 1},
		}},
	}
	for name, c := range cases {
		if err := RunCheck(ctx, c); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestRunCheckFailures(t *testing.T) {
	srv := checkServer(t)
	cases := []struct {
		name  string
		check Check
		want  []string
	}{
		{"status", Check{URL: srv.URL + "/fail"},
			[]string{"check GET " + srv.URL + "/fail: status 500, want 2xx; got status 500, body \"internal error: xxx", `xxx"…`}},
		{"status exact", Check{URL: srv.URL + "/", Status: 201},
			[]string{"status 200, want 201", `body "hello"`}},
		{"body equals", Check{URL: srv.URL + "/", BodyEquals: ptr("bye")},
			[]string{`body differs from body_equals "bye"; got status 200, body "hello"`}},
		{"contains", Check{URL: srv.URL + "/", BodyContains: "world"},
			[]string{`body does not contain "world"`}},
		{"json value", Check{URL: srv.URL + "/json", JSON: map[string]any{"data.id": 7, "data.name": "x"}},
			[]string{"json data.id is 42, want 7", `json data.name is "bench", want "x"`}},
		{"json missing", Check{URL: srv.URL + "/json", JSON: map[string]any{"data.nope": 1, "items.5.id": 1, "data.id.x": 1}},
			[]string{`json data.nope: missing ($.data has no key "nope")`, "json items.5.id: missing ($.items has 2 elements, no index 5)", "json data.id.x: missing ($.data.id is 42, not an object or array)"}},
		{"not json", Check{URL: srv.URL + "/notjson", JSON: map[string]any{"a": 1}},
			[]string{"body is not JSON: invalid character", `body "<html>"`}},
		{"two failures", Check{URL: srv.URL + "/", BodyEquals: ptr("bye"), BodyContains: "world"},
			[]string{"body differs", "; body does not contain"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := RunCheck(context.Background(), c.check)
			if err == nil {
				t.Fatal("check passed")
			}
			if !errors.Is(err, ErrCheckFailed) {
				t.Errorf("not ErrCheckFailed: %v", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("not one line: %q", err)
			}
			mustContain(t, err.Error(), c.want...)
		})
	}
}

func TestRunCheckSnippetIs200Bytes(t *testing.T) {
	srv := checkServer(t)
	err := RunCheck(context.Background(), Check{URL: srv.URL + "/fail"})
	var ce *CheckError
	if !errors.As(err, &ce) {
		t.Fatalf("%T %v", err, err)
	}
	if ce.Status != 500 {
		t.Errorf("Status %d", ce.Status)
	}
	want := `"internal error: ` + strings.Repeat("x", 200-len("internal error: ")) + `"…`
	if ce.Body != want {
		t.Errorf("Body %s\nwant %s", ce.Body, want)
	}
}

func TestRunCheckBadInput(t *testing.T) {
	srv := checkServer(t)
	cases := []struct {
		check Check
		want  string
	}{
		{Check{URL: ""}, `url: "": want an http:// or https:// URL`},
		{Check{URL: "ftp://user:hunter2@h/"}, `url: "ftp://user:[redacted]@h/"`},
		{Check{URL: srv.URL, Method: "GE T"}, `method "GE T": not an HTTP method`},
		{Check{URL: srv.URL, Status: 99}, "status 99: want an HTTP status 100-599"},
		{Check{URL: srv.URL, Headers: map[string]string{"Bad Header": "x"}}, `headers: "Bad Header" is not a header name`},
		{Check{URL: srv.URL, JSON: map[string]any{"a..b": 1}}, `json: path "a..b"`},
		{Check{URL: srv.URL + "/json", JSON: map[string]any{"data.id": func() {}}}, "expected value of type func() is not JSON"},
	}
	for _, c := range cases {
		err := RunCheck(context.Background(), c.check)
		if err == nil {
			t.Errorf("%+v: no error", c.check)
			continue
		}
		mustContain(t, err.Error(), c.want)
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error reveals the password: %v", err)
		}
	}
}

func TestRunCheckConnectionRefusedRedacts(t *testing.T) {
	url := "http://user:hunter2@127.0.0.1:" + itoa(freePort(t)) + "/"
	err := RunCheck(context.Background(), Check{URL: url})
	if err == nil {
		t.Fatal("no error")
	}
	mustContain(t, err.Error(), "connection refused", "user:[redacted]@127.0.0.1")
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("error reveals the password: %v", err)
	}
}

func TestCheckRedacted(t *testing.T) {
	c := Check{URL: "https://u:hunter2@h/", Headers: map[string]string{"Authorization": "Bearer hunter2", "X-Api-Key": "hunter2", "Accept": "text/plain"}}
	r := c.Redacted()
	if strings.Contains(r.URL+r.Headers["Authorization"]+r.Headers["X-Api-Key"], "hunter2") || r.Headers["Accept"] != "text/plain" {
		t.Errorf("Redacted: %+v", r)
	}
	if c.Headers["Authorization"] != "Bearer hunter2" {
		t.Error("Redacted modified the original")
	}
}
