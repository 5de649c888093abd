package resp

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/load"
	wire "github.com/benchrig/benchrig/internal/resp"
	"github.com/benchrig/benchrig/internal/result"
)

// twiceServer answers PING once and every other command twice: "$2\r\nok\r\n"
// for each, the second copy after delay (0: in the same write).
func twiceServer(t *testing.T, delay time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				rd := wire.NewReader(nc, wire.Limits{})
				var args [][]byte
				for {
					if args, err = rd.ReadCommand(args); err != nil {
						return
					}
					if strings.EqualFold(string(args[0]), "PING") {
						nc.Write([]byte("+PONG\r\n"))
						continue
					}
					if delay == 0 {
						nc.Write([]byte("$2\r\nok\r\n$2\r\nok\r\n"))
						continue
					}
					nc.Write([]byte("$2\r\nok\r\n"))
					time.Sleep(delay)
					nc.Write([]byte("$2\r\nok\r\n"))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// A server that answers every command twice: the second reply arrives with
// no request outstanding, a framing error in every mode — never "0 errors,
// HEALTHY" in a closed loop, never "the client could not keep up" at a
// rate (issue 26, item 5).
func TestRepliesSentTwiceAreFramingErrors(t *testing.T) {
	for _, delay := range []time.Duration{0, 5 * time.Millisecond} {
		for _, m := range []struct {
			name string
			lc   load.Config
		}{
			{"closed", load.Config{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 1}}},
			{"closed pipelined", load.Config{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 4}}},
			{"rate", load.Config{EngineConfig: result.EngineConfig{Connections: 2, Pipeline: 1, Rate: 200}}},
		} {
			t.Run(m.name+"/"+delay.String(), func(t *testing.T) {
				d := newDriver(t, Config{Addr: twiceServer(t, delay), Command: CommandGET, Timeout: 2 * time.Second})
				e, err := load.New(m.lc, d)
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := e.Open(ctx); err != nil {
					t.Fatal(err)
				}
				defer e.Close()
				res, err := e.Run(ctx, load.Window{Duration: 500 * time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				if n := res.Messages["error: "+msgUnsolicited]; n == 0 || res.Errors == 0 {
					t.Errorf("%d ok, %d errors %v: want the replies with no request outstanding counted", res.Requests, res.Errors, res.Messages)
				}
			})
		}
	}
}
