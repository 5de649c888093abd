package launch

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/exitcode"
)

// TestBadOptions: what the flags get wrong is a usage error naming the
// flag, before anything listens or dials.
func TestBadOptions(t *testing.T) {
	ctx := context.Background()
	t.Setenv("JOB_COMPLETION_INDEX", "")
	for _, tc := range []struct {
		o    AgentOptions
		want string
	}{
		{AgentOptions{DialFor: time.Minute}, "--coordinator HOST:PORT is required"},
		{AgentOptions{Coordinator: "127.0.0.1:1", Index: -2, IndexSet: true, DialFor: time.Minute}, "--index must be 0 to "},
		{AgentOptions{Coordinator: "127.0.0.1:1", DialFor: 2 * time.Hour}, "--dial-for must be > 0 and ≤ 1h, got 2h0m0s"},
	} {
		var u exitcode.UsageError
		if err := Agent(ctx, io.Discard, tc.o); !errors.As(err, &u) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want a usage error %q", tc.o, err, tc.want)
		}
	}
	var u exitcode.UsageError
	if _, _, err := Coordinator(ctx, io.Discard, Options{N: 0}, nil, false); !errors.As(err, &u) || !strings.HasPrefix(err.Error(), "--agents must be 1 to ") {
		t.Errorf("--agents 0: %v", err)
	}
}
