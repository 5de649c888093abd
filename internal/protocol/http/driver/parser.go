package http

import (
	"bytes"
	"fmt"
	"io"
)

// maxLine bounds a status, header or chunk-size line, as the bufio parser's
// 64 KiB buffer does.
const maxLine = 64 << 10

// parseState is where a parser stands inside a response.
type parseState uint8

const (
	psStatus    parseState = iota // expecting a status line
	psHeaders                     // header lines up to the blank line
	psBody                        // Content-Length body: left bytes to go
	psChunkSize                   // a chunk-size line
	psChunkData                   // chunk data: left bytes to go
	psChunkEnd                    // the CRLF after chunk data
	psTrailers                    // trailer lines up to the blank line
	psToEOF                       // unframed body: runs to the end of the stream
)

// parser is a resumable HTTP/1.x response parser over byte slices: it takes
// whatever bytes have arrived, consumes what it can and keeps its place, so
// an event loop can feed it each read as it comes. It accepts what the bufio
// parser (readResponse) accepts, with the same messages, and fills the same
// response; it could replace it behind a reader.
type parser struct {
	keepBody bool // keep the body in r.body for a check
	head     bool // the requests are HEAD: responses have no body

	st      parseState
	started bool // bytes of the current response were consumed
	left    int64
	length  int64
	chunked bool
	hb      headerBounds // of the header or trailer section being read
	r       response
}

// parse consumes bytes of the current response from p. It returns how many
// bytes it consumed and whether the response is complete (then p.r holds it
// until the next call). When it returns done=false it consumed everything it
// could: the caller keeps p[n:] (at most a partial line) and calls again with
// those bytes followed by the next ones. An error means the stream is not
// HTTP/1.x and cannot be resynchronised.
func (ps *parser) parse(p []byte) (n int, done bool, err error) {
	if !ps.started {
		ps.r.bytes, ps.r.close, ps.r.tooBig = 0, false, false
		ps.r.body = ps.r.body[:0]
		ps.st = psStatus
		ps.started = true
	}
	r := &ps.r
	for {
		switch ps.st {
		case psBody, psChunkData:
			k := int64(len(p) - n)
			if k > ps.left {
				k = ps.left
			}
			if ps.keepBody {
				keepBytes(r, p[n:n+int(k)])
			}
			n += int(k)
			r.bytes += k
			ps.left -= k
			if ps.left > 0 {
				return n, false, nil
			}
			if ps.st == psChunkData {
				ps.st = psChunkEnd
				continue
			}
			return n, ps.finish(), nil
		case psToEOF:
			if ps.keepBody {
				keepBytes(r, p[n:])
			}
			r.bytes += int64(len(p) - n)
			return len(p), false, nil
		}
		// the line-based states
		i := bytes.IndexByte(p[n:], '\n')
		if i < 0 && len(p)-n >= maxLine || i >= maxLine {
			return n, false, fmt.Errorf("%w: a header line is longer than %d bytes", errMalformed, maxLine)
		}
		if i < 0 {
			return n, false, nil
		}
		raw := p[n : n+i+1]
		n += i + 1
		r.bytes += int64(len(raw))
		line := bytes.TrimRight(raw, "\r\n")
		switch ps.st {
		case psStatus:
			ps.hb = headerBounds{bytes: len(raw)}
		case psHeaders, psTrailers:
			if err := ps.hb.add(len(raw), len(line) > 0); err != nil {
				return n, false, err
			}
		}
		switch ps.st {
		case psStatus:
			if err := parseStatusLine(line, r); err != nil {
				return n, false, err
			}
			ps.length, ps.chunked = -1, false
			ps.st = psHeaders
		case psHeaders:
			if len(line) > 0 {
				if err := parseHeader(line, r, &ps.length, &ps.chunked); err != nil {
					return n, false, err
				}
				continue
			}
			done, err := ps.afterHeaders()
			if err != nil {
				return n, false, err
			}
			if done {
				return n, ps.finish(), nil
			}
		case psChunkSize:
			size, err := parseChunkSize(line)
			if err != nil {
				return n, false, err
			}
			if size == 0 {
				ps.st, ps.hb = psTrailers, headerBounds{}
			} else {
				ps.st, ps.left = psChunkData, size
			}
		case psChunkEnd:
			ps.st = psChunkSize
		case psTrailers:
			if len(line) == 0 {
				return n, ps.finish(), nil
			}
		}
	}
}

// afterHeaders picks the body framing once the headers are in; it reports
// whether the response is complete without a body.
func (ps *parser) afterHeaders() (bool, error) {
	if err := checkFraming(ps.length, ps.chunked); err != nil {
		return false, err
	}
	st := ps.r.status
	switch {
	case st >= 100 && st < 200:
		ps.st = psStatus // informational: the real response follows
		return false, nil
	case ps.head || st == 204 || st == 304:
		return true, nil
	case ps.chunked:
		ps.st = psChunkSize
	case ps.length == 0:
		return true, nil
	case ps.length > 0:
		ps.st, ps.left = psBody, ps.length
	default:
		// no framing: the body runs to the end of the connection.
		ps.r.close = true
		ps.st = psToEOF
	}
	return false, nil
}

func (ps *parser) finish() bool {
	ps.started = false
	return true
}

// eof tells the parser the stream ended. It reports whether that completed
// a response (a body that runs to the end of the connection); otherwise the
// error says the response was cut short (io.ErrUnexpectedEOF), or io.EOF
// when no byte of a response had arrived.
func (ps *parser) eof() (done bool, err error) {
	switch {
	case !ps.started || ps.st == psStatus && ps.r.bytes == 0:
		return false, io.EOF
	case ps.st == psToEOF:
		return ps.finish(), nil
	}
	return false, io.ErrUnexpectedEOF
}

// reset forgets a partial response (the connection was replaced).
func (ps *parser) reset() { ps.started = false }
