package http

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

// parsed is what a parser made of one response, for comparisons.
type parsed struct {
	status int
	bytes  int64
	close  bool
	body   string
}

// sliceParse feeds stream to the slice parser in pieces cut at the given
// offsets, as reads would deliver them, and returns the responses and the
// first error.
func sliceParse(stream string, cuts []int, keep, head bool) ([]parsed, error) {
	ps := &parser{keepBody: keep, head: head}
	var out []parsed
	var pend []byte
	prev := 0
	feed := func(chunk string) error {
		pend = append(pend, chunk...)
		for {
			n, done, err := ps.parse(pend)
			pend = pend[n:]
			if err != nil {
				return err
			}
			if !done {
				return nil
			}
			out = append(out, parsed{ps.r.status, ps.r.bytes, ps.r.close, string(ps.r.body)})
			if len(pend) == 0 {
				return nil
			}
		}
	}
	for _, c := range append(cuts, len(stream)) {
		if err := feed(stream[prev:c]); err != nil {
			return out, err
		}
		prev = c
	}
	done, err := ps.eof()
	if done {
		out = append(out, parsed{ps.r.status, ps.r.bytes, ps.r.close, string(ps.r.body)})
		return out, nil
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return out, err
}

// bufioParse parses the same stream with the blocking driver's parser.
func bufioParse(stream string, keep, head bool) ([]parsed, error) {
	br := bufio.NewReaderSize(strings.NewReader(stream), 64<<10)
	var out []parsed
	var r response
	for {
		err := readResponse(br, &r, keep, head)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, parsed{r.status, r.bytes, r.close, string(r.body)})
	}
}

var parserCases = []struct {
	name    string
	stream  string
	head    bool
	n       int    // responses expected
	errText string // "" when the stream is valid
}{
	{name: "content-length", stream: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", n: 1},
	{name: "two pipelined", stream: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 404 Not Found\r\ncontent-length: 3\r\n\r\nnop", n: 2},
	{name: "chunked with extension and trailer", stream: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n9;x=y\r\npart one,\r\n8\r\npart two\r\n0\r\nX-T: 1\r\n\r\n", n: 1},
	{name: "connection close", stream: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok", n: 1},
	{name: "http/1.0 keep-alive", stream: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 1\r\n\r\nx", n: 1},
	{name: "read to close", stream: "HTTP/1.0 200 OK\r\n\r\nuntil the end", n: 1},
	{name: "204 and 304 without body", stream: "HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n", n: 2},
	{name: "head", stream: "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", head: true, n: 2},
	{name: "1xx then response", stream: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", n: 1},
	{name: "bare LF lines", stream: "HTTP/1.1 200 OK\nContent-Length: 1\n\nx", n: 1},
	{name: "not http", stream: "-ERR unknown command 'GET'\r\n", errText: "want an HTTP/1.x status line"},
	{name: "bad status", stream: "HTTP/1.1 2x0 OK\r\n\r\n", errText: "bad status code"},
	{name: "bad header", stream: "HTTP/1.1 200 OK\r\nnocolon\r\n\r\n", errText: "bad header line"},
	{name: "bad length", stream: "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", errText: "bad Content-Length"},
	{name: "bad chunk", stream: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", errText: "bad chunk size"},
	{name: "cut body", stream: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhel", errText: "unexpected EOF"},
	{name: "cut headers", stream: "HTTP/1.1 200 OK\r\nContent-Le", errText: "unexpected EOF"},
	{name: "cut chunked", stream: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab", errText: "unexpected EOF"},
	// framing violations (issue 17): both parsers refuse them alike
	{name: "conflicting Content-Length", stream: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 6\r\n\r\nhello\n", errText: "conflicting Content-Length: 2 and 6"},
	{name: "Content-Length with chunked", stream: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", errText: "Content-Length with chunked Transfer-Encoding"},
	{name: "chunked then Content-Length", stream: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n2\r\nok\r\n0\r\n\r\n", errText: "Content-Length with chunked Transfer-Encoding"},
	{name: "repeated equal Content-Length", stream: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\ncontent-length: 2\r\n\r\nok", n: 1},
}

func TestParserMatchesBufioAtEverySplit(t *testing.T) {
	for _, tc := range parserCases {
		for _, keep := range []bool{false, true} {
			want, wantErr := bufioParse(tc.stream, keep, tc.head)
			if len(want) != tc.n || (wantErr == nil) != (tc.errText == "") {
				t.Fatalf("%s: bufio parser gave %d responses, %v; the case expects %d, %q", tc.name, len(want), wantErr, tc.n, tc.errText)
			}
			// every single cut, and the stream delivered byte by byte
			splits := [][]int{nil}
			for i := 1; i < len(tc.stream); i++ {
				splits = append(splits, []int{i})
			}
			var each []int
			for i := 1; i < len(tc.stream); i++ {
				each = append(each, i)
			}
			splits = append(splits, each)
			for _, cuts := range splits {
				got, err := sliceParse(tc.stream, cuts, keep, tc.head)
				if tc.errText != "" {
					if err == nil || !strings.Contains(err.Error(), tc.errText) {
						t.Errorf("%s cut at %v: error %v, want one containing %q", tc.name, cuts, err, tc.errText)
					}
					continue
				}
				if err != nil {
					t.Errorf("%s cut at %v: %v", tc.name, cuts, err)
					continue
				}
				if len(got) != len(want) {
					t.Errorf("%s cut at %v: %d responses, want %d", tc.name, cuts, len(got), len(want))
					continue
				}
				for i := range got {
					if got[i] != want[i] {
						t.Errorf("%s cut at %v: response %d = %+v, bufio parser says %+v", tc.name, cuts, i, got[i], want[i])
					}
				}
			}
		}
	}
}

func TestParserLongLineAndBodyLimit(t *testing.T) {
	long := "HTTP/1.1 200 OK\r\nX: " + strings.Repeat("a", maxLine) + "\r\n\r\n"
	if _, err := sliceParse(long, nil, false, false); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("long header line: %v", err)
	}
	big := "HTTP/1.1 200 OK\r\nContent-Length: " + itoa(maxCheckedBody+1) + "\r\n\r\n" + strings.Repeat("b", maxCheckedBody+1)
	ps := &parser{keepBody: true}
	n, done, err := ps.parse([]byte(big))
	if err != nil || !done || n != len(big) || !ps.r.tooBig || ps.r.bytes != int64(len(big)) {
		t.Errorf("big body: n=%d done=%v err=%v tooBig=%v", n, done, err, ps.r.tooBig)
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
