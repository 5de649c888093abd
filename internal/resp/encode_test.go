package resp

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestAppendCommand(t *testing.T) {
	got := string(AppendCommand(nil, []byte("MGET"), []byte("a"), []byte("")))
	want := "*3\r\n$4\r\nMGET\r\n$1\r\na\r\n$0\r\n\r\n"
	if got != want {
		t.Fatalf("AppendCommand = %q, want %q", got, want)
	}
	if s := string(AppendCommandString([]byte("x"), "PING")); s != "x*1\r\n$4\r\nPING\r\n" {
		t.Fatalf("AppendCommandString appended %q", s)
	}
}

func TestAppendBulkInt(t *testing.T) {
	for _, v := range []int64{0, 7, 9, 10, 99, 100, 12345, -1, -10, math.MaxInt64, math.MinInt64} {
		text := strconv.FormatInt(v, 10)
		want := "$" + strconv.Itoa(len(text)) + "\r\n" + text + "\r\n"
		if got := string(AppendBulkInt(nil, v)); got != want {
			t.Errorf("AppendBulkInt(%d) = %q, want %q", v, got, want)
		}
	}
}

func TestAppendReplies(t *testing.T) {
	var b []byte
	b = AppendSimpleString(b, "OK")
	b = AppendError(b, "ERR bad")
	b = AppendInt(b, -3)
	b = AppendNilBulk(b)
	b = AppendNilArray(b)
	b = AppendArrayHeader(b, 1)
	b = AppendBulkString(b, "v")
	want := "+OK\r\n-ERR bad\r\n:-3\r\n$-1\r\n*-1\r\n*1\r\n$1\r\nv\r\n"
	if string(b) != want {
		t.Fatalf("got %q, want %q", b, want)
	}
	// And the reader reads back what the encoder wrote.
	rd := NewReader(strings.NewReader(want), Limits{})
	wantVals := []val{simple("OK"), errv("ERR bad"), intv(-3), nilBulk(), nilArray(), array(bulk("v"))}
	for i, w := range wantVals {
		v, err := readVal(rd)
		if err != nil || !v.equal(w) {
			t.Fatalf("reply %d: got %v, %v; want %v", i, v, err, w)
		}
	}
}

func TestReadCommand(t *testing.T) {
	in := AppendCommandString(nil, "SET", "key", "a value\r\nwith CRLF")
	in = append(in, "PING\r\n"...)
	in = append(in, "  GET   k1\tk2 \n"...)
	in = append(in, "\r\n"...)
	in = AppendCommandString(in, "MGET", "a", "b", "c")
	want := [][]string{
		{"SET", "key", "a value\r\nwith CRLF"},
		{"PING"},
		{"GET", "k1", "k2"},
		{},
		{"MGET", "a", "b", "c"},
	}
	rd := NewReader(strings.NewReader(string(in)), Limits{})
	var args [][]byte
	for i, w := range want {
		var err error
		args, err = rd.ReadCommand(args)
		if err != nil {
			t.Fatalf("command %d: %v", i, err)
		}
		got := make([]string, len(args))
		for j, a := range args {
			got[j] = string(a)
		}
		if strings.Join(got, "|") != strings.Join(w, "|") || len(got) != len(w) {
			t.Fatalf("command %d: got %q, want %q", i, got, w)
		}
	}
	if _, err := rd.ReadCommand(args); err == nil || err.Error() != "EOF" {
		t.Fatalf("after last command: got %v, want EOF", err)
	}
}

func TestReadCommandMalformed(t *testing.T) {
	for name, in := range map[string]string{
		"integer argument": "*2\r\n$3\r\nGET\r\n:1\r\n",
		"nil argument":     "*2\r\n$3\r\nGET\r\n$-1\r\n",
		"empty array":      "*0\r\n",
		"nil array":        "*-1\r\n",
	} {
		rd := NewReader(strings.NewReader(in), Limits{})
		if _, err := rd.ReadCommand(nil); err == nil || !strings.Contains(err.Error(), "expected") {
			t.Errorf("%s: got %v, want a protocol error", name, err)
		}
	}
}
