package http

import (
	"bytes"
	"time"

	"github.com/benchrig/benchrig/internal/calibrate"
	"github.com/benchrig/benchrig/internal/driver"
	http "github.com/benchrig/benchrig/internal/protocol/http/driver"
)

func init() {
	calibrate.Register(string(Key), calibrate.NullPeer{
		New: func() calibrate.Responder { return httpNull{} },
		Driver: func(addr string) (driver.Driver, error) {
			return http.New(http.Config{URL: "http://" + addr + "/", Method: "GET", Timeout: 5 * time.Second, DialTimeout: 5 * time.Second})
		},
	})
}

// httpNull answers every HTTP/1.1 request (a request head without a body,
// as the calibration's GET is) with one fixed 200 response.
type httpNull struct{}

var httpResponse = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n\r\nok")

func (httpNull) Respond(in []byte) ([]byte, int, error) {
	var out []byte
	used := 0
	for {
		i := bytes.Index(in[used:], []byte("\r\n\r\n"))
		if i < 0 {
			return out, used, nil
		}
		used += i + 4
		out = append(out, httpResponse...)
	}
}
