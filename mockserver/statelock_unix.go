//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package mockserver

import (
	"errors"
	"os"
	"syscall"
)

const lockSupported = true

// tryLock takes an exclusive flock on f without waiting.
func tryLock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errLockBusy
		default:
			return err
		}
	}
}
