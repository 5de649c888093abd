package http

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/benchrig/benchrig/internal/textclip"
)

// maxCheckedBody bounds how much of a body is kept for a body check.
const maxCheckedBody = 4 << 20

// response is what the parser keeps of one response.
type response struct {
	status int
	bytes  int64 // bytes read: status line, headers and body
	close  bool  // the server will close the connection after it
	body   []byte
	tooBig bool // body exceeded maxCheckedBody (not kept)
	// HTTP/2 with an Exchange: its fields' values, and whether a header
	// block came after the first (trailers)
	vals     []string
	trailers bool
	first    int64       // Now() at the first DATA frame
	xs       StreamState // a Streamer's
}

// errMalformed marks a response that is not HTTP/1.x: the connection cannot
// be trusted afterwards.
var errMalformed = errors.New("malformed response")

// Bounds of one response's header section (status line and header lines,
// or the trailer lines of a chunked body), beside the bound of one line
// (maxLine): a server that streams headers without end is refused.
const (
	// maxHeaderLines bounds the header (or trailer) lines of a response.
	maxHeaderLines = 1024
	// maxHeaderBytes bounds the bytes of a header section, as net/http's
	// DefaultMaxHeaderBytes.
	maxHeaderBytes = 1 << 20
)

var (
	// errTooManyHeaders: more than maxHeaderLines header lines.
	errTooManyHeaders = fmt.Errorf("%w: more than %d header lines", errMalformed, maxHeaderLines)
	// errHeadersTooLarge: a header section past maxHeaderBytes.
	errHeadersTooLarge = fmt.Errorf("%w: header section longer than %d bytes (1 MiB)", errMalformed, maxHeaderBytes)
)

// headerBounds counts the lines and bytes of one header section.
type headerBounds struct {
	lines int
	bytes int
}

// add counts one line of k bytes (with its CRLF; a header line when header,
// else the status line or the blank line) and says when a bound is broken.
func (h *headerBounds) add(k int, header bool) error {
	if header {
		h.lines++
	}
	h.bytes += k
	switch {
	case h.lines > maxHeaderLines:
		return errTooManyHeaders
	case h.bytes > maxHeaderBytes:
		return errHeadersTooLarge
	}
	return nil
}

// readResponse parses one response from br. keepBody asks for the body to be
// kept in r.body (reusing its capacity); head says the request was HEAD.
func readResponse(br *bufio.Reader, r *response, keepBody, head bool) error {
	r.bytes, r.close, r.tooBig = 0, false, false
	r.body = r.body[:0]
	for {
		before := r.bytes
		line, err := readLine(br, r)
		if err != nil {
			return err
		}
		hb := headerBounds{bytes: int(r.bytes - before)}
		if err := parseStatusLine(line, r); err != nil {
			return err
		}
		st := r.status
		length, chunked, err := readHeaders(br, r, &hb)
		if err != nil {
			return err
		}
		if st >= 100 && st < 200 {
			continue // informational: the real response follows
		}
		if head || st == 204 || st == 304 {
			return nil
		}
		switch {
		case chunked:
			return readChunked(br, r, keepBody)
		case length >= 0:
			return readBody(br, r, length, keepBody)
		default:
			// no framing: the body runs to the end of the connection.
			r.close = true
			return readToEOF(br, r, keepBody)
		}
	}
}

func readLine(br *bufio.Reader, r *response) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	r.bytes += int64(len(line))
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("%w: a header line is longer than %d bytes", errMalformed, br.Size())
		}
		if err == io.EOF && r.bytes > 0 {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return bytes.TrimRight(line, "\r\n"), nil
}

// readHeaders reads header lines up to the blank line and returns the
// Content-Length (-1 if none) and whether the body is chunked.
func readHeaders(br *bufio.Reader, r *response, hb *headerBounds) (length int64, chunked bool, err error) {
	length = -1
	for {
		before := r.bytes
		line, err := readLine(br, r)
		if err != nil {
			return 0, false, err
		}
		if err := hb.add(int(r.bytes-before), len(line) > 0); err != nil {
			return 0, false, err
		}
		if len(line) == 0 {
			return length, chunked, checkFraming(length, chunked)
		}
		if err := parseHeader(line, r, &length, &chunked); err != nil {
			return 0, false, err
		}
	}
}

