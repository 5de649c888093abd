package grpc

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"

	"github.com/benchrig/benchrig/internal/driver"
	"github.com/benchrig/benchrig/internal/protocol/grpc/message"
	http "github.com/benchrig/benchrig/internal/protocol/http/driver"
	"github.com/benchrig/benchrig/internal/textclip"
	"github.com/benchrig/benchrig/internal/workload"
)

// exchange is a unary call as the HTTP/2 driver carries it: the request
// message for each sequence number, and the verdict on each response.
// Shared by every connection: safe for concurrent use.
type exchange struct {
	fixed []byte            // the one message (no {id}), prefixed
	tmpl  *message.Template // a message with {id}
	wl    *workload.Workload
	msgs  [][]byte // a data file's messages, sent in turn
	// perCall is the request messages of a call (a client stream's
	// count; else 1)
	perCall int
	// gzip: request messages go compressed (fixed and msgs already are),
	// compressed answers are accepted
	gzip bool

	deadline time.Duration // each call's (0: none)
	want     int           // the grpc-status that counts as success
	wantName string
	expect   *message.Expect

	// first holds, per status code 0–16, the outcome message of that code:
	// its name and the first grpc-message the server gave with it, so
	// that a run's errors are counted by code.
	first [17]atomic.Pointer[string]
}

// The fields of a response the verdict reads (http.Exchange.Fields).
const (
	fStatus = iota
	fMessage
	fContentType
)

var fields = []string{"grpc-status", "grpc-message", "content-type"}

// Outcome messages (counted by message).
const (
	msgNoTrailers  = "no trailers: the response ended without grpc-status"
	msgNoStatus    = "no grpc-status in the trailers"
	msgBadStatus   = "malformed grpc-status"
	msgFraming     = "malformed gRPC message framing"
	msgCompressed  = "compressed response message, none asked for"
	msgNoMessage   = "OK without a response message"
	msgTwoMessages = "more than one response message to a unary call"
	msgTooBig      = "response message over 4 MiB"
	msgGunzip      = "compressed response message does not decompress (gzip)"
)

func (x *exchange) AppendBody(dst []byte, seq uint64) []byte {
	switch {
	case x.msgs != nil:
		for i := range x.perCall {
			dst = append(dst, x.msgs[(seq*uint64(x.perCall)+uint64(i))%uint64(len(x.msgs))]...)
		}
		return dst
	case x.tmpl != nil:
		var kb [1]int64
		_, keys := x.wl.Keys(seq, kb[:0])
		id := int64(0)
		if len(keys) > 0 {
			id = keys[0]
		}
		if !x.gzip {
			for range x.perCall {
				dst = x.tmpl.Append(dst, id)
			}
			return dst
		}
		b := scratch.Get().(*[]byte)
		*b = x.tmpl.Append((*b)[:0], id)
		for range x.perCall {
			dst = message.Gzip(dst, *b, true)
		}
		scratch.Put(b)
		return dst
	}
	return append(dst, x.fixed...)
}

// scratch holds a message before it is compressed.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

func (x *exchange) Fields() []string { return fields }

// KeepBody: the response message's framing is always checked.
func (x *exchange) KeepBody() bool { return true }

// Judge implements http.Exchange: the HTTP status, the content type, the
// trailers' grpc-status against the expected one, the response's
// framing (one message for a unary call), and the expected message.
func (x *exchange) Judge(r http.Reply) (driver.Class, string) {
	if class, msg, done := x.head(r); done {
		return class, msg
	}
	if r.BodyTooBig {
		return driver.Error, msgTooBig
	}
	n, compressed := 0, false
	var msg []byte
	err := message.Split(r.Body, message.MaxMessage, func(c bool, m []byte) error {
		n++
		compressed = compressed || c
		msg = m
		return nil
	})
	switch {
	case err != nil:
		return driver.Error, msgFraming
	case compressed && !x.gzip:
		return driver.Error, msgCompressed
	case n == 0:
		return driver.Unexpected, msgNoMessage
	case n > 1:
		return driver.Unexpected, msgTwoMessages
	}
	if x.expect != nil {
		if compressed {
			var err error
			if msg, err = message.Gunzip(nil, msg, message.MaxMessage); err != nil {
				return driver.Error, msgGunzip
			}
		}
		if why := x.expect.Check(msg); why != "" {
			return driver.Unexpected, why
		}
	}
	return driver.OK, ""
}

