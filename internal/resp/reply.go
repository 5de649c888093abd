package resp

// Kind is the type of a RESP2 reply element, named by its leading byte.
type Kind byte

// Reply kinds.
const (
	KindSimple Kind = '+' // simple string: "+OK"
	KindError  Kind = '-' // error: "-ERR unknown command"
	KindInt    Kind = ':' // integer: ":42"
	KindBulk   Kind = '$' // bulk string: "$5\r\nhello", or nil bulk "$-1"
	KindArray  Kind = '*' // array header: "*3", or nil array "*-1"
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case KindSimple:
		return "simple string"
	case KindError:
		return "error"
	case KindInt:
		return "integer"
	case KindBulk:
		return "bulk string"
	case KindArray:
		return "array"
	}
	return "unknown kind " + DescribeByte(byte(k))
}

// Reply is one reply element as read by Reader.ReadReply. For an array it is
// only the header: the Len elements follow as further ReadReply calls.
//
// Data aliases the Reader's buffer and is valid only until the next call on
// the Reader; copy it to keep it.
type Reply struct {
	// Kind is the element's type.
	Kind Kind
	// Nil is true for a nil bulk string ("$-1") or nil array ("*-1").
	Nil bool
	// Int is the value of an integer reply.
	Int int64
	// Len is the element count of an array, or the length of a bulk string.
	Len int
	// Data is the text of a simple string or error (without type byte and
	// CRLF) or the payload of a bulk string.
	Data []byte
}

// IsError reports whether the reply is a server error.
func (r Reply) IsError() bool { return r.Kind == KindError }

// Err returns the reply as an *Error when it is a server error, else nil. It
// allocates; hot paths should inspect Data (and ErrorPrefix) instead.
func (r Reply) Err() error {
	if r.Kind != KindError {
		return nil
	}
	return &Error{Msg: string(r.Data)}
}