// parseStatusLine reads the status code and HTTP version of a status line
// (without its CRLF) into r. Shared by the bufio and the slice parser.
func parseStatusLine(line []byte, r *response) error {
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return fmt.Errorf("%w: want an HTTP/1.x status line, got %q (is the peer an HTTP server?)", errMalformed, clip(line))
	}
	st, ok := atoi3(line[9:12])
	if !ok {
		return fmt.Errorf("%w: bad status code in %q", errMalformed, clip(line))
	}
	r.status = st
	if line[7] == '0' {
		r.close = true // HTTP/1.0 closes unless keep-alive is said
	}
	return nil
}

// parseHeader applies one header line (without its CRLF) to the response's
// framing: Content-Length into *length, chunked Transfer-Encoding into
// *chunked, Connection into r.close. Other headers are ignored.
func parseHeader(line []byte, r *response, length *int64, chunked *bool) error {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return fmt.Errorf("%w: bad header line %q", errMalformed, clip(line))
	}
	name, value := line[:colon], bytes.TrimSpace(line[colon+1:])
	switch {
	case equalFold(name, "content-length"):
		n, err := strconv.ParseInt(string(value), 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: bad Content-Length %q", errMalformed, clip(value))
		}
		if *length >= 0 && *length != n {
			return fmt.Errorf("%w: %d and %d", errConflictingLength, *length, n)
		}
		*length = n
	case equalFold(name, "transfer-encoding"):
		if containsFold(value, "chunked") {
			*chunked = true
		}
	case equalFold(name, "connection"):
		if containsFold(value, "close") {
			r.close = true
		} else if containsFold(value, "keep-alive") {
			r.close = false
		}
	}
	return nil
}

// parseChunkSize reads a chunk-size line (extensions after ';' ignored).
func parseChunkSize(line []byte) (int64, error) {
	if i := bytes.IndexByte(line, ';'); i >= 0 {
		line = line[:i]
	}
	size, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
	if err != nil || size < 0 {
		return 0, fmt.Errorf("%w: bad chunk size %q", errMalformed, clip(line))
	}
	return size, nil
}

func readBody(br *bufio.Reader, r *response, n int64, keep bool) error {
	for n > 0 {
		chunk := n
		if b := int64(br.Buffered()); b > 0 && b < chunk {
			chunk = b
		} else if b == 0 {
			if _, err := br.Peek(1); err != nil {
				return unexpectedEOF(err)
			}
			if b := int64(br.Buffered()); b < chunk {
				chunk = b
			}
		}
		if keep {
			p, _ := br.Peek(int(chunk))
			keepBytes(r, p)
		}
		d, err := br.Discard(int(chunk))
		r.bytes += int64(d)
		n -= int64(d)
		if err != nil {
			return unexpectedEOF(err)
		}
	}
	return nil
}

func readChunked(br *bufio.Reader, r *response, keep bool) error {
	for {
		line, err := readLine(br, r)
		if err != nil {
			return unexpectedEOF(err)
		}
		size, err := parseChunkSize(line)
		if err != nil {
			return err
		}
		if size == 0 {
			var hb headerBounds
			for { // trailers up to the blank line
				before := r.bytes
				t, err := readLine(br, r)
				if err != nil {
					return unexpectedEOF(err)
				}
				if err := hb.add(int(r.bytes-before), len(t) > 0); err != nil {
					return err
				}
				if len(t) == 0 {
					return nil
				}
			}
		}
		if err := readBody(br, r, size, keep); err != nil {
			return err
		}
		if _, err := readLine(br, r); err != nil { // CRLF after the data
			return unexpectedEOF(err)
		}
	}
}

func readToEOF(br *bufio.Reader, r *response, keep bool) error {
	for {
		p, err := br.Peek(1)
		if len(p) == 0 {
			if err == io.EOF {
				return nil
			}
			return err
		}
		n := br.Buffered()
		if keep {
			p, _ = br.Peek(n)
			keepBytes(r, p)
		}
		d, _ := br.Discard(n)
		r.bytes += int64(d)
	}
}

func keepBytes(r *response, p []byte) {
	if len(r.body)+len(p) > maxCheckedBody {
		r.tooBig = true
		return
	}
	r.body = append(r.body, p...)
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

func atoi3(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// equalFold compares an ASCII header name with a lower-case constant.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

func containsFold(b []byte, s string) bool {
	for i := 0; i+len(s) <= len(b); i++ {
		if equalFold(b[i:i+len(s)], s) {
			return true
		}
	}
	return false
}

// clip is a response body as an error quotes it: its first 60 bytes (only
// those are copied: bodies may be large, and errors may be many).
func clip(b []byte) string {
	if len(b) > 64 {
		b = b[:64]
	}
	return textclip.Cut(string(b), 60)
}
