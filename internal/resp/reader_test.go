package resp

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadReplyValid(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []val
	}{
		{"simple", "+OK\r\n", []val{simple("OK")}},
		{"empty simple", "+\r\n", []val{simple("")}},
		{"error", "-ERR unknown command 'FOO'\r\n", []val{errv("ERR unknown command 'FOO'")}},
		{"int", ":42\r\n", []val{intv(42)}},
		{"negative int", ":-7\r\n", []val{intv(-7)}},
		{"max int", ":9223372036854775807\r\n", []val{intv(9223372036854775807)}},
		{"min int", ":-9223372036854775808\r\n", []val{intv(-9223372036854775808)}},
		{"bulk", "$5\r\nhello\r\n", []val{bulk("hello")}},
		{"bulk with CRLF inside", "$4\r\na\r\nb\r\n", []val{bulk("a\r\nb")}},
		{"empty bulk", "$0\r\n\r\n", []val{bulk("")}},
		{"nil bulk", "$-1\r\n", []val{nilBulk()}},
		{"nil array", "*-1\r\n", []val{nilArray()}},
		{"empty array", "*0\r\n", []val{array()}},
		{"mget", "*3\r\n$1\r\na\r\n$-1\r\n$2\r\nbc\r\n", []val{array(bulk("a"), nilBulk(), bulk("bc"))}},
		{"mixed", "*4\r\n+OK\r\n:1\r\n-ERR x\r\n*-1\r\n", []val{array(simple("OK"), intv(1), errv("ERR x"), nilArray())}},
		{"nested", "*2\r\n*2\r\n:1\r\n*1\r\n$1\r\nx\r\n*0\r\n", []val{array(array(intv(1), array(bulk("x"))), array())}},
		{"pipelined", "+PONG\r\n:3\r\n$-1\r\n", []val{simple("PONG"), intv(3), nilBulk()}},
	}
	for _, tt := range tests {
		for _, mode := range []string{"whole", "one byte at a time"} {
			t.Run(tt.name+"/"+mode, func(t *testing.T) {
				var src io.Reader = strings.NewReader(tt.in)
				if mode != "whole" {
					src = iotest.OneByteReader(src)
				}
				rd := NewReader(src, Limits{})
				for i, want := range tt.want {
					got, err := readVal(rd)
					if err != nil {
						t.Fatalf("reply %d: %v", i, err)
					}
					if !got.equal(want) {
						t.Fatalf("reply %d: got %v, want %v", i, got, want)
					}
					if rd.Depth() != 0 {
						t.Fatalf("reply %d: depth %d after a whole reply", i, rd.Depth())
					}
				}
				if _, err := rd.ReadReply(); err != io.EOF {
					t.Fatalf("after last reply: got %v, want io.EOF", err)
				}
				if rd.Consumed() != int64(len(tt.in)) {
					t.Fatalf("Consumed() = %d, want %d", rd.Consumed(), len(tt.in))
				}
			})
		}
	}
}

