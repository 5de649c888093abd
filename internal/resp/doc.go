// Package resp is a RESP2 (REdis Serialization Protocol, version 2) codec in
// the manner of pgx's pgproto3: it knows the wire format and nothing of
// connections, pacing or drivers.
//
// The client side appends commands into a caller-owned, reused []byte with
// the Append… functions and parses replies with a Reader. The Reader parses
// one reply element per ReadReply call and returns bulk data as a slice into
// its own buffer, valid until the next call on the Reader, so a steady-state
// round trip (for example MGET of 64 keys) allocates nothing. Inside an
// array, ReadBuffered parses the bulk strings that are already buffered in
// one pass (an MGET reply's hot path), leaving anything else to ReadReply.
//
// Hostile or confused peers are bounded by Limits: a declared length beyond a
// limit is an error before any allocation, and the buffer grows only as data
// actually arrives. Malformed input yields an error that wraps ErrProtocol and
// says what byte was expected and what was seen. Server error replies
// ("-ERR …") are data: ReadReply returns them as a Reply of KindError, and
// Reply.Err converts one into an *Error when the caller wants a Go error.
//
// The server side (Reader.ReadCommand and the reply Append… functions) serves
// the in-repo test server in package resptest.
//
// Example:
//
//	buf := resp.AppendCommandString(nil, "MGET", "item:1", "item:2")
//	if _, err := conn.Write(buf); err != nil {
//		return err
//	}
//	rd := resp.NewReader(conn, resp.Limits{})
//	hdr, err := rd.ReadReply()
//	if err != nil {
//		return err
//	}
//	for i := 0; i < hdr.Len; i++ {
//		v, err := rd.ReadReply()
//		if err != nil {
//			return err
//		}
//		fmt.Println(v.Nil, string(v.Data))
//	}
package resp
