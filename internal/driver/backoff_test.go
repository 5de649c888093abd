package driver

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	var b Backoff
	want := []time.Duration{10, 20, 40, 80, 160, 320, 640, 1280, 1280}
	for i, w := range want {
		if got := b.Next(); got != w*time.Millisecond {
			t.Fatalf("pause %d = %v, want %v", i+1, got, w*time.Millisecond)
		}
	}
	b.Reset()
	if got := b.Next(); got != 10*time.Millisecond {
		t.Errorf("after Reset: %v, want 10ms", got)
	}
}
