package statefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"

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

// Held is a lock [Lock] took; [Held.Unlock] lets it go.
type Held struct {
	f       *os.File
	name    string
	id      fileID
	created bool // this Lock made the lock file
}

// The lock is a POSIX record lock (fcntl F_SETLK) on the whole lock file.
// Why that one:
//
//   - A flock, or an open file description lock (F_OFD_SETLK), belongs to
//     the open file, and a process forked meanwhile (a test binary, or any
//     program, starting another: os/exec) shares every open file until it
//     execs. A lock let go in that window stays held by the child, for a
//     moment the machine's load can stretch: a second server, or the same
//     one starting again, was told the file was in use.
//   - A record lock belongs to the process, which a fork does not pass on:
//     what this process lets go is free at once. Two opens in one process
//     do not conflict, and closing any descriptor of the file ends the
//     process's lock: so the process's holders are kept in [holders], a
//     second Lock of a file this process holds is refused from it without
//     opening the file, and nothing else in the process opens a lock file.
//
// The lock ends with the process, even by kill -9: no stale lock outlives
// a crash.

// holders are the lock files this process holds, by identity (device and
// inode: one file under any name), and what Lock and Unlock do runs under
// its lock, so no descriptor of a held file is ever opened or closed
// meanwhile. It keeps each held file's *os.File: one a holder dropped
// without Unlock (a server never closed) is never closed by the garbage
// collector, which would end the lock unseen and, once its inode is
// reused by a new file, refuse that file as held. Such a lock lasts as
// long as the process, as a holder's lock lasts until Unlock.
var holders = struct {
	sync.Mutex
	held  map[fileID]*os.File
	extra map[fileID][]*os.File // see lockOnce
}{held: make(map[fileID]*os.File), extra: make(map[fileID][]*os.File)}

// maxLockTries bounds how often Lock opens the lock file again when a
// holder that made it removed it meanwhile.
const maxLockTries = 10

// Lock takes the lock of the file at path: an exclusive, advisory lock on
// the file path+".lock" beside it (created mode 0600 if missing). path
// should be the file itself, as [Resolve] gives it, so that every name of
// it locks the same file. When another holder (in this process or
// another) has the lock, the error is a [*LockedError]. Where the system
// has no such lock (Supported is false), it returns a Held that holds
// nothing, and no error.
func Lock(path string) (*Held, error) {
	name := path + ".lock"
	if !Supported {
		return &Held{name: name}, nil
	}
	holders.Lock()
	defer holders.Unlock()
	// A file this process holds is refused before it is opened: closing
	// the descriptor would end the holder's lock.
	if fi, err := os.Stat(name); err == nil && holders.held[idOf(fi)] != nil {
		return nil, &LockedError{Name: name}
	}
	for range maxLockTries {
		h, retry, err := lockOnce(name)
		if !retry {
			return h, err
		}
	}
	return nil, fmt.Errorf("cannot lock %s: it is removed and made again as fast as it is opened", name)
}

// lockOnce opens the lock file (making it if missing) and locks it. It
// asks to be tried again when the file it locked is no longer the one at
// name: a holder that made it removed it, and the next holder makes a new
// one. holders is locked.
func lockOnce(name string) (h *Held, retry bool, err error) {
	created := true
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		created = false
		f, err = os.OpenFile(name, os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, true, nil // removed meanwhile
		}
	}
	if err != nil {
		return nil, false, fmt.Errorf("cannot write a file in its directory: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, false, fmt.Errorf("cannot lock %s: %w", name, err)
	}
	id := idOf(fi)
	if holders.held[id] != nil {
		// The name reached a file this process holds after Lock looked
		// (another name of it put there meanwhile). Closing f would end
		// that lock: it is refused, and f kept until the holder lets go.
		holders.extra[id] = append(holders.extra[id], f)
		return nil, false, &LockedError{Name: name}
	}
	if err := tryLock(f); err != nil {
		f.Close()
		if errors.Is(err, errBusy) {
			return nil, false, &LockedError{Name: name}
		}
		return nil, false, fmt.Errorf("cannot lock %s: %w", name, err)
	}
	if now, err := os.Stat(name); err != nil || idOf(now) != id {
		f.Close() // ends the lock: the file is no longer the one to hold
		return nil, true, nil
	}
	holders.held[id] = f
	return &Held{f: f, name: name, id: id, created: created}, false, nil
}

// Name returns the lock file.
func (h *Held) Name() string { return h.name }

// Unlock lets the lock go. With remove, a lock file this Lock made is
// removed first, while still held (a start that was refused leaves no
// lock file of its own behind; one another holder may be opening is
// found replaced, and made again). It does nothing the second time.
func (h *Held) Unlock(remove bool) {
	if h == nil || h.f == nil {
		return
	}
	holders.Lock()
	defer holders.Unlock()
	if remove && h.created {
		_ = os.Remove(h.name)
	}
	delete(holders.held, h.id)
	for _, f := range holders.extra[h.id] {
		f.Close()
	}
	delete(holders.extra, h.id)
	h.f.Close()
	h.f = nil
}