func TestReadReplyMalformed(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		wantMsg  string // substring of the error
		wantEOF  bool   // wraps io.ErrUnexpectedEOF rather than ErrProtocol
		wantLim  bool   // wraps ErrLimit
		limits   Limits //
		preReads int    // replies to read successfully first
	}{
		{name: "http peer", in: "HTTP/1.1 400 Bad Request\r\n\r\n", wantMsg: "got 'H' (is the peer speaking HTTP?)"},
		{name: "resp3 null", in: "_\r\n", wantMsg: "RESP3"},
		{name: "tls alert", in: "\x15\x03\x01\x00\x02\x02\x46", wantMsg: "TLS"},
		{name: "binary", in: "\xff", wantMsg: "0xff"},
		{name: "bad int", in: ":12a\r\n", wantMsg: `expected an integer after ':', got "12a"`},
		{name: "empty int", in: ":\r\n", wantMsg: "expected an integer"},
		{name: "int overflow", in: ":9223372036854775808\r\n", wantMsg: "expected an integer"},
		{name: "bulk len -2", in: "$-2\r\n", wantMsg: "bulk string length (-1 or more)"},
		{name: "bulk len text", in: "$abc\r\n", wantMsg: "bulk string length"},
		{name: "array len -5", in: "*-5\r\n", wantMsg: "array length (-1 or more)"},
		{name: "bulk without CRLF", in: "$3\r\nabcXY", wantMsg: "expected CRLF after bulk string of 3 bytes"},
		{name: "bare LF", in: "+OK\n", wantMsg: "bare LF"},
		{name: "truncated line", in: "+OK", wantEOF: true},
		{name: "truncated bulk", in: "$10\r\nabc", wantEOF: true},
		{name: "truncated array", in: "*2\r\n$1\r\na\r\n", wantEOF: true, preReads: 2},
		{name: "bulk over limit", in: "$1025\r\n", wantLim: true, wantMsg: "bulk string length 1025 exceeds MaxBulk=1024", limits: Limits{MaxBulk: 1024}},
		{name: "hostile bulk", in: "$999999999999\r\n", wantLim: true, wantMsg: "exceeds MaxBulk"},
		{name: "array over limit", in: "*11\r\n", wantLim: true, wantMsg: "array length 11 exceeds MaxArray=10", limits: Limits{MaxArray: 10}},
		{name: "too deep", in: "*1\r\n*1\r\n*1\r\n:1\r\n", wantLim: true, wantMsg: "MaxDepth=2", limits: Limits{MaxDepth: 2}, preReads: 2},
		{name: "long line", in: "+" + strings.Repeat("x", 100) + "\r\n", wantLim: true, wantMsg: "MaxLine=16", limits: Limits{MaxLine: 16}},
		{name: "endless line", in: "-" + strings.Repeat("x", 100), wantLim: true, wantMsg: "without CRLF", limits: Limits{MaxLine: 16}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rd := NewReader(strings.NewReader(tt.in), tt.limits)
			for i := 0; i < tt.preReads; i++ {
				if _, err := rd.ReadReply(); err != nil {
					t.Fatalf("pre-read %d: %v", i, err)
				}
			}
			_, err := readVal(rd)
			if err == nil {
				t.Fatal("no error")
			}
			if tt.wantEOF {
				if !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatalf("got %v, want io.ErrUnexpectedEOF", err)
				}
			} else if !errors.Is(err, ErrProtocol) {
				t.Fatalf("got %v, want ErrProtocol", err)
			}
			if got := errors.Is(err, ErrLimit); got != tt.wantLim {
				t.Fatalf("errors.Is(err, ErrLimit) = %v, want %v (err %v)", got, tt.wantLim, err)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Fatalf("error %q does not contain %q", err, tt.wantMsg)
			}
			// The error is sticky: the stream is out of step.
			if _, err2 := rd.ReadReply(); err2 != err {
				t.Fatalf("second read: got %v, want the same error %v", err2, err)
			}
		})
	}
}

// A declared length, however large, must not make the reader allocate before
// the data arrives: the buffer grows only by doubling when full.
func TestReadReplyNoAllocationForDeclaredLength(t *testing.T) {
	in := "$60000000\r\n" + strings.Repeat("x", 1000) // 60 MB declared, 1 KB sent
	rd := NewReader(strings.NewReader(in), Limits{})
	_, err := rd.ReadReply()
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("got %v, want io.ErrUnexpectedEOF", err)
	}
	if len(rd.buf) > initialBufSize {
		t.Fatalf("buffer grew to %d bytes for 1 KB of data", len(rd.buf))
	}
}

