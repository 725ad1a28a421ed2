//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package mockcmd

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

// waitStateUnlocked waits until no process holds the lock of the state
// file at path. A command run stopped by the test has released it, but a
// process this test binary forks meanwhile (other tests build and start
// the command) inherits every open file until it execs, the lock's
// included, and holds the lock for that moment.
func waitStateUnlocked(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path+".lock", os.O_RDWR, 0)
	if errors.Is(err, os.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for {
		// Blocking: returns once the lock is free.
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		break
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_UN); err != nil {
		t.Fatal(err)
	}
}
