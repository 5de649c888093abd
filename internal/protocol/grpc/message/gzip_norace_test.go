//go:build !race

package message

// raceEnabled says the race detector is on (sync.Pool then drops items at
// random, so allocations are not measured).
const raceEnabled = false
