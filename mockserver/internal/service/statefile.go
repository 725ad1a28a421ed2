package service

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/clock"
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
	if err := s.loadStateFileLocked(path, s.persist.Target()); err != nil {
		s.persist.Unlock()
		return err
	}
	return nil
}

// loadStateFileLocked is loadStateFile once the lock is held: path as
// the user named it, target the file it reaches (through symbolic links),
// which is read and written.
func (s *Service) loadStateFileLocked(path, target string) error {
	fail := func(format string, args ...any) error {
		return &model.StateFileError{Path: path, Err: fmt.Errorf(format, args...)}
	}
	if err := statefile.RemoveStaleTemps(target); err != nil {
		return fail("cannot clear what an interrupted write left: %w", err)
	}
	start := time.Now()
	f, err := os.Open(target)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := statefile.CheckWritableDir(target); err != nil {
			return fail("cannot write a file in its directory: %w", err)
		}
		s.Logger.Info(fmt.Sprintf("no state file yet: starting empty; it is written %s after the state first changes (the state interval), and at shutdown",
			s.persist.Interval()), pathAttrs(path, target)...)
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
	if err := statefile.CheckWritableDir(target); err != nil {
		return fail("cannot write a file in its directory: %w", err)
	}
	if err := s.resumeClock(st); err != nil {
		return &model.StateFileError{Path: path, Err: err}
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
	s.Logger.Info("state loaded", append(pathAttrs(path, target), "contexts", st.Contexts, "versions", st.Versions,
		"webhooks", st.Webhooks, "pendingDeliveries", len(st.Deliveries), "duration", time.Since(start))...)
	if n := statefile.Links(target); n > 1 {
		s.Logger.Warn("the state file has other names (hard links): a server started on another of them does not see this one's lock, "+
			"and each write replaces the file under this name only, the others keeping the old state; give every server the one name (a symbolic link is followed)",
			"path", target, "names", n)
	}
	if len(unreachable) > 0 {
		s.Logger.Warn("the state file holds accounts no key belongs to: their data is kept (and saved again) but no request reaches it; "+
			"give them keys to use them", "path", path, "accounts", unreachable)
	}
	return nil
}

// pathAttrs are the log attributes naming the state file: the path, and
// the file it reaches when that is another (a symbolic link's target).
func pathAttrs(path, target string) []any {
	if abs, err := filepath.Abs(path); err == nil && abs == target {
		return []any{"path", path}
	}
	return []any{"path", path, "file", target}
}

// resumeClock makes the time go on across a restart from where the state
// file left it (its savedAt), before the state is installed (the
// deliveries' timers are armed on the clock resumed):
//
//   - a fake clock (mockserver.FakeClock, whose engine is a *clock.Fake)
//     resumes there: exactly, when the file was saved on a fake clock and
//     this one has not been used yet (the command's -fake-clock); else it
//     is only moved forward to it;
//   - any other clock (the wall clock) cannot be moved: a file saved
//     ahead of it is refused (ErrStateClockAhead), since the changes made
//     from now on would be dated before the ones it holds.
//
// A file without savedAt (written by hand) leaves the clock as it is.
func (s *Service) resumeClock(st *state.Loaded) error {
	if st.SavedAt.IsZero() {
		return nil
	}
	saved := st.SavedAt.UTC().Format(time.RFC3339Nano)
	if fc, ok := s.Engine.(*clock.Fake); ok {
		switch {
		case st.FakeClock && fc.Resume(st.SavedAt):
			s.Logger.Info("the fake clock resumes where the state file left it", "now", saved)
		case fc.Now().Before(st.SavedAt):
			fc.Set(st.SavedAt)
			s.Logger.Info("the fake clock is moved forward to when the state file was saved", "now", saved)
		}
		return nil
	}
	if now := s.Clock.Now(); st.SavedAt.After(now) {
		ahead := st.SavedAt.Sub(now).Round(time.Millisecond)
		if ahead >= time.Second {
			ahead = ahead.Round(time.Second)
		}
		kind := "a clock"
		if st.FakeClock {
			kind = "a fake clock"
		}
		return fmt.Errorf("%w: it was saved at %s by %s %s ahead of this server's, which cannot go forward to it; "+
			"changes from now on would be dated before the ones it holds. Start on a fake clock (-fake-clock, WithClock(NewFakeClock(…))) "+
			"to resume at that time, or after %s", model.ErrStateClockAhead, saved, kind, ahead, saved)
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
