// Package cliflag holds the flag values benchrig's commands share: a
// duration that also takes a bare number of seconds, and a
// comma-separated list of integers.
package cliflag

import (
	"time"

	"github.com/spf13/pflag"

	"github.com/benchrig/benchrig/internal/suite"
)

// durationValue is a duration flag that also takes a bare number of
// seconds (-d 10, --warmup 1.5), as autocannon, wrk and hey users type
// them, bounded as a suite's durations are (suite.ParseDuration).
type durationValue struct{ d *time.Duration }

func (v durationValue) String() string {
	if v.d == nil {
		return "0s"
	}
	return v.d.String()
}

// Set implements pflag.Value.
func (v durationValue) Set(s string) error {
	d, err := suite.ParseDuration(s)
	if err != nil {
		return err
	}
	*v.d = d.D()
	return nil
}

// Type implements pflag.Value.
func (v durationValue) Type() string { return "duration" }

// DurationVarP defines a duration flag with durationValue's syntax.
func DurationVarP(f *pflag.FlagSet, p *time.Duration, name, short string, def time.Duration, usage string) {
	*p = def
	f.VarP(durationValue{p}, name, short, usage)
}
