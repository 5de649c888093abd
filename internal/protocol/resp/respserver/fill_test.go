package respserver

import (
	"testing"

	respproto "github.com/benchrig/benchrig/internal/protocol/resp"
	"github.com/benchrig/benchrig/internal/suite"
	"github.com/benchrig/benchrig/internal/system"
)

// TestProbeBatch: the probe batch is the suite's largest resp batch, at
// most verify_batch or 128.
func TestProbeBatch(t *testing.T) {
	env := func(batches ...int) system.Env {
		var e system.Env
		for _, b := range batches {
			e.Cells = append(e.Cells, suite.Cell{Protocol: respproto.Key, Batch: b})
		}
		e.Cells = append(e.Cells, suite.Cell{Protocol: "pg", Batch: 1000})
		return e
	}
	for _, tc := range []struct {
		env         system.Env
		verifyBatch int
		want        int
	}{
		{env(1, 64), 0, 64},
		{env(1), 0, 1},
		{env(1024), 0, suite.DefaultVerifyBatch},
		{env(1024), 512, 512},
		{env(64), 16, 16},
		{env(), 0, suite.DefaultVerifyBatch},
	} {
		if got := ProbeBatch(tc.env, tc.verifyBatch); got != tc.want {
			t.Errorf("ProbeBatch(%d cells, verify_batch %d) = %d, want %d", len(tc.env.Cells), tc.verifyBatch, got, tc.want)
		}
	}
}