// head judges what a response says before its messages: the HTTP status,
// the content type, the trailers' grpc-status against the expected one.
// done: the verdict is given (a failure, or an expected status other
// than OK, which has no message to check).
func (x *exchange) head(r http.Reply) (class driver.Class, msg string, done bool) {
	if r.Status != 200 {
		return driver.Error, httpStatus(r.Status), true
	}
	if ct := r.Values[fContentType]; ct != "application/grpc" && !strings.HasPrefix(ct, "application/grpc+") && !strings.HasPrefix(ct, "application/grpc;") {
		return driver.Error, "not a gRPC response: content-type " + strconv.Quote(textclip.Cut(ct, 40)), true
	}
	if !r.Trailers {
		return driver.Error, msgNoTrailers, true
	}
	st := r.Values[fStatus]
	if st == "" {
		return driver.Error, msgNoStatus, true
	}
	name, ok := message.CodeName(st)
	if !ok {
		return driver.Error, msgBadStatus, true
	}
	code, _ := strconv.Atoi(st)
	if code != x.want {
		switch {
		case code == 0:
			return driver.Unexpected, "OK, want " + x.wantName, true
		case x.want == 0:
			return driver.Error, x.codeMsg(code, name, r.Values[fMessage]), true
		}
		return driver.Unexpected, x.codeMsg(code, name, r.Values[fMessage]), true
	}
	return driver.OK, "", code != 0
}

// codeMsg is the outcome message of status code: its name and the first
// grpc-message received with it (kept from then on, so that outcomes are
// counted by code).
func (x *exchange) codeMsg(code int, name, raw string) string {
	if code < 0 || code >= len(x.first) {
		return name
	}
	if p := x.first[code].Load(); p != nil {
		return *p
	}
	s := name
	if raw != "" {
		s += ": " + message.DecodeMessage(raw)
	}
	x.first[code].CompareAndSwap(nil, &s)
	return *x.first[code].Load()
}

// Reset implements http.Resetter: a stream the server reset ends with the
// gRPC code the reset's HTTP/2 error code maps to (as grpc-go's client
// maps it), DEADLINE_EXCEEDED for a CANCEL after the call's deadline.
func (x *exchange) Reset(code http2.ErrCode, age time.Duration) (driver.Class, string) {
	name := "INTERNAL"
	switch code {
	case http2.ErrCodeCancel:
		name = "CANCELLED"
		if x.deadline > 0 && age >= x.deadline {
			return driver.Error, "DEADLINE_EXCEEDED (stream reset by server: CANCEL after the deadline)"
		}
	case http2.ErrCodeRefusedStream:
		name = "UNAVAILABLE"
	case http2.ErrCodeFlowControl, http2.ErrCodeEnhanceYourCalm:
		name = "RESOURCE_EXHAUSTED"
	case http2.ErrCodeInadequateSecurity:
		name = "PERMISSION_DENIED"
	}
	return driver.Error, name + " (stream reset by server: " + code.String() + ")"
}

// httpStatus is a response whose HTTP status is not 200, as the gRPC
// code the specification maps it to (HTTP to gRPC status code mapping).
func httpStatus(st int) string {
	code := "UNKNOWN"
	switch st {
	case 400:
		code = "INTERNAL"
	case 401:
		code = "UNAUTHENTICATED"
	case 403:
		code = "PERMISSION_DENIED"
	case 404:
		code = "UNIMPLEMENTED"
	case 429, 502, 503, 504:
		code = "UNAVAILABLE"
	}
	return code + " (HTTP status " + strconv.Itoa(st) + ")"
}
