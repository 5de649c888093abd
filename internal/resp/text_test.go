package resp

import (
	"bytes"
	"errors"
	"testing"
)

func TestReadText(t *testing.T) {
	in := "+PONG\r\n:42\r\n$5\r\nhello\r\n$-1\r\n-ERR nope\r\n*2\r\n$1\r\na\r\n*1\r\n:1\r\n+after\r\n"
	r := NewReader(bytes.NewBufferString(in), DefaultLimits())
	for _, want := range []string{"PONG", "42", "hello", ""} {
		got, err := r.ReadText()
		if err != nil || got != want {
			t.Fatalf("ReadText = %q, %v; want %q", got, err, want)
		}
	}
	var se *Error
	if _, err := r.ReadText(); !errors.As(err, &se) || se.Prefix() != "ERR" {
		t.Fatalf("server error: %v", err)
	}
	if _, err := r.ReadText(); !errors.Is(err, ErrArrayReply) {
		t.Fatalf("array: %v", err)
	}
	if got, err := r.ReadText(); err != nil || got != "after" {
		t.Fatalf("after the array (nested one skipped too): %q %v", got, err)
	}
}
