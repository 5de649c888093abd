package resp

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
)

// ErrProtocol is wrapped by every error that reports malformed input: a reply
// or command that does not follow RESP2. The connection it came from is out of
// step and cannot be used again.
var ErrProtocol = errors.New("resp: protocol error")

// ErrLimit is wrapped (together with ErrProtocol) by errors that report input
// exceeding one of the Reader's Limits.
var ErrLimit = errors.New("resp: limit exceeded")

// ProtocolError describes malformed or over-limit input. It wraps ErrProtocol,
// and ErrLimit when a limit was exceeded.
type ProtocolError struct {
	// Offset is the number of bytes the Reader had consumed when the problem
	// was found (the position of the offending reply line or element).
	Offset int64
	// Msg says what was expected and what was seen.
	Msg string
	// Limit is true when the input exceeded a configured limit.
	Limit bool
}

// Error implements error.
func (e *ProtocolError) Error() string {
	return "resp: " + e.Msg + " (at byte " + strconv.FormatInt(e.Offset, 10) + ")"
}

// Unwrap returns ErrProtocol, plus ErrLimit for limit errors.
func (e *ProtocolError) Unwrap() []error {
	if e.Limit {
		return []error{ErrProtocol, ErrLimit}
	}
	return []error{ErrProtocol}
}

// Error is a server error reply ("-ERR unknown command", "-WRONGPASS …"). It
// is returned by Reply.Err for callers that want a Go error; the hot path reads
// the reply's Data instead.
type Error struct {
	// Msg is the full error line without the leading '-', e.g.
	// "NOAUTH Authentication required.".
	Msg string
}

// Error implements error. It returns Msg as the server sent it, as redis
// clients conventionally do; callers add their own context.
func (e *Error) Error() string { return e.Msg }

// Prefix returns the error code: the first word of Msg when it is all upper
// case ("ERR", "NOAUTH", "WRONGPASS", "WRONGTYPE"), else "".
func (e *Error) Prefix() string { return string(ErrorPrefix([]byte(e.Msg))) }

// ErrorPrefix returns the error code of a server error line: its first word
// when that word is all upper-case letters, digits or '_'; else nil. It does
// not allocate: the result is a sub-slice of msg.
func ErrorPrefix(msg []byte) []byte {
	end := bytes.IndexByte(msg, ' ')
	if end < 0 {
		end = len(msg)
	}
	if end == 0 {
		return nil
	}
	for _, c := range msg[:end] {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return nil
		}
	}
	return msg[:end]
}

// protoErr builds a *ProtocolError at the reader's current offset.
func (r *Reader) protoErr(format string, args ...any) error {
	return &ProtocolError{Offset: r.consumed, Msg: fmt.Sprintf(format, args...)}
}

// limitErr builds a *ProtocolError for an exceeded limit.
func (r *Reader) limitErr(format string, args ...any) error {
	return &ProtocolError{Offset: r.consumed, Msg: fmt.Sprintf(format, args...), Limit: true}
}

// DescribeByte renders an unexpected byte for an error message, with a hint
// about what kind of peer sends such a byte.
func DescribeByte(c byte) string {
	q := strconv.QuoteRune(rune(c))
	if c >= 0x80 {
		q = fmt.Sprintf("0x%02x", c)
	}
	switch c {
	case 'H':
		return q + " (is the peer speaking HTTP?)"
	case '_', ',', '#', '!', '=', '(', '%', '~', '>', '|':
		return q + " (a RESP3 type; this client speaks RESP2)"
	case 0x15, 0x16:
		return q + " (is the peer speaking TLS?)"
	}
	return q
}

// DescribeBytes renders up to a few bytes seen where a terminator was
// expected.
func DescribeBytes(b []byte) string {
	if len(b) > 8 {
		b = b[:8]
	}
	return strconv.Quote(string(b))
}
