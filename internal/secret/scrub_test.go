package secret

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestScrubWholeTokens(t *testing.T) {
	for _, tt := range []struct {
		text    string
		secrets []string
		want    string
	}{
		{"context deadline exceeded", []string{"x"}, "context deadline exceeded"},
		{"password x rejected", []string{"x"}, "password [redacted] rejected"},
		{"x", []string{"x"}, "[redacted]"},
		{"xx x xxx", []string{"x"}, "xx [redacted] xxx"},
		{"user=bench pw=s3cret;", []string{"s3cret"}, "user=bench pw=[redacted];"},
		{"s3cretive s3cret_x s3cret", []string{"s3cret"}, "s3cretive s3cret_x [redacted]"},
		{"a p@ss! b", []string{"p@ss!"}, "a [redacted] b"},
		{"ap@ss!b", []string{"p@ss!"}, "ap@ss!b"},
		{"@@x@@", []string{"@x@"}, "@[redacted]@"},
		{"ключ секрет", []string{"секрет"}, "ключ [redacted]"},
		{"несекрет", []string{"секрет"}, "несекрет"},
		{"long longer", []string{"long", "long longer"}, "[redacted]"},
		{"abc", nil, "abc"},
		{"abc", []string{""}, "abc"},
	} {
		if got := Scrub(tt.text, tt.secrets...); got != tt.want {
			t.Errorf("Scrub(%q, %q) = %q, want %q", tt.text, tt.secrets, got, tt.want)
		}
	}
}

func TestSetForms(t *testing.T) {
	var s Set
	s.Add("p@ss w\"d", "")
	for _, text := range []string{`pw p@ss w"d end`, "pw p%40ss+w%22d end", "pw p@ss%20w%22d end", `pw p@ss w\"d end`} {
		if got := s.Scrub(text); got != "pw [redacted] end" {
			t.Errorf("Scrub(%q) = %q", text, got)
		}
	}
	var nilSet *Set
	if nilSet.Scrub("a") != "a" || nilSet.Len() != 0 || nilSet.Error(nil) != nil {
		t.Errorf("a nil set must scrub nothing")
	}
}

func TestSetErrorAndWriter(t *testing.T) {
	var s Set
	s.Add("hunter2")
	base := fmt.Errorf("login hunter2: %w", context.DeadlineExceeded)
	err := s.Error(base)
	if err.Error() != "login [redacted]: context deadline exceeded" || !errors.Is(err, context.DeadlineExceeded) || !IsScrubbed(err) {
		t.Errorf("Error: %v", err)
	}
	plain := errors.New("nothing")
	if s.Error(plain) != plain {
		t.Errorf("an error without a secret was wrapped")
	}
	var b bytes.Buffer
	w := s.Writer(&b)
	fmt.Fprintf(w, "a hunter2 b\n")
	if b.String() != "a [redacted] b\n" {
		t.Errorf("Writer wrote %q", b.String())
	}
	if f, ok := w.(interface{ Fd() uintptr }); !ok || f.Fd() != ^uintptr(0) {
		t.Errorf("Fd of a buffer's writer")
	}
}

func TestPolicyError(t *testing.T) {
	base := fmt.Errorf(`paths.get.http.url: "https://u:pw1@h:bad/?token=t2": invalid port: %w`, context.Canceled)
	err := Policy{}.Error(base)
	if err.Error() != `paths.get.http.url: "https://u:[redacted]@h:bad/?token=[redacted]": invalid port: context canceled` || !errors.Is(err, context.Canceled) {
		t.Errorf("Policy.Error: %v", err)
	}
	plain := errors.New("--token-env REDIS_PASSWORD: not set")
	if (Policy{}).Error(plain) != plain {
		t.Errorf("an error without credentials was rewritten: %v", Policy{}.Error(plain))
	}
}
