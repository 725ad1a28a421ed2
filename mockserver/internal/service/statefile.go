package service

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/state"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/statefile"
)

// This file is the state file (mockserver.WithStateFile): loaded at the
// start, written after changes once an interval has passed, and a last
// time at Close, by a statefile.Keeper. Its errors are
// *model.StateFileError.

// StateFile is where and how often the state is kept.
type StateFile struct {
	// Path is the file.
	Path string
	// Interval is how long, at least, a change waits before it is written.
	Interval time.Duration
	// Hooks watch and hold up the keeper (tests only).
	Hooks statefile.Hooks
}

// stateDoc is a copy of the state as the state file's keeper writes it.
type stateDoc struct{ *state.Snapshot }

// LogAttrs says what the copy holds, for the log of its save.
func (d stateDoc) LogAttrs() []any {
	nc, nw := 0, 0
	for _, a := range d.Store.Accounts {
		nc += len(a.Contexts)
		nw += len(a.Webhooks)
	}
	return []any{"contexts", nc, "webhooks", nw, "pendingDeliveries", len(d.Deliveries)}
}

// StateChanged notes that the state changed: the state file is written
// once the interval has passed. It is cheap when nothing is pending, and
// does nothing without a state file.
func (s *Service) StateChanged() {
	if s.persist != nil {
		s.persist.Changed()
	}
}

// OpenStateFile keeps the state in f.Path: it takes the file's lock and
// loads the file, before the server serves. A missing file is a first
// start; a file that cannot be read or is not a valid state document is
// an error naming the file and what is wrong (the document's wraps a
// *model.StateError), and the file is left as it is; so is a file
// another server holds (the error wraps model.ErrStateFileInUse).
func (s *Service) OpenStateFile(f StateFile) error {
	s.persist = statefile.NewKeeper(statefile.Config{
		Path: f.Path, Interval: f.Interval, Copy: func() statefile.Doc { return stateDoc{s.snapshotState()} }, Logger: s.Logger,
		Hooks: f.Hooks,
	})
	if err := s.loadStateFile(f.Path); err != nil {
		s.persist = nil
		return err
	}
	// Every change of a delivery is a change of the state; the store's
	// changes are noted where requests and Go methods make them.
	s.persistDeliveries.Store(true)
	return nil
}

// SaveStateFile writes the state file now.
func (s *Service) SaveStateFile() error { return s.persist.Save() }

// closeState stops the state file's timer, waits for a save under way and
// writes the file a last time if the state changed since it was written,
// then lets the file's lock go (statefile.Keeper.Close).
func (s *Service) closeState() error {
	if s.persist == nil {
		return nil
	}
	return s.persist.Close()
}

// loadStateFile loads the state file at start, before the server serves:
// a missing file is a first start; anything else that fails is an error,
// and the file is left as it is. The directory must take a new file, or
// every save would fail later.
func (s *Service) loadStateFile(path string) error {
	// The lock first: the temporary files below may be another server's
	// write under way, and its state is not this server's to load.
	if err := s.persist.Lock(); err != nil {
		return &model.StateFileError{Path: path, Err: err}
	}
	if err := s.loadStateFileLocked(path); err != nil {
		s.persist.Unlock()
		return err
	}
	return nil
}

// loadStateFileLocked is loadStateFile once the lock is held.
func (s *Service) loadStateFileLocked(path string) error {
	fail := func(format string, args ...any) error {
		return &model.StateFileError{Path: path, Err: fmt.Errorf(format, args...)}
	}
	if err := statefile.RemoveStaleTemps(path); err != nil {
		return fail("cannot clear what an interrupted write left: %w", err)
	}
	start := time.Now()
	f, err := os.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := statefile.CheckWritableDir(path); err != nil {
			return fail("cannot write a file in its directory: %w", err)
		}
		s.Logger.Info("no state file yet: starting empty; it is written once the state changes", "path", path)
		return nil
	case err != nil:
		return fail("cannot read it: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return fail("cannot read it: %w", err)
	} else if fi.IsDir() {
		return fail("it is a directory, not a file")
	}
	st, err := s.readState(bufio.NewReaderSize(f, 1<<20), true)
	if err != nil {
		if _, ok := errors.AsType[*model.StateError](err); ok {
			return &model.StateFileError{Path: path, Err: err}
		}
		return fail("cannot read it: %w", err)
	}
	if err := statefile.CheckWritableDir(path); err != nil {
		return fail("cannot write a file in its directory: %w", err)
	}
	s.stateMu.Lock()
	s.installState(st, true)
	s.stateMu.Unlock()
	s.persist.Loaded()
	var unreachable []string
	for _, la := range st.Store.Accounts {
		if !s.Keys.Has(la.ID) {
			unreachable = append(unreachable, la.ID)
		}
	}
	s.Logger.Info("state loaded", "path", path, "contexts", st.Contexts, "versions", st.Versions,
		"webhooks", st.Webhooks, "pendingDeliveries", len(st.Deliveries), "duration", time.Since(start))
	if len(unreachable) > 0 {
		s.Logger.Warn("the state file holds accounts no key belongs to: their data is kept (and saved again) but no request reaches it; "+
			"give them keys to use them", "path", path, "accounts", unreachable)
	}
	return nil
}

// StateFileStatus reports whether a save of the state file is scheduled,
// and whether the state changed since the last save took its copy; both
// are false without a state file.
func (s *Service) StateFileStatus() (armed, changed bool) {
	if s.persist == nil {
		return false, false
	}
	return s.persist.Status()
}
