//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package mockcmd

import "testing"

// waitStateUnlocked: without flock, a state file has no lock to wait for.
func waitStateUnlocked(*testing.T, string) {}
