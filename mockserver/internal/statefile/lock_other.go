//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package statefile

import "os"

// Supported is false where flock is missing: there nothing stops two
// servers sharing a state file (the documentation says to run one per
// file).
const Supported = false

func tryLock(*os.File) error { return nil }
