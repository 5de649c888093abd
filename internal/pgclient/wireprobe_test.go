package pgclient

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
)

func TestJudgeWireAnswer(t *testing.T) {
	for _, tc := range []struct {
		got     string
		readErr error
		want    string // "" = PostgreSQL
	}{
		{"N", nil, ""},
		{"S", nil, ""},
		{"E\x00\x00\x00\x10SFATAL", nil, ""},
		{"-ERR unknown command", nil, "is a RESP (Redis-protocol) server"},
		{"HTTP/1.1 400 Bad Request\r\n", nil, "is an HTTP server"},
		{"SSH-2.0-OpenSSH", nil, "is a server that is not PostgreSQL"},
		{"", io.EOF, "closed the connection without answering"},
		{"", os.ErrDeadlineExceeded, "did not answer PostgreSQL's SSLRequest within 2s"},
	} {
		err := judgeWireAnswer("127.0.0.1:5", []byte(tc.got), tc.readErr, nil)
		if (err == nil) != (tc.want == "") || err != nil && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("answer %q: %v; want %q", tc.got, err, tc.want)
		}
	}
	if err := judgeWireAnswer("x", nil, os.ErrDeadlineExceeded, context.Canceled); !errors.Is(err, context.Canceled) {
		t.Errorf("Ctrl-C: %v", err)
	}
}
