package http

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseTargets(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "body.json"), []byte(`{"a":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, in string
		want     []RequestSpec
		err      string // substring of the error, with file:line
	}{
		{name: "one GET", in: "GET http://127.0.0.1:8080/\n",
			want: []RequestSpec{{Method: "GET", URL: "http://127.0.0.1:8080/"}}},
		{name: "headers, body file, blank line, scheme-less URL, weight", in: "POST http://h:1/a\nContent-Type: application/json\nX-A:  b c \n@body.json\n\n# a comment\nGET h:1/b weight=3\n",
			want: []RequestSpec{
				{Method: "POST", URL: "http://h:1/a", Headers: map[string]string{"Content-Type": "application/json", "X-A": "b c"}, Body: `{"a":1}`, BodyFile: filepath.Join(dir, "body.json")},
				{Method: "GET", URL: "http://h:1/b", Weight: 3}}},
		{name: "a request line starts the next request", in: "GET http://h/a\nHEAD http://h/b\nAccept: */*\nDELETE http://h/c",
			want: []RequestSpec{{Method: "GET", URL: "http://h/a"}, {Method: "HEAD", URL: "http://h/b", Headers: map[string]string{"Accept": "*/*"}}, {Method: "DELETE", URL: "http://h/c"}}},
		{name: "inline body", in: "PUT http://h/x\n@<<END\nline 1\nline 2\nEND\n",
			want: []RequestSpec{{Method: "PUT", URL: "http://h/x", Body: "line 1\nline 2\n"}}},
		{name: "repeated header", in: "GET http://h/\nAccept: a\nAccept: b\n",
			want: []RequestSpec{{Method: "GET", URL: "http://h/", Headers: map[string]string{"Accept": "a, b"}}}},
		{name: "empty", in: "\n# nothing\n", err: "t.txt: no requests"},
		{name: "header before any request", in: "Accept: x\n", err: "t.txt:1: \"Accept: x\": want a request line"},
		{name: "bad header", in: "GET http://h/\nnot a header\n", err: "t.txt:2: \"not a header\": want a header"},
		{name: "header name not a token", in: "GET http://h/\nX\rY: 1\n", err: "t.txt:2: header name \"X\\rY\": want a token"},
		{name: "header value with a control character", in: "GET http://h/\nX-A: 1\x002\n", err: "t.txt:2: header X-A: the value holds a control character"},
		{name: "empty header value", in: "GET http://h/\nX-A:\n", err: "t.txt:2:"},
		{name: "bad URL", in: "\n\nGET ftp://h/\n", err: "t.txt:3: \"ftp://h/\": want http://"},
		{name: "gopher", in: "GET gopher://h/\n", err: "t.txt:1: \"gopher://h/\": want http://, https:// or h2c://"},
		{name: "bad weight", in: "GET http://h/ weight=0\n", err: "t.txt:1: \"weight=0\": want weight=N with N 1–1000000"},
		{name: "extra field", in: "GET http://h/ x y\n", err: "t.txt:1: \"GET http://h/ x y\": want `METHOD URL`"},
		{name: "missing body file", in: "POST http://h/\n@nope.json\n", err: "t.txt:2: body file: open " + filepath.Join(dir, "nope.json")},
		{name: "@ alone", in: "POST http://h/\n@\n", err: "t.txt:2: `@` needs a file name"},
		{name: "line after the body", in: "POST http://h/\n@body.json\nX-A: 1\n", err: "t.txt:3: \"X-A: 1\" after the body"},
		{name: "unterminated inline body", in: "POST http://h/\n@<<END\nabc\n", err: "t.txt:2: inline body `@<<END` never ends"},
		{name: "over-long line", in: "GET http://h/" + strings.Repeat("a", maxTargetLine) + "\n", err: "t.txt:1: line longer than 1024 KiB"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseTargets(strings.NewReader(tc.in), "t.txt", dir)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestLoadTargetsFileAndBodyArg(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "targets.txt")
	if err := os.WriteFile(filepath.Join(dir, "b.txt"), []byte("from a file"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("POST 127.0.0.1:9/\n@b.txt\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reqs, err := LoadTargets(p)
	if err != nil || len(reqs) != 1 || reqs[0].Body != "from a file" || reqs[0].URL != "http://127.0.0.1:9/" {
		t.Fatalf("LoadTargets: %+v, %v", reqs, err)
	}
	if _, err := LoadTargets(filepath.Join(dir, "missing")); err == nil || !strings.Contains(err.Error(), "request file: open") {
		t.Errorf("missing file: %v", err)
	}
	for _, tc := range []struct{ arg, body, file, err string }{
		{arg: "plain", body: "plain"},
		{arg: "@" + filepath.Join(dir, "b.txt"), body: "from a file", file: filepath.Join(dir, "b.txt")},
		{arg: "@@literal", body: "@literal"},
		{arg: "", body: ""},
		{arg: "@", err: "`@` needs a file name"},
		{arg: "@" + filepath.Join(dir, "none"), err: "body file: open"},
	} {
		body, file, err := ReadBodyArg(tc.arg)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ReadBodyArg(%q): error %v, want %q", tc.arg, err, tc.err)
			}
			continue
		}
		if err != nil || body != tc.body || file != tc.file {
			t.Errorf("ReadBodyArg(%q) = %q, %q, %v; want %q, %q", tc.arg, body, file, err, tc.body, tc.file)
		}
	}
}

func TestNormalizeURL(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{in: "localhost:3000/", want: "http://localhost:3000/"},
		{in: "127.0.0.1:18090/", want: "http://127.0.0.1:18090/"},
		{in: "127.0.0.1:18090", want: "http://127.0.0.1:18090/"},
		{in: "localhost", want: "http://localhost/"},
		{in: "localhost:3000/a?b=c", want: "http://localhost:3000/a?b=c"},
		{in: "  http://127.0.0.1:8080/x ", want: "http://127.0.0.1:8080/x"},
		{in: "http://127.0.0.1:8080", want: "http://127.0.0.1:8080/"},
		{in: "[::1]:8080/", want: "http://[::1]:8080/"},
		{in: "https://127.0.0.1", want: "https://127.0.0.1/"},
		{in: "h2c://127.0.0.1:8080/x", want: "h2c://127.0.0.1:8080/x"},
		{in: "ftp://h/", err: "want http://, https:// or h2c://HOST[:PORT]/PATH"},
		{in: "", err: "empty URL"},
		{in: "/path", err: "no host"},
		{in: ":3000/", err: "no host"},
		{in: "local host:3000", err: "a URL has no spaces"},
		{in: "h:99999/", err: "port must be 1–65535"},
		{in: "h:port/", err: "not a URL"},
		{in: "user:secret@h:1/", err: "credentials in the URL"},
		{in: "http://user:secret@h:1/", err: "credentials in the URL"},
		{in: "h:1/#frag", err: "fragment"},
	} {
		got, err := NormalizeURL(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("NormalizeURL(%q) = %q, %v; want an error with %q", tc.in, got, err, tc.err)
			}
			if err != nil && strings.Contains(err.Error(), "secret") {
				t.Errorf("NormalizeURL(%q): the error echoes the password: %v", tc.in, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("NormalizeURL(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
		if _, _, err := ParseURL(got); err != nil {
			t.Errorf("NormalizeURL(%q) = %q, which ParseURL refuses: %v", tc.in, got, err)
		}
	}
}
