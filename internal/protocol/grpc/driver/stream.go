package grpc

import (
	"sync/atomic"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/protocol/grpc/message"
	http "github.com/benchrig/benchrig/internal/protocol/http/driver"
)

// streamExchange is a call whose answer is a stream of messages (server
// streaming, bidirectional): the messages are counted as their DATA
// frames arrive (http.Streamer), never kept, and the call ends with its
// trailers. Its counters are the driver's grpc_* statistics.
type streamExchange struct {
	*exchange
	wantMessages int64 // 0: any number

	calls, withMessages, received, receivedBytes, firstNS atomic.Int64
}

// The stream's state (http.StreamState) as Data keeps it.
const (
	sMessages   = iota // whole messages read
	sBytes             // their payload bytes
	sRemain            // payload bytes of the current message still to come
	sPrefix            // bytes of the next message's 5-byte prefix read (0–4); -1 after a framing error
	sLen               // the length the prefix is giving
	sCompressed        // messages flagged compressed
)

var _ http.Streamer = (*streamExchange)(nil)

// Data walks the messages of a DATA frame's payload: prefixes (flag 0 or
// 1, a length up to message.MaxMessage) and payloads, across frames.
func (x *streamExchange) Data(s *http.StreamState, p []byte) {
	for len(p) > 0 && s[sPrefix] >= 0 {
		if s[sRemain] > 0 {
			n := min(int64(len(p)), s[sRemain])
			s[sRemain] -= n
			s[sBytes] += n
			p = p[n:]
			if s[sRemain] == 0 {
				s[sMessages]++
			}
			continue
		}
		b := int64(p[0])
		p = p[1:]
		switch i := s[sPrefix]; {
		case i == 0 && b > 1:
			s[sPrefix] = -1
			return
		case i == 0:
			s[sCompressed] += b
			s[sPrefix], s[sLen] = 1, 0
		case i < 4:
			s[sLen] = s[sLen]<<8 | b
			s[sPrefix]++
		default:
			n := s[sLen]<<8 | b
			if n > message.MaxMessage {
				s[sPrefix] = -1
				return
			}
			s[sPrefix] = 0
			if n == 0 {
				s[sMessages]++
			} else {
				s[sRemain] = n
			}
		}
	}
}

// KeepBody: a stream's messages are counted, not kept.
func (x *streamExchange) KeepBody() bool { return false }

// Judge implements http.Exchange: the head as for a unary call, then the
// stream's framing (whole messages, none compressed) and its message
// count against the expected one.
func (x *streamExchange) Judge(r http.Reply) (driver.Class, string) {
	s := &r.State
	x.calls.Add(1)
	if s[sMessages] > 0 {
		x.withMessages.Add(1)
		x.received.Add(s[sMessages])
		x.receivedBytes.Add(s[sBytes])
		x.firstNS.Add(int64(r.FirstData))
	}
	if class, msg, done := x.head(r); done {
		return class, msg
	}
	switch {
	case s[sPrefix] != 0 || s[sRemain] != 0:
		return driver.Error, msgFraming
	case s[sCompressed] > 0 && !x.gzip:
		return driver.Error, msgCompressed
	case x.wantMessages > 0 && s[sMessages] != x.wantMessages:
		return driver.Unexpected, msgMessageCount
	}
	return driver.OK, ""
}

// msgMessageCount: a stream answered with another number of messages
// than expect messages says.
const msgMessageCount = "response messages differ from expect messages"

// stats are the stream counters, cumulative (a sample records their
// deltas over the load window).
func (x *streamExchange) stats(m map[string]float64) {
	m["grpc_calls"] = float64(x.calls.Load())
	m["grpc_calls_with_messages"] = float64(x.withMessages.Load())
	m["grpc_messages_received"] = float64(x.received.Load())
	m["grpc_message_bytes_received"] = float64(x.receivedBytes.Load())
	m["grpc_first_message_ms_total"] = float64(x.firstNS.Load()) / 1e6
}
