package resp

import (
	"errors"
	"strconv"
)

// ErrArrayReply is returned by ReadText for an array reply.
var ErrArrayReply = errors.New("resp: array reply where a single value was expected")

// ReadText reads one whole reply for an administrative command (PING, INFO,
// CONFIG SET, SET…), off the hot path: a simple or bulk string as text, an
// integer in decimal, "" for nil. A server error is returned as *Error; an
// array reply is read to its end and reported as ErrArrayReply. It
// allocates the returned string.
func (r *Reader) ReadText() (string, error) {
	d := len(r.stack)
	rep, err := r.ReadReply()
	if err != nil {
		return "", err
	}
	switch rep.Kind {
	case KindError:
		return "", rep.Err()
	case KindInt:
		return strconv.FormatInt(rep.Int, 10), nil
	case KindArray:
		for len(r.stack) > d {
			if err := r.Skip(); err != nil {
				return "", err
			}
		}
		return "", ErrArrayReply
	}
	return string(rep.Data), nil
}
