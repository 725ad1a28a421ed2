package mockserver

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/state"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/statefile"
)

// DefaultStateInterval is how often, at most, a server with a state file
// ([WithStateFile]) writes it while its state changes.
const DefaultStateInterval = 10 * time.Second

// WithStateFile keeps the server's state in the file at path, so it
// survives a restart: [Open] (or [New]) loads it if it exists; the server
// writes it again at most every [WithStateInterval] while its state
// changes, and [Server.Close] writes it a last time. Each write replaces
// the file atomically (a temporary file in the same directory, written,
// synced, renamed over it, the directory synced), so a crash at any moment
// leaves the previous file or the new one, whole; the file is mode 0600,
// as it holds webhook secrets. A file that cannot be read or is not a
// valid state document stops the start with an error naming the path and
// what is wrong, and is left as it is. The document is the one
// [Server.SaveState] writes; see the package documentation.
//
// The file is the one path reaches when Open runs: a symbolic link is
// followed (once: changing it later moves nothing), and the server reads,
// writes and locks the link's target, the link staying a link.
//
// A file serves one server at a time: the server holds a lock on
// FILE.lock beside the file (created if missing, left in place) from Open
// to Close, and an Open of a file another server holds, in this process
// or another, by any name of it (relative or absolute, through a
// symbolic link), fails with an error wrapping [ErrStateFileInUse]. (A
// hard link is another file's name to the lock: Open warns of one.) An
// Open that fails leaves no lock file it made behind. The lock ends with
// the process too, so a crash leaves none behind, and a process the
// program starts (os/exec) never holds it. (Where the system has no
// POSIX record locks, as on Windows, nothing checks: run one server per
// file.)
//
// The time never goes back across a restart: the file keeps the server's
// clock as it saved it (its savedAt, and whether the clock was a fake
// one). A [FakeClock] nothing has used yet resumes exactly there, if the
// file was saved on a fake clock (any other FakeClock is moved forward to
// it, never back); a server on the wall clock, or any other [Clock],
// refuses a file saved ahead of it ([ErrStateClockAhead]): the changes
// from now on would be dated before the ones it holds.
//
// An empty path is an error.
func WithStateFile(path string) Option {
	return func(cf *config) error {
		if path == "" {
			return invalidOption("WithStateFile(\"\"): give a file name, or leave the option out for no state file")
		}
		cf.stateFile = path
		return nil
	}
}

// WithStateInterval sets how long, at least, a server with a state file
// waits after a change before it writes the file (the changes of that
// time are written together); the default is [DefaultStateInterval]. It
// must be positive. A write
// that took long (a large state) makes the next wait at least ten times as
// long, so writing never takes more than a tenth of the time.
func WithStateInterval(d time.Duration) Option {
	return positive("WithStateInterval", d, func(cf *config) *time.Duration { return &cf.stateInterval })
}

// ErrStateFileInUse is wrapped by the [*StateFileError] that [Open]
// returns when another server (in this process or another) already keeps
// its state in the same file: two servers writing one file would each
// overwrite the other's state.
var ErrStateFileInUse = errors.New("mockserver: in use by another server")

// ErrStateClockAhead is wrapped by the [*StateFileError] that [Open]
// returns when the state file was saved at a time ahead of the server's
// clock, which cannot be moved forward to it (the wall clock, and any
// [Clock] but a [FakeClock]): typically a file saved on a fake clock
// that was advanced, loaded without one. Loading it would date the
// changes from now on before the ones it holds (an update before its
// context's creation).
var ErrStateClockAhead = errors.New("mockserver: saved ahead of the server's clock")

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

// stateChanged notes that the state changed: the state file is written
// once the interval has passed. It is cheap when nothing is pending.
func (s *Server) stateChanged() {
	if s.persist != nil {
		s.persist.Changed()
	}
}

// saveStateFile writes the state file now.
func (s *Server) saveStateFile() error { return stateFileError(s.persist.Save()) }

// closeState stops the state file's timer, waits for a save under way and
// writes the file a last time if the state changed since it was written,
// then lets the file's lock go (statefile.Keeper.Close).
func (s *Server) closeState() error {
	if s.persist == nil {
		return nil
	}
	return stateFileError(s.persist.Close())
}

// stateFileError turns the keeper's errors into StateFileErrors: a lock
// another server holds wraps ErrStateFileInUse.
func stateFileError(err error) error {
	if err == nil {
		return nil
	}
	path, cause := "", err
	if fe, ok := errors.AsType[*statefile.FileError](err); ok {
		path, cause = fe.Path, fe.Err
	}
	if le, ok := errors.AsType[*statefile.LockedError](cause); ok {
		cause = fmt.Errorf("%w: %s is locked", ErrStateFileInUse, le.Name)
	}
	return &StateFileError{Path: path, Err: cause}
}

