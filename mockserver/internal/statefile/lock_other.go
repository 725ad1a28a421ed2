//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package statefile

import "os"

// Supported is false where POSIX record locks are missing: there nothing
// stops two servers sharing a state file (the documentation says to run
// one per file).
const Supported = false

type fileID struct{}

func idOf(os.FileInfo) fileID { return fileID{} }

func tryLock(*os.File) error { return nil }

func links(os.FileInfo) uint64 { return 1 }
