package workload

import (
	"fmt"
	"math"
	"strings"
)

// Kind names a key sequence.
type Kind string

// The workload kinds; see the package documentation for their formulas.
const (
	Hot     Kind = "hot"
	Cold    Kind = "cold"
	Mixed   Kind = "mixed"
	Writes  Kind = "writes"
	Uniform Kind = "uniform"
	Zipf    Kind = "zipf"
)

// Kinds lists every accepted Kind, in documentation order.
var Kinds = []Kind{Hot, Cold, Mixed, Writes, Uniform, Zipf}

// Defaults applied by Config.WithDefaults to zero fields.
const (
	DefaultKind       = Hot
	DefaultRows       = 4096
	DefaultHot        = 128
	DefaultBatch      = 1
	DefaultWriteEvery = 20 // mixed: one write in 20 operations, 5 %
	DefaultZipfS      = 0.99
	// MaxBatch bounds the keys of one request.
	MaxBatch = 1 << 16
)

// WriteStride is the multiplier of seq that picks the key a write updates,
// (seq·WriteStride) % Hot + 1. It is odd and prime, so with a power-of-two hot
// set (the default 128) consecutive writes visit every hot row before
// repeating one.
const WriteStride = 17

// Config is the plain-data description of a workload, as it appears in suite
// files and in every results file.
type Config struct {
	// Kind is the key sequence: hot, cold, mixed, writes, uniform or zipf.
	Kind Kind `json:"kind"`
	// Rows is the number of rows in the dataset; keys are 1 … Rows.
	Rows int64 `json:"rows"`
	// Hot is the size of the hot set (the first Hot rows) read by hot and
	// mixed and written by mixed and writes.
	Hot int64 `json:"hot"`
	// Batch is the number of keys one read request reads (k).
	Batch int `json:"batch"`
	// WriteEvery makes every WriteEvery-th operation of a mixed workload a
	// write (operations seq with seq % WriteEvery == WriteEvery−1). Only
	// mixed accepts it.
	WriteEvery int `json:"write_every,omitempty"`
	// Seed seeds uniform and zipf (other kinds ignore it). The same seed
	// gives the same keys.
	Seed uint64 `json:"seed,omitempty"`
	// ZipfS is the Zipf exponent (s > 0; 0.99 as in YCSB by default).
	ZipfS float64 `json:"zipf_s,omitempty"`
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.Kind == "" {
		c.Kind = DefaultKind
	}
	c.Kind = Kind(strings.ToLower(string(c.Kind)))
	if c.Rows == 0 {
		c.Rows = DefaultRows
	}
	if c.Hot == 0 && (c.Kind == Hot || c.Kind == Mixed || c.Kind == Writes) {
		c.Hot = min(DefaultHot, max(c.Rows, 1))
	}
	if c.Batch == 0 {
		c.Batch = DefaultBatch
	}
	if c.WriteEvery == 0 && c.Kind == Mixed {
		c.WriteEvery = DefaultWriteEvery
	}
	if c.ZipfS == 0 && c.Kind == Zipf {
		c.ZipfS = DefaultZipfS
	}
	return c
}

// Validate reports the first invalid field of an already defaulted config,
// naming the field and what it accepts.
func (c Config) Validate() error {
	if !c.Kind.valid() {
		return fmt.Errorf("workload.kind %q: accepted kinds are %s", c.Kind, kindList())
	}
	if c.Rows < 1 {
		return fmt.Errorf("workload.rows %d: must be at least 1", c.Rows)
	}
	if c.Batch < 1 || c.Batch > MaxBatch {
		return fmt.Errorf("workload.batch %d: must be between 1 and %d keys per request", c.Batch, MaxBatch)
	}
	switch c.Kind {
	case Hot, Mixed, Writes:
		if c.Hot < 1 || c.Hot > c.Rows {
			return fmt.Errorf("workload.hot %d: must be between 1 and workload.rows (%d)", c.Hot, c.Rows)
		}
	default:
		if c.Hot != 0 {
			return fmt.Errorf("workload.hot %d: only hot, mixed and writes use a hot set, not %s", c.Hot, c.Kind)
		}
	}
	if c.Kind == Mixed {
		if c.WriteEvery < 2 {
			return fmt.Errorf("workload.write_every %d: must be at least 2 (one write every n operations; use kind writes for writes only)", c.WriteEvery)
		}
	} else if c.WriteEvery != 0 {
		return fmt.Errorf("workload.write_every %d: only kind mixed mixes writes into reads, not %s", c.WriteEvery, c.Kind)
	}
	if c.Kind == Zipf {
		if !(c.ZipfS > 0) || math.IsInf(c.ZipfS, 0) || c.ZipfS > 100 {
			return fmt.Errorf("workload.zipf_s %v: must be greater than 0 and at most 100", c.ZipfS)
		}
	} else if c.ZipfS != 0 {
		return fmt.Errorf("workload.zipf_s %v: only kind zipf uses it, not %s", c.ZipfS, c.Kind)
	}
	if c.Kind == Writes && c.Batch != 1 {
		return fmt.Errorf("workload.batch %d: kind writes updates one row per request; use batch 1", c.Batch)
	}
	return nil
}

func (k Kind) valid() bool {
	for _, v := range Kinds {
		if k == v {
			return true
		}
	}
	return false
}

func kindList() string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}
