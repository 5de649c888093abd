package resptest

import (
	"bytes"
	"strconv"

	"github.com/benchrig/benchrig/internal/resp"
)

// connState is what the server remembers about one connection.
type connState struct {
	authed bool
}

// Replies shared with redis, so clients see the same text.
const (
	msgNoAuth    = "NOAUTH Authentication required."
	msgWrongPass = "WRONGPASS invalid username-password pair or user is disabled."
	msgNoPass    = "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
)

// exec appends the reply to one command to out. quit is true when the
// connection should be closed after the reply is written.
func (s *Server) exec(st *connState, args [][]byte, out []byte) (_ []byte, quit bool) {
	name := args[0]
	switch {
	case is(name, "AUTH"):
		return s.auth(st, args, out), false
	case is(name, "QUIT"):
		return resp.AppendSimpleString(out, "OK"), true
	case !st.authed:
		return resp.AppendError(out, msgNoAuth), false
	case is(name, "PING"):
		switch len(args) {
		case 1:
			return resp.AppendSimpleString(out, "PONG"), false
		case 2:
			return resp.AppendBulk(out, args[1]), false
		}
	case is(name, "GET"):
		if len(args) == 2 {
			return s.appendValue(out, args[1]), false
		}
	case is(name, "MGET"):
		if m := s.opts.MaxMGETKeys; m > 0 && len(args)-1 > m {
			// as a server that bounds its replies answers
			return resp.AppendError(out, "ERR response exceeds limit"), false
		}
		if len(args) >= 2 {
			out = resp.AppendArrayHeader(out, len(args)-1)
			for _, k := range args[1:] {
				out = s.appendValue(out, k)
			}
			return out, false
		}
	case is(name, "SET"):
		if len(args) == 3 {
			s.mu.Lock()
			s.data[string(args[1])] = append([]byte(nil), args[2]...)
			s.mu.Unlock()
			return resp.AppendSimpleString(out, "OK"), false
		}
	case is(name, "DEL"):
		if len(args) >= 2 {
			n := int64(0)
			s.mu.Lock()
			for _, k := range args[1:] {
				if _, ok := s.data[string(k)]; ok {
					delete(s.data, string(k))
					n++
				}
			}
			s.mu.Unlock()
			return resp.AppendInt(out, n), false
		}
	case is(name, "INCR"):
		if len(args) == 2 {
			return s.incr(out, args[1]), false
		}
	default:
		return resp.AppendError(out, "ERR unknown command '"+printable(name)+"'"), false
	}
	return resp.AppendError(out, "ERR wrong number of arguments for '"+printable(bytes.ToLower(name))+"' command"), false
}

// auth answers AUTH password or AUTH user password (user "default" only).
func (s *Server) auth(st *connState, args [][]byte, out []byte) []byte {
	if len(args) != 2 && len(args) != 3 {
		return resp.AppendError(out, "ERR wrong number of arguments for 'auth' command")
	}
	if s.opts.Password == "" {
		return resp.AppendError(out, msgNoPass)
	}
	pass := args[len(args)-1]
	if len(args) == 3 && string(args[1]) != "default" || string(pass) != s.opts.Password {
		return resp.AppendError(out, msgWrongPass)
	}
	st.authed = true
	return resp.AppendSimpleString(out, "OK")
}

// appendValue appends the value of key as a bulk string, or nil.
func (s *Server) appendValue(out, key []byte) []byte {
	s.mu.Lock()
	v, ok := s.data[string(key)]
	if ok {
		out = resp.AppendBulk(out, v)
	}
	s.mu.Unlock()
	if !ok {
		out = resp.AppendNilBulk(out)
	}
	return out
}

// incr increments the integer stored at key (missing counts as 0).
func (s *Server) incr(out, key []byte) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := int64(0)
	if v, ok := s.data[string(key)]; ok {
		var err error
		if n, err = strconv.ParseInt(string(v), 10, 64); err != nil {
			return resp.AppendError(out, "ERR value is not an integer or out of range")
		}
	}
	n++
	s.data[string(key)] = strconv.AppendInt(nil, n, 10)
	return resp.AppendInt(out, n)
}

// is reports whether a command name equals want, ignoring case.
func is(name []byte, want string) bool {
	return len(name) == len(want) && bytes.EqualFold(name, []byte(want))
}

// printable renders a client-supplied name for an error line: at most 32
// bytes, control characters replaced, so the reply stays one line.
func printable(b []byte) string {
	if len(b) > 32 {
		b = b[:32]
	}
	out := make([]byte, len(b))
	for i, c := range b {
		if c < 0x20 || c == 0x7f {
			c = '?'
		}
		out[i] = c
	}
	return string(out)
}
