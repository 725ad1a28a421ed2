package statefile

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// Doc is a copy of a document, taken when a save begins and written
// without the locks it was copied under.
type Doc interface {
	// WriteTo writes the document.
	WriteTo(w io.Writer) (int64, error)
	// LogAttrs says what the document holds, for the log of its save.
	LogAttrs() []any
}

// Hooks let a test watch and hold up a Keeper; the zero Hooks do nothing.
type Hooks struct {
	// Saved is told of each save's outcome.
	Saved func(error)
	// Writing is called by a save between its copy of the document and
	// its write.
	Writing func()
	// Closing is called by Close once it has stopped the timer, before it
	// waits for a save under way.
	Closing func()
	// Written is told of the bytes written so far at each write of the
	// file, so a test can kill the process in the middle of one.
	Written func(n int64)
}

// Config configures a Keeper.
type Config struct {
	// Path is the file, as the user named it: it is resolved (Resolve)
	// when the keeper takes its lock, and the file it reaches then is the
	// one locked, read and written.
	Path string
	// Interval is how long, at least, a change waits before it is
	// written (the changes of that time are written together). A save
	// that took long makes the next wait at least ten times as long, so
	// writing never takes more than a tenth of the time.
	Interval time.Duration
	// Copy takes a copy of the document as it is now.
	Copy func() Doc
	// Logger is told of each save, and of a save that failed.
	Logger *slog.Logger
	// Hooks are a test's.
	Hooks Hooks
}

// FileError is a failure to write the file (or to take its lock again):
// model.StateFileError, the server's public mockserver.StateFileError.
type FileError = model.StateFileError

// Keeper keeps a document in its file: it writes it after a change, once
// the interval has passed, and at Close. Between changes no timer is armed
// and no goroutine runs. It holds the file's lock from Lock to Close.
type Keeper struct {
	cfg Config

	// dirty is set by every change (Changed) and cleared when a save
	// takes its copy; the change that sets it arms the timer.
	dirty atomic.Bool

	saveMu sync.Mutex // one save at a time

	mu       sync.Mutex
	timer    *time.Timer
	armed    bool
	closed   bool          // Close has stopped the timer
	current  bool          // the file holds the document as of the last save or load
	lastCost time.Duration // how long the last save took

	// target is the file Path reaches (Resolve), set by Lock.
	target string
	// lock is the lock while the keeper holds the file; nil before Lock
	// takes it and after Close lets it go.
	lock     *Held
	unlocked bool // Close let the lock go: a later save must take it again
}

// NewKeeper returns a keeper of cfg.Path that holds no lock yet.
func NewKeeper(cfg Config) *Keeper { return &Keeper{cfg: cfg} }

// Lock resolves the keeper's path to the file it reaches (Resolve), once:
// a link changed later does not move the state elsewhere; and takes that
// file's lock (see Lock), for the keeper's life.
func (k *Keeper) Lock() error {
	target, err := Resolve(k.cfg.Path)
	if err != nil {
		return err
	}
	h, err := Lock(target)
	if err != nil {
		return err
	}
	k.target, k.lock = target, h
	return nil
}

// Target returns the file the keeper's path reaches, which it reads and
// writes (set by Lock).
func (k *Keeper) Target() string { return k.target }

// Interval returns how long a change waits before it is written.
func (k *Keeper) Interval() time.Duration { return k.cfg.Interval }

// Unlock lets the file's lock go: the document could not be loaded, and
// the keeper is not used. A lock file its Lock made is removed, so a
// start that was refused leaves nothing of its own behind.
func (k *Keeper) Unlock() {
	k.saveMu.Lock()
	defer k.saveMu.Unlock()
	k.lock.Unlock(true)
	k.lock = nil
	k.unlocked = true
}

// Loaded notes that the file holds the document: it was just read from
// it.
func (k *Keeper) Loaded() {
	k.mu.Lock()
	k.current = true
	k.mu.Unlock()
}

// Status reports whether a save is scheduled, and whether the document
// changed since the last save took its copy.
func (k *Keeper) Status() (armed, changed bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.armed, k.dirty.Load()
}

