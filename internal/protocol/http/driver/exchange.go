package http

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"

	"github.com/benchrig/benchrig/internal/driver"
)

// Exchange carries another protocol on this driver's HTTP/2 streams (gRPC
// does): the driver opens the connections (h2c or TLS with ALPN h2),
// refills the streams, keeps time and flow control and counts GOAWAY and
// RST_STREAM as for HTTP; each request's header fields are the Config's
// (method, URL, headers), its body is written by the exchange for the
// request's sequence number, and a complete response is judged by the
// exchange from its status, the header and trailer fields it names, and
// its body.
type Exchange interface {
	// AppendBody appends the body of the request with sequence number seq
	// (driver.Request.Seq) to dst and returns it. Called again for a
	// request sent again: it must give the same bytes.
	AppendBody(dst []byte, seq uint64) []byte
	// Fields names the response header and trailer fields Judge reads,
	// lower case; at most MaxExchangeFields.
	Fields() []string
	// KeepBody says whether Judge reads the body (at most 4 MiB is kept;
	// past that Reply.BodyTooBig).
	KeepBody() bool
	// Judge returns how a complete response ended: driver.OK and "", or
	// another class and a message drawn from a small set (outcomes are
	// counted by message).
	Judge(r Reply) (driver.Class, string)
}

// Resetter is an Exchange that names the outcome of a stream the server
// reset (RST_STREAM) itself, from the frame's error code and the time
// since the request was sent; without it the outcome is an error
// "stream reset by server: CODE".
type Resetter interface {
	Reset(code http2.ErrCode, age time.Duration) (driver.Class, string)
}

// reset is the class and message of a stream reset by the server with
// code, sent at sent.
func (d *Driver) reset(code http2.ErrCode, sent, now int64) (driver.Class, string) {
	if r, ok := d.x.(Resetter); ok {
		return r.Reset(code, time.Duration(now-sent))
	}
	return driver.Error, "stream reset by server: " + code.String()
}

// Streamer is an Exchange that reads each response's body as it arrives,
// DATA frame by DATA frame, into the stream's own state (counting a
// stream's messages without keeping them): Data is called with each
// frame's payload, in order, and Judge gets the state in Reply.State.
type Streamer interface {
	Data(s *StreamState, p []byte)
}

// StreamState is a stream's state as a Streamer keeps it: all zero when
// the stream starts.
type StreamState [6]int64

// MaxExchangeFields bounds Exchange.Fields.
const MaxExchangeFields = 16

// Reply is a complete response as an Exchange judges it.
type Reply struct {
	// Status is the HTTP status.
	Status int
	// Values holds, for each of Exchange.Fields in order, the last value
	// of that field in the response's headers or trailers; "" when absent.
	// Valid during Judge only.
	Values []string
	// Body is the response's body when Exchange.KeepBody; valid during
	// Judge only.
	Body []byte
	// BodyTooBig: the body was over 4 MiB and is not in Body.
	BodyTooBig bool
	// Trailers: a header block followed the body (or ended a
	// headers-only response).
	Trailers bool
	// FirstData is the time from the request's send to the response's
	// first DATA frame (0: none came).
	FirstData time.Duration
	// State is what a Streamer made of the body.
	State StreamState
}

// NewExchange makes a driver whose HTTP/2 streams carry x: cfg must speak
// HTTP/2 (an h2c:// URL, H2C, or an https:// URL with HTTP2) and give no
// body of its own, nor several requests.
func NewExchange(cfg Config, x Exchange) (*Driver, error) {
	switch {
	case x == nil:
		return nil, errors.New("exchange: nil")
	case cfg.Body != "" || len(cfg.Requests) > 0:
		return nil, errors.New("exchange: the body comes from the exchange; the config gives none and one request")
	case len(x.Fields()) > MaxExchangeFields:
		return nil, fmt.Errorf("exchange: %d fields, at most %d", len(x.Fields()), MaxExchangeFields)
	}
	d, err := New(cfg)
	if err != nil {
		return nil, err
	}
	if !d.w.h2 {
		return nil, errors.New("exchange: the config must speak HTTP/2 (h2c:// or h2c, or https:// with http2)")
	}
	d.x, d.xfields, d.xkeep = x, x.Fields(), x.KeepBody()
	d.xs, _ = x.(Streamer)
	// the bodies' lengths vary: no content-length (DATA frames end them)
	p := &d.t.reqs[0]
	p.h2 = slices.DeleteFunc(p.h2, func(f hpack.HeaderField) bool { return f.Name == "content-length" })
	return d, nil
}

// field keeps an exchange's field f of a response r.
func (d *Driver) field(r *response, f hpack.HeaderField) {
	for j, name := range d.xfields {
		if f.Name == name {
			r.vals[j] = f.Value
			return
		}
	}
}

// resetFields readies r's field values for a new stream.
func (d *Driver) resetFields(r *response) {
	if d.x == nil {
		return
	}
	if len(r.vals) != len(d.xfields) {
		r.vals = make([]string, len(d.xfields))
	}
	clear(r.vals)
	r.trailers, r.first, r.xs = false, 0, StreamState{}
}

// data hands a DATA frame's payload p, arrived at now, to the exchange.
func (d *Driver) data(r *response, p []byte, now int64) {
	if r.first == 0 {
		r.first = now
	}
	if d.xs != nil {
		d.xs.Data(&r.xs, p)
	}
}

// judge returns a complete HTTP/2 response's class and message; its
// request was sent at sent.
func (d *Driver) judge(r *response, sent int64) (driver.Class, string) {
	if d.x != nil {
		var first time.Duration
		if r.first != 0 {
			first = time.Duration(r.first - sent)
		}
		return d.x.Judge(Reply{Status: r.status, Values: r.vals, Body: r.body, BodyTooBig: r.tooBig, Trailers: r.trailers,
			FirstData: first, State: r.xs})
	}
	if msg := d.check(r); msg != "" {
		return driver.Unexpected, msg
	}
	return driver.OK, ""
}
