// Package exitcode holds the errors that decide benchrig's exit code, the
// same for run, http, pg and resp, and maps an error to its code: 0 every
// sample ran (and, with --fail-unhealthy, was HEALTHY); 1 setup failed,
// the run was interrupted, or every sample failed; 2 bad usage; 3
// --fail-unhealthy and some sample was UNHEALTHY or failed.
package exitcode

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// The exit codes other than 0.
const (
	Failed    = 1
	BadUsage  = 2
	Unhealthy = 3
)

// UsageError is bad input from the command line: exit code 2.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usage makes err a usage error.
func Usage(err error) error { return UsageError{err} }

// Usagef is a usage error of a formatted message.
func Usagef(format string, args ...any) error { return UsageError{fmt.Errorf(format, args...)} }

// ErrUnhealthy is returned after the report when --fail-unhealthy is set.
var ErrUnhealthy = errors.New("the run was UNHEALTHY")

// IsCobraUsage recognises cobra's own argument errors (unknown command,
// wrong number of arguments), which it returns as plain errors.
func IsCobraUsage(err error) bool {
	var u UsageError
	if errors.As(err, &u) {
		return false
	}
	msg := err.Error()
	for _, p := range []string{"unknown command ", "accepts ", "requires at least ", "requires at most ", "unknown flag", "unknown shorthand", "invalid argument "} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// Of prints the error (one line) and maps it to an exit code.
func Of(err error, stderr io.Writer) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, ErrUnhealthy) {
		fmt.Fprintln(stderr, "benchrig:", err)
		return Unhealthy
	}
	fmt.Fprintln(stderr, "benchrig:", err)
	var u UsageError
	if errors.As(err, &u) {
		return BadUsage
	}
	return Failed
}
