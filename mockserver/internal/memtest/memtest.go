// Package memtest checks, in tests, that what a bounded store of the mock
// server counts of its bytes is what it holds on the heap, so that its
// byte bound is a bound on memory.
//
// It owns the measurement alone: the stores it measures are given to it
// (a function that fills one, and what the store says it holds), and it
// imports nothing of the mock server.
package memtest

import (
	"runtime"
	"testing"
)

// CheckAccounting runs fill, which makes a store take what was made
// before (given bytes of it, already on the heap), and fails t unless what
// the store then counts (counted) is within 10% below and 50% above what
// it holds: the heap's growth during fill plus given. Run it alone (not in
// parallel): the heap is the whole process's.
func CheckAccounting(t *testing.T, what string, given int, fill func(), counted func() int) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fill()
	runtime.GC()
	runtime.ReadMemStats(&after)
	real := int(after.HeapAlloc) - int(before.HeapAlloc) + given
	n := counted()
	ratio := float64(n) / float64(real)
	t.Logf("%s: %d bytes counted, %d on the heap (%.2f)", what, n, real, ratio)
	if ratio < 0.9 || ratio > 1.5 {
		t.Errorf("%s: the store counts %d bytes for %d on the heap (%.2f); want 0.9 to 1.5", what, n, real, ratio)
	}
}