// StateFileError is a failure to load or write the state file of
// [WithStateFile]: [Open] returns one for a file it cannot load,
// [Server.Close] for a last write that failed. It unwraps to the cause: a
// [*StateError] for a document that is not valid, or the file system's
// error.
type StateFileError struct {
	// Path is the state file.
	Path string
	// Err says what is wrong.
	Err error
}

// Error returns "mockserver: state file PATH: what is wrong".
func (e *StateFileError) Error() string {
	return "mockserver: state file " + e.Path + ": " + strings.TrimPrefix(e.Err.Error(), "mockserver: ")
}

// Unwrap returns the cause.
func (e *StateFileError) Unwrap() error { return e.Err }

// loadStateFile loads the state file at start, before the server serves:
// a missing file is a first start; anything else that fails is an error,
// and the file is left as it is. The directory must take a new file, or
// every save would fail later.
func (s *Server) loadStateFile(path string) error {
	// The lock first: the temporary files below may be another server's
	// write under way, and its state is not this server's to load.
	if err := s.persist.Lock(); err != nil {
		return stateFileError(&statefile.FileError{Path: path, Err: err})
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
func (s *Server) loadStateFileLocked(path, target string) error {
	fail := func(format string, args ...any) error {
		return &StateFileError{Path: path, Err: fmt.Errorf(format, args...)}
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
		s.logger.Info(fmt.Sprintf("no state file yet: starting empty; it is written %s after the state first changes (the state interval), and at shutdown",
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
		if _, ok := errors.AsType[*state.Error](err); ok {
			return &StateFileError{Path: path, Err: publicStateError(err)}
		}
		return fail("cannot read it: %w", err)
	}
	if err := statefile.CheckWritableDir(target); err != nil {
		return fail("cannot write a file in its directory: %w", err)
	}
	if err := s.resumeClock(st); err != nil {
		return &StateFileError{Path: path, Err: err}
	}
	s.stateMu.Lock()
	s.installState(st, true)
	s.stateMu.Unlock()
	s.persist.Loaded()
	var unreachable []string
	for _, la := range st.Store.Accounts {
		if !s.hasKeyFor(la.ID) {
			unreachable = append(unreachable, la.ID)
		}
	}
	s.logger.Info("state loaded", append(pathAttrs(path, target), "contexts", st.Contexts, "versions", st.Versions,
		"webhooks", st.Webhooks, "pendingDeliveries", len(st.Deliveries), "duration", time.Since(start))...)
	if n := statefile.Links(target); n > 1 {
		s.logger.Warn("the state file has other names (hard links): a server started on another of them does not see this one's lock, "+
			"and each write replaces the file under this name only, the others keeping the old state; give every server the one name (a symbolic link is followed)",
			"path", target, "names", n)
	}
	if len(unreachable) > 0 {
		s.logger.Warn("the state file holds accounts no key belongs to: their data is kept (and saved again) but no request reaches it; "+
			"give them keys to use them", "path", path, "accounts", unreachable)
	}
	return nil
}

// hasKeyFor reports whether a key of the server belongs to the account.
func (s *Server) hasKeyFor(account string) bool {
	for _, k := range s.keys {
		if k.Account == account {
			return true
		}
	}
	return false
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
//   - a FakeClock resumes there: exactly, when the file was saved on a
//     fake clock and this one has not been used yet (the command's
//     -fake-clock); else it is only moved forward to it;
//   - any other clock (the wall clock) cannot be moved: a file saved
//     ahead of it is refused (ErrStateClockAhead), since the changes made
//     from now on would be dated before the ones it holds.
//
// A file without savedAt (written by hand) leaves the clock as it is.
func (s *Server) resumeClock(st *state.Loaded) error {
	if st.SavedAt.IsZero() {
		return nil
	}
	saved := st.SavedAt.UTC().Format(time.RFC3339Nano)
	if fc, ok := s.clock.(*FakeClock); ok {
		switch {
		case st.FakeClock && fc.fake.Resume(st.SavedAt):
			s.logger.Info("the fake clock resumes where the state file left it", "now", saved)
		case fc.Now().Before(st.SavedAt):
			fc.Set(st.SavedAt)
			s.logger.Info("the fake clock is moved forward to when the state file was saved", "now", saved)
		}
		return nil
	}
	if now := s.clock.Now(); st.SavedAt.After(now) {
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
			"to resume at that time, or after %s", ErrStateClockAhead, saved, kind, ahead, saved)
	}
	return nil
}
