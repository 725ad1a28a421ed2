package mockserver

import (
	"errors"
	"fmt"
	"os"
)

// ErrStateFileInUse is wrapped by the [*StateFileError] that [Open]
// returns when another server (in this process or another) already keeps
// its state in the same file: two servers writing one file would each
// overwrite the other's state.
var ErrStateFileInUse = errors.New("mockserver: in use by another server")

// errLockBusy is what tryLock returns for a lock another holder has.
var errLockBusy = errors.New("lock held")

// lockStateFile takes the lock of the state file at path: an exclusive,
// advisory lock on the file path+".lock" beside it (created mode 0600 if
// missing, and never removed, since removing a lock file races with the
// next server taking it). The lock belongs to the open file, so it ends
// when the returned file is closed or the process ends, even by kill -9:
// no stale lock outlives a crash. Where the system has no such lock
// (lockSupported is false), it returns a nil file and no error.
func lockStateFile(path string) (*os.File, error) {
	if !lockSupported {
		return nil, nil
	}
	name := path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot write a file in its directory: %w", err)
	}
	if err := tryLock(f); err != nil {
		f.Close()
		if errors.Is(err, errLockBusy) {
			return nil, fmt.Errorf("%w: %s is locked", ErrStateFileInUse, name)
		}
		return nil, fmt.Errorf("cannot lock %s: %w", name, err)
	}
	return f, nil
}
