package driver

import "time"

// firstBackoff is the first pause after a failure.
const firstBackoff = 10 * time.Millisecond

// Backoff paces the reopening of a failed connection, the same way for the
// engine's workers and the drivers' event loops: 10 ms, doubling while it
// is under a second. The zero value is ready; it is not safe for
// concurrent use.
type Backoff struct{ d time.Duration }

// Next returns the pause before the next attempt and lengthens the one
// after it.
func (b *Backoff) Next() time.Duration {
	if b.d == 0 {
		b.d = firstBackoff
	}
	d := b.d
	if b.d < time.Second {
		b.d *= 2
	}
	return d
}

// Reset starts over, after an attempt succeeded.
func (b *Backoff) Reset() { b.d = 0 }
