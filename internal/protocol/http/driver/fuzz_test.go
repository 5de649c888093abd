package http

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/benchrig/benchrig/internal/fuzzcheck"
)

// stream is one parser's account of a stream: the responses it completed
// and how the stream ended.
type stream struct {
	resps []string // status, bytes, close, body, tooBig of each response
	end   string   // "eof" (the stream ended: io.EOF or cut short) or the counted message
}

func describe(r *response) string {
	return fmt.Sprintf("status %d bytes %d close %v tooBig %v body %q", r.status, r.bytes, r.close, r.tooBig, r.body)
}

// ending classes an error the way the connections count it: both kinds of
// EOF end a keep-alive connection alike (cause), anything else is counted
// by its failure message (which names the malformation's kind) and its text.
func ending(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "eof"
	}
	_, msg := failure(err)
	return msg + ": " + err.Error()
}

// maxResponses bounds the responses read from one input (each takes at
// least 13 bytes, so an input holds fewer anyway).
const maxResponses = 1 << 16

// viaBufio parses data with the goroutine path's parser (readResponse),
// response after response, as a connection does.
func viaBufio(data []byte, keep, head bool) stream {
	br := bufio.NewReaderSize(bytes.NewReader(data), 64<<10)
	var out stream
	var r response
	for len(out.resps) < maxResponses {
		if err := readResponse(br, &r, keep, head); err != nil {
			out.end = ending(err)
			return out
		}
		out.resps = append(out.resps, describe(&r))
	}
	return out
}

// viaSlices parses data with the event loop's parser, fed in the pieces
// cuts makes, keeping the unconsumed bytes as the loop does (pend).
func viaSlices(data []byte, cuts []int, keep, head bool) stream {
	ps := parser{keepBody: keep, head: head}
	var out stream
	var pend []byte
	prev := 0
	for _, c := range append(cuts, len(data)) {
		buf := append(pend, data[prev:c]...)
		prev = c
		for len(buf) > 0 {
			k, done, err := ps.parse(buf)
			if k < 0 || k > len(buf) {
				panic(fmt.Sprintf("parse consumed %d of %d bytes", k, len(buf)))
			}
			buf = buf[k:]
			if err != nil {
				out.end = ending(err)
				return out
			}
			if !done {
				break
			}
			out.resps = append(out.resps, describe(&ps.r))
			if len(out.resps) >= maxResponses {
				return out
			}
		}
		if len(buf) > maxLine {
			panic(fmt.Sprintf("parser left %d bytes pending, over a line", len(buf)))
		}
		pend = append([]byte(nil), buf...)
	}
	done, err := ps.eof()
	if done {
		out.resps = append(out.resps, describe(&ps.r))
		_, err = ps.eof()
	}
	out.end = ending(err)
	return out
}

// FuzzParsers is a differential test of the two HTTP/1.x response parsers:
// for the same bytes, split at seeded random points for the event loop's
// parser, both must complete the same responses (status, bytes consumed,
// close, kept body) and end the same way (EOF, or the same counted error).
// Memory: each input's allocation stays under the fuzzcheck bound (bodies
// are kept up to maxCheckedBody, pend up to a line).
func FuzzParsers(f *testing.F) {
	fuzzcheck.Limit()
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhiHTTP/1.1 204 No Content\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;x=1\r\nhello\r\n0\r\nT: 1\r\n\r\n",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\nto the end",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nabc",
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n",
		"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx",
		"HTTP/1.1 200 OK\r\nContent-Len",
		"SSH-2.0-OpenSSH_9.6\r\n",
	} {
		f.Add([]byte(s), uint64(1), false, false)
		f.Add([]byte(s), uint64(7), true, true)
	}
	f.Fuzz(func(t *testing.T, data []byte, seed uint64, keep, head bool) {
		fuzzcheck.Bound(t, len(data), func() {
			rng := rand.New(rand.NewPCG(seed, seed>>32))
			var cuts []int
			for i := 0; i < len(data) && len(cuts) < 64; i += 1 + rng.IntN(len(data)/4+1) {
				cuts = append(cuts, i)
			}
			a := viaBufio(data, keep, head)
			b := viaSlices(data, cuts, keep, head)
			if strings.Join(a.resps, "\n") != strings.Join(b.resps, "\n") || a.end != b.end {
				t.Fatalf("the parsers disagree (cuts %v):\nbufio: %q\n  end %s\nslice: %q\n  end %s", cuts, a.resps, a.end, b.resps, b.end)
			}
		})
	})
}

// TestHeaderLimits checks the header section's bounds in both parsers:
// 1024 header lines pass, 1025 are refused; a section past 1 MiB (in lines
// each under the line bound) is refused; trailers are bounded the same way.
func TestHeaderLimits(t *testing.T) {
	many := func(n int, value string) string {
		var b strings.Builder
		b.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n")
		for i := 1; i < n; i++ {
			fmt.Fprintf(&b, "X-H%d: %s\r\n", i, value)
		}
		return b.String() + "\r\n"
	}
	trailers := "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n" + strings.Repeat("T: 1\r\n", maxHeaderLines+1) + "\r\n"
	for _, tc := range []struct {
		name, in string
		want     string // "" = one response
	}{
		{"1024 lines", many(maxHeaderLines, "v"), ""},
		{"1025 lines", many(maxHeaderLines+1, "v"), "more than 1024 header lines"},
		{"over 1 MiB", many(40, strings.Repeat("v", 32<<10)), "header section longer than 1 MiB"},
		{"1025 trailers", trailers, "more than 1024 header lines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, p := range []stream{viaBufio([]byte(tc.in), false, false), viaSlices([]byte(tc.in), []int{7, 100, 5000}, false, false)} {
				if tc.want == "" {
					if len(p.resps) != 1 || p.end != "eof" {
						t.Fatalf("got %q end %s", p.resps, p.end)
					}
					continue
				}
				if len(p.resps) != 0 || !strings.HasPrefix(p.end, tc.want+": ") {
					t.Fatalf("got %q end %s, want %q", p.resps, p.end, tc.want)
				}
			}
		})
	}
}
