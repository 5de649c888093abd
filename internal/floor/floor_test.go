package floor

import (
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/benchrig/benchrig/internal/exitcode"
)

// TestCalibrateRefusesBadFlags: a duration out of bounds or an unknown
// protocol is a usage error, before anything is measured.
func TestCalibrateRefusesBadFlags(t *testing.T) {
	var u exitcode.UsageError
	for _, tc := range []struct {
		d         time.Duration
		protocols []string
		want      string
	}{
		{10 * time.Millisecond, []string{"http"}, "--duration must be between 100ms and 1m0s, got 10ms"},
		{time.Second, []string{"h3"}, `--protocols: unknown protocol "h3"; accepted: http, pg, resp`},
	} {
		err := Calibrate(context.Background(), io.Discard, tc.d, tc.protocols, false)
		if err == nil || err.Error() != tc.want || !errors.As(err, &u) {
			t.Errorf("%s %v: %v, want the usage error %q", tc.d, tc.protocols, err, tc.want)
		}
	}
}

// TestBeforeRunSkipped: --no-calibrate records that it skipped the floor.
func TestBeforeRunSkipped(t *testing.T) {
	if f := BeforeRun(context.Background(), nil, true, nil); f == nil || f.Skipped != "--no-calibrate" || len(f.Protocols) != 0 {
		t.Errorf("skipped floor %+v", f)
	}
}
