package textclip

import (
	"fmt"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
	}{
		{"", ""},
		{"item:{id}", "item:{id}"},
		{strings.Repeat("x", Max), strings.Repeat("x", Max)},
		{strings.Repeat("x", 3_000_000), strings.Repeat("x", Max) + "… (3000000 bytes in all)"},
		// a cut inside a multi-byte character moves back to its start
		{strings.Repeat("x", Max-1) + "é" + "tail", strings.Repeat("x", Max-1) + "… (261 bytes in all)"},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%d bytes) = %.80q…, want %.80q…", len(tc.in), got, tc.want)
		}
	}
}

func TestArgs(t *testing.T) {
	big := strings.Repeat("k", 200<<20/1024) // 200 KiB
	msg := fmt.Sprintf("fill %q: %d keys", Args([]any{big, 7})...)
	if len(msg) > Max+64 || !strings.Contains(msg, "(204800 bytes in all)") || !strings.HasSuffix(msg, ": 7 keys") {
		t.Errorf("message of %d bytes: %.120q", len(msg), msg)
	}
	short := []any{"a", 1}
	if got := Args(short); &got[0] != &short[0] {
		t.Error("short args were copied")
	}
}
