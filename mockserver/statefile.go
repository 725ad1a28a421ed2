package mockserver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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

// statePersister writes a server's state file: after a change, once the
// interval has passed, and at Close. Between changes no timer is armed
// and no goroutine runs.
type statePersister struct {
	path     string
	interval time.Duration

	// dirty is set by every change (stateChanged) and cleared when a save
	// takes its copy; the change that sets it arms the timer.
	dirty atomic.Bool

	saveMu sync.Mutex // one save at a time

	mu       sync.Mutex
	timer    *time.Timer
	armed    bool
	closed   bool          // Close has stopped the timer
	current  bool          // the file holds the state as of the last save or load
	lastCost time.Duration // how long the last save took

	// Hooks for this package's tests, set before the server changes:
	// saved is told of each save's outcome; writing is called by a save
	// between its copy of the state and its write; closing by Close once
	// it has stopped the timer, before it waits for a save under way.
	saved   func(error)
	writing func()
	closing func()

	// lock is the open lock file (statelock.go) while this server holds
	// the file; nil before Open takes it, after Close lets it go, and
	// where locks are not supported.
	lock     *os.File
	unlocked bool // Close let the lock go: a later save must take it again
}

// stateWriteHook, when set (by this package's tests only), is called with
// the bytes written so far each time a state file write makes progress,
// so a test can kill the process in the middle of a write.
var stateWriteHook func(written int64)

// ErrStateFileInUse is wrapped by the [*StateFileError] that [Open]
// returns when another server (in this process or another) already keeps
// its state in the same file: two servers writing one file would each
// overwrite the other's state.
var ErrStateFileInUse = errors.New("mockserver: in use by another server")

// lockStateFile takes the lock of the state file at path
// (statefile.Lock): a lock another server holds is an error wrapping
// ErrStateFileInUse.
func lockStateFile(path string) (*os.File, error) {
	f, err := statefile.Lock(path)
	if le, ok := errors.AsType[*statefile.LockedError](err); ok {
		return nil, fmt.Errorf("%w: %s is locked", ErrStateFileInUse, le.Name)
	}
	return f, err
}

// writeFileAtomic writes the state file at path (statefile.WriteAtomic),
// telling stateWriteHook of the progress.
func writeFileAtomic(path string, write func(io.Writer) (int64, error)) (int64, error) {
	hook := stateWriteHook
	if hook == nil {
		return statefile.WriteAtomic(path, write)
	}
	return statefile.WriteAtomic(path, func(f io.Writer) (int64, error) {
		return write(&progressWriter{w: f, hook: hook})
	})
}

// progressWriter tells hook of the bytes written so far at each write.
type progressWriter struct {
	w    io.Writer
	n    int64
	hook func(written int64)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	k, err := p.w.Write(b)
	p.n += int64(k)
	p.hook(p.n)
	return k, err
}

// stateChanged notes that the state changed: the state file is written
// once the interval has passed. It is cheap when nothing is pending.
func (s *Server) stateChanged() {
	if p := s.persist; p != nil && !p.dirty.Swap(true) {
		p.arm(s)
	}
}

// arm starts the timer of the next save, unless one is armed or the
// server is closed.
func (p *statePersister) arm(s *Server) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.armed || p.closed {
		return
	}
	p.armed = true
	p.timer = time.AfterFunc(max(p.interval, 10*p.lastCost), func() { s.periodicSave() })
}

// periodicSave is the timer's save. It checks for Close under saveMu: a
// timer that fired just before Close stopped it writes nothing after
// Close has written (or found nothing to write).
func (s *Server) periodicSave() {
	p := s.persist
	p.mu.Lock()
	p.armed = false
	p.mu.Unlock()
	p.saveMu.Lock()
	defer p.saveMu.Unlock()
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if !closed {
		_ = s.saveLocked() // logged; a failed save is tried again
	}
}

// saveStateFile writes the state file now.
func (s *Server) saveStateFile() error {
	p := s.persist
	p.saveMu.Lock()
	defer p.saveMu.Unlock()
	return s.saveLocked()
}