// Changed notes that the document changed: the file is written once the
// interval has passed. It is cheap when nothing is pending.
func (k *Keeper) Changed() {
	if !k.dirty.Swap(true) {
		k.arm()
	}
}

// arm starts the timer of the next save, unless one is armed or the
// keeper is closed.
func (k *Keeper) arm() {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.armed || k.closed {
		return
	}
	k.armed = true
	k.timer = time.AfterFunc(max(k.cfg.Interval, 10*k.lastCost), k.periodicSave)
}

// periodicSave is the timer's save. It checks for Close under saveMu: a
// timer that fired just before Close stopped it writes nothing after
// Close has written (or found nothing to write).
func (k *Keeper) periodicSave() {
	k.mu.Lock()
	k.armed = false
	k.mu.Unlock()
	k.saveMu.Lock()
	defer k.saveMu.Unlock()
	k.mu.Lock()
	closed := k.closed
	k.mu.Unlock()
	if !closed {
		_ = k.saveLocked() // logged; a failed save is tried again
	}
}

// Save writes the file now.
func (k *Keeper) Save() error {
	k.saveMu.Lock()
	defer k.saveMu.Unlock()
	return k.saveLocked()
}

// saveLocked writes the file; saveMu is held.
func (k *Keeper) saveLocked() error {
	k.dirty.Store(false) // a change from now on is a change after this copy
	start := time.Now()
	doc := k.cfg.Copy()
	if h := k.cfg.Hooks.Writing; h != nil {
		h()
	}
	n, err := k.write(doc)
	cost := time.Since(start)
	k.mu.Lock()
	k.lastCost = cost
	if err == nil {
		k.current = true
	}
	k.mu.Unlock()
	log := k.cfg.Logger
	if err != nil {
		err = &FileError{Path: k.cfg.Path, Err: fmt.Errorf("cannot write it: %w", err)}
		log.Error("cannot write the state file; trying again later", "path", k.cfg.Path, "error", err)
		if !k.dirty.Swap(true) {
			k.arm()
		}
	} else if log.Enabled(context.Background(), slog.LevelInfo) {
		attrs := append([]any{"path", k.cfg.Path, "bytes", n}, doc.LogAttrs()...)
		log.Info("state saved", append(attrs, "duration", cost)...)
	}
	if h := k.cfg.Hooks.Saved; h != nil {
		h(err)
	}
	return err
}

// write writes doc to the file, atomically, telling the Written hook of
// its progress.
func (k *Keeper) write(doc Doc) (int64, error) {
	hook := k.cfg.Hooks.Written
	if hook == nil {
		return WriteAtomic(k.target, doc.WriteTo)
	}
	return WriteAtomic(k.target, func(f io.Writer) (int64, error) {
		return doc.WriteTo(&progressWriter{w: f, hook: hook})
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

// Close stops the timer, waits for a save under way (which has taken its
// copy and cleared the change: returning before it ends would leave the
// program's exit to cut it short, and the file older than the document),
// then writes the file a last time if the document changed since it was
// written (or it was never written), and lets the lock go. A later Close
// with changes to write takes the lock back, or fails when another holder
// has it.
func (k *Keeper) Close() error {
	k.mu.Lock()
	k.closed = true
	if k.timer != nil {
		k.timer.Stop()
	}
	k.armed = false
	k.mu.Unlock()
	if h := k.cfg.Hooks.Closing; h != nil {
		h()
	}
	k.saveMu.Lock()
	defer k.saveMu.Unlock()
	k.mu.Lock()
	current := k.current
	k.mu.Unlock()
	if current && !k.dirty.Load() {
		k.unlock()
		return nil
	}
	if k.unlocked {
		// Closed before, and the document changed since: write only if
		// no other holder took the file meanwhile.
		h, err := Lock(k.target)
		if err != nil {
			return &FileError{Path: k.cfg.Path, Err: err}
		}
		k.lock, k.unlocked = h, false
	}
	err := k.saveLocked()
	k.unlock()
	return err
}

// unlock lets the file's lock go, so another holder may take the file;
// saveMu is held.
func (k *Keeper) unlock() {
	k.lock.Unlock(false)
	k.lock = nil
	k.unlocked = true
}
