package mockserver

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
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
// A file serves one server at a time: the server holds a lock on
// PATH.lock beside it (created if missing, left in place) from Open to
// Close, and an Open of a file another server holds, in this process or
// another, fails with an error wrapping [ErrStateFileInUse]. The lock
// ends with the process too, so a crash leaves none behind. (Where the
// system has no flock, as on Windows, nothing checks: run one server per
// file.)
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
	if err := s.loadStateFileLocked(path); err != nil {
		s.persist.Unlock()
		return err
	}
	return nil
}

// loadStateFileLocked is loadStateFile once the lock is held.
func (s *Server) loadStateFileLocked(path string) error {
	fail := func(format string, args ...any) error {
		return &StateFileError{Path: path, Err: fmt.Errorf(format, args...)}
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
		s.logger.Info("no state file yet: starting empty; it is written once the state changes", "path", path)
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
	if err := statefile.CheckWritableDir(path); err != nil {
		return fail("cannot write a file in its directory: %w", err)
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
	s.logger.Info("state loaded", "path", path, "contexts", st.Contexts, "versions", st.Versions,
		"webhooks", st.Webhooks, "pendingDeliveries", len(st.Deliveries), "duration", time.Since(start))
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