func TestReadReplyLargeBulk(t *testing.T) {
	payload := bytes.Repeat([]byte("0123456789"), 30_000) // 300 KB, beyond the initial buffer
	in := AppendBulk(nil, payload)
	in = AppendSimpleString(in, "OK")
	rd := NewReader(iotest.HalfReader(bytes.NewReader(in)), Limits{})
	rep, err := rd.ReadReply()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rep.Data, payload) {
		t.Fatalf("payload mismatch: got %d bytes", len(rep.Data))
	}
	rep, err = rd.ReadReply()
	if err != nil || rep.Kind != KindSimple || string(rep.Data) != "OK" {
		t.Fatalf("after large bulk: got %+v, %v", rep, err)
	}
}

func TestSkip(t *testing.T) {
	in := "*3\r\n*2\r\n:1\r\n$3\r\nabc\r\n$-1\r\n*1\r\n*0\r\n+NEXT\r\n"
	rd := NewReader(strings.NewReader(in), Limits{})
	if err := rd.Skip(); err != nil {
		t.Fatal(err)
	}
	if rd.Depth() != 0 {
		t.Fatalf("depth %d after Skip of a whole reply", rd.Depth())
	}
	rep, err := rd.ReadReply()
	if err != nil || string(rep.Data) != "NEXT" {
		t.Fatalf("after Skip: got %+v, %v", rep, err)
	}

	// Skip inside an array skips only the current element.
	rd = NewReader(strings.NewReader("*3\r\n:1\r\n*2\r\n:2\r\n:3\r\n:4\r\n"), Limits{})
	if _, err := rd.ReadReply(); err != nil { // header
		t.Fatal(err)
	}
	if err := rd.Skip(); err != nil { // :1
		t.Fatal(err)
	}
	if err := rd.Skip(); err != nil { // [2 3]
		t.Fatal(err)
	}
	rep, err = rd.ReadReply()
	if err != nil || rep.Int != 4 || rd.Depth() != 0 {
		t.Fatalf("after Skip of inner array: got %+v, %v, depth %d", rep, err, rd.Depth())
	}
}

func TestReadErrorsFromTransport(t *testing.T) {
	boom := errors.New("boom")
	rd := NewReader(iotest.ErrReader(boom), Limits{})
	if _, err := rd.ReadReply(); !errors.Is(err, boom) {
		t.Fatalf("got %v, want wrapped boom", err)
	}
	// Clean EOF between replies is io.EOF itself.
	rd = NewReader(strings.NewReader(""), Limits{})
	if _, err := rd.ReadReply(); err != io.EOF {
		t.Fatalf("got %v, want io.EOF", err)
	}
	// Reset clears the sticky error.
	rd.Reset(strings.NewReader(":5\r\n"))
	if rep, err := rd.ReadReply(); err != nil || rep.Int != 5 {
		t.Fatalf("after Reset: got %+v, %v", rep, err)
	}
}

func TestErrorPrefix(t *testing.T) {
	tests := map[string]string{
		"ERR unknown command":                 "ERR",
		"NOAUTH Authentication required.":     "NOAUTH",
		"WRONGPASS invalid username-password": "WRONGPASS",
		"WRONGTYPE Operation against a key":   "WRONGTYPE",
		"LOADING":                             "LOADING",
		"lowercase message":                   "",
		"":                                    "",
		" leading space":                      "",
	}
	for in, want := range tests {
		if got := string(ErrorPrefix([]byte(in))); got != want {
			t.Errorf("ErrorPrefix(%q) = %q, want %q", in, got, want)
		}
		e := &Error{Msg: in}
		if e.Prefix() != want {
			t.Errorf("(&Error{%q}).Prefix() = %q, want %q", in, e.Prefix(), want)
		}
	}
	rep := Reply{Kind: KindError, Data: []byte("WRONGPASS bad")}
	var e *Error
	if !errors.As(rep.Err(), &e) || e.Prefix() != "WRONGPASS" {
		t.Fatalf("Reply.Err() = %v", rep.Err())
	}
	if (Reply{Kind: KindSimple}).Err() != nil {
		t.Fatal("Err() of a simple string is not nil")
	}
}
