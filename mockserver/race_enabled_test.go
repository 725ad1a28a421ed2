//go:build race

package mockserver

// raceEnabled: the race detector changes allocation sizes and timing, so
// tests that measure the heap skip under it.
const raceEnabled = true
