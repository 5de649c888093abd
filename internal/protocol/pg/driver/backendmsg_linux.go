//go:build linux

package pg

import (
	"fmt"
	"strconv"
)

// The backend messages the event loop reads itself: their bound and the
// fields it takes from them.

// tooLong is the error of a backend message longer than the limit.
func tooLong(typ byte, ml int, limit int64) string {
	t := strconv.QuoteRune(rune(typ))
	if name := msgNames[typ]; name != "" {
		t += " (" + name + ")"
	}
	return fmt.Sprintf("backend message %s of %d bytes exceeds pg.max_message %d bytes", t, ml, limit)
}

// unknownMessage is the error of a backend message of a type the
// event loop does not expect.
func unknownMessage(typ byte) string {
	t := strconv.QuoteRune(rune(typ))
	if name := msgNames[typ]; name != "" {
		return "unexpected backend message " + t + " (" + name + ")"
	}
	return "unknown backend message type " + t
}

// msgNames names the backend messages a read meets.
var msgNames = map[byte]string{
	'D': "DataRow", 'T': "RowDescription", 'C': "CommandComplete", 'E': "ErrorResponse",
	'N': "NoticeResponse", 'A': "NotificationResponse", 'S': "ParameterStatus", 'Z': "ReadyForQuery",
	'1': "ParseComplete", '2': "BindComplete", 'n': "NoData", 't': "ParameterDescription",
	'3': "CloseComplete", 'I': "EmptyQueryResponse", 's': "PortalSuspended", 'R': "Authentication",
	'K': "BackendKeyData", 'G': "CopyInResponse", 'H': "CopyOutResponse", 'W': "CopyBothResponse",
	'd': "CopyData", 'c': "CopyDone", 'V': "FunctionCallResponse", 'v': "NegotiateProtocolVersion",
}

// rowsAffected is the row count at the end of a CommandComplete tag
// ("UPDATE 1"), as pgconn's CommandTag.RowsAffected reads it.
func rowsAffected(body []byte) int64 {
	if len(body) > 0 && body[len(body)-1] == 0 {
		body = body[:len(body)-1]
	}
	i := len(body)
	for i > 0 && body[i-1] >= '0' && body[i-1] <= '9' {
		i--
	}
	n, _ := strconv.ParseInt(string(body[i:]), 10, 64)
	return n
}

// errorResponse is an ErrorResponse as shortMsg gives a server error:
// "SQLSTATE <code>: <message>".
func errorResponse(body []byte) string {
	var code, msg string
	for len(body) > 1 {
		f := body[0]
		body = body[1:]
		end := 0
		for end < len(body) && body[end] != 0 {
			end++
		}
		switch f {
		case 'C':
			code = string(body[:end])
		case 'M':
			msg = string(body[:end])
		}
		if end < len(body) {
			end++
		}
		body = body[end:]
	}
	return "SQLSTATE " + code + ": " + msg
}
