//go:build !unix

package redisstore_test

import "time"

// processCPU is not measured here; the benchmark then reports no
// client-µs/op.
func processCPU() time.Duration { return 0 }