// saveLocked writes the state file; p.saveMu is held.
func (s *Server) saveLocked() error {
	p := s.persist
	p.dirty.Store(false) // a change from now on is a change after this copy
	start := time.Now()
	snap := s.snapshotState()
	if p.writing != nil {
		p.writing()
	}
	n, err := writeFileAtomic(p.path, snap.WriteTo)
	cost := time.Since(start)
	p.mu.Lock()
	p.lastCost = cost
	if err == nil {
		p.current = true
	}
	p.mu.Unlock()
	if err != nil {
		err = &StateFileError{Path: p.path, Err: fmt.Errorf("cannot write it: %w", err)}
		s.logger.Error("cannot write the state file; trying again later", "path", p.path, "error", err)
		if !p.dirty.Swap(true) {
			p.arm(s)
		}
	} else {
		nc, nw := 0, 0
		for _, a := range snap.Store.Accounts {
			nc += len(a.Contexts)
			nw += len(a.Webhooks)
		}
		s.logger.Info("state saved", "path", p.path, "bytes", n, "contexts", nc, "webhooks", nw,
			"pendingDeliveries", len(snap.Deliveries), "duration", cost)
	}
	if p.saved != nil {
		p.saved(err)
	}
	return err
}

// closeState stops the timer, waits for a save under way (which has taken
// its copy and cleared dirty: returning before it ends would leave the
// command's exit to cut it short, and the file older than the state),
// then writes the file a last time if the state changed since it was
// written (or it was never written).
func (s *Server) closeState() error {
	p := s.persist
	if p == nil {
		return nil
	}
	p.mu.Lock()
	p.closed = true
	if p.timer != nil {
		p.timer.Stop()
	}
	p.armed = false
	p.mu.Unlock()
	if p.closing != nil {
		p.closing()
	}
	p.saveMu.Lock()
	defer p.saveMu.Unlock()
	p.mu.Lock()
	current := p.current
	p.mu.Unlock()
	if current && !p.dirty.Load() {
		p.unlock()
		return nil
	}
	if p.unlocked {
		// Closed before, and the state changed since: write only if no
		// other server took the file meanwhile.
		f, err := lockStateFile(p.path)
		if err != nil {
			return &StateFileError{Path: p.path, Err: err}
		}
		p.lock, p.unlocked = f, false
	}
	err := s.saveLocked()
	p.unlock()
	return err
}

// unlock lets the state file's lock go, so another server may take the
// file; p.saveMu is held.
func (p *statePersister) unlock() {
	if p.lock != nil {
		p.lock.Close()
		p.lock = nil
	}
	p.unlocked = true
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
func (s *Server) loadStateFile() error {
	p := s.persist
	// The lock first: the temporary files below may be another server's
	// write under way, and its state is not this server's to load.
	lock, err := lockStateFile(p.path)
	if err != nil {
		return &StateFileError{Path: p.path, Err: err}
	}
	p.lock = lock
	if err := s.loadStateFileLocked(); err != nil {
		p.saveMu.Lock()
		p.unlock()
		p.saveMu.Unlock()
		return err
	}
	return nil
}

// loadStateFileLocked is loadStateFile once the lock is held.
func (s *Server) loadStateFileLocked() error {
	p := s.persist
	fail := func(format string, args ...any) error {
		return &StateFileError{Path: p.path, Err: fmt.Errorf(format, args...)}
	}
	if err := statefile.RemoveStaleTemps(p.path); err != nil {
		return fail("cannot clear what an interrupted write left: %w", err)
	}
	start := time.Now()
	f, err := os.Open(p.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := statefile.CheckWritableDir(p.path); err != nil {
			return fail("cannot write a file in its directory: %w", err)
		}
		s.logger.Info("no state file yet: starting empty; it is written once the state changes", "path", p.path)
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
		var se *StateError
		if errors.As(err, &se) {
			return &StateFileError{Path: p.path, Err: err}
		}
		return fail("cannot read it: %w", err)
	}
	if err := statefile.CheckWritableDir(p.path); err != nil {
		return fail("cannot write a file in its directory: %w", err)
	}
	s.stateMu.Lock()
	s.installState(st, true)
	s.stateMu.Unlock()
	p.current = true
	var unreachable []string
	for _, la := range st.Store.Accounts {
		if !s.hasKeyFor(la.ID) {
			unreachable = append(unreachable, la.ID)
		}
	}
	s.logger.Info("state loaded", "path", p.path, "contexts", st.Contexts, "versions", st.Versions,
		"webhooks", st.Webhooks, "pendingDeliveries", len(st.Deliveries), "duration", time.Since(start))
	if len(unreachable) > 0 {
		s.logger.Warn("the state file holds accounts no key belongs to: their data is kept (and saved again) but no request reaches it; "+
			"give them keys to use them", "path", p.path, "accounts", unreachable)
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
