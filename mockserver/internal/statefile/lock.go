package statefile

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// errBusy is what tryLock returns for a lock another holder has.
var errBusy = errors.New("lock held")

// LockedError is the error of [Lock] when another holder has the lock:
// the file is in use by another server (model.ErrStateFileInUse, which it
// unwraps to).
type LockedError struct {
	// Name is the lock file.
	Name string
}

// Error returns "in use by another server: NAME is locked".
func (e *LockedError) Error() string {
	return strings.TrimPrefix(model.ErrStateFileInUse.Error(), "mockserver: ") + ": " + e.Name + " is locked"
}

// Unwrap returns model.ErrStateFileInUse.
func (e *LockedError) Unwrap() error { return model.ErrStateFileInUse }

// Lock takes the lock of the file at path: an exclusive, advisory lock on
// the file path+".lock" beside it (created mode 0600 if missing, and never
// removed, since removing a lock file races with the next holder taking
// it). The lock belongs to the open file, so it ends when the returned
// file is closed or the process ends, even by kill -9: no stale lock
// outlives a crash. When another holder (in this process or another) has
// the lock, the error is a [*LockedError]. Where the system has no such
// lock (Supported is false), it returns a nil file and no error.
func Lock(path string) (*os.File, error) {
	if !Supported {
		return nil, nil
	}
	name := path + ".lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("cannot write a file in its directory: %w", err)
	}
	if err := tryLock(f); err != nil {
		f.Close()
		if errors.Is(err, errBusy) {
			return nil, &LockedError{Name: name}
		}
		return nil, fmt.Errorf("cannot lock %s: %w", name, err)
	}
	return f, nil
}
