//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package mockserver

import "time"

// processCPU is not measured here.
func processCPU() (time.Duration, bool) { return 0, false }
