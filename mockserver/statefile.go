package mockserver

import (
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
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
// [Server.SaveState] writes; the guide docs/mockserver.md, "The state
// document", describes it.
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
var ErrStateFileInUse = model.ErrStateFileInUse

// StateFileError is a failure to load or write the state file of
// [WithStateFile]: [Open] returns one for a file it cannot load,
// [Server.Close] for a last write that failed. Its Error is "mockserver:
// state file PATH: what is wrong", and it unwraps to the cause (Err): a
// [*StateError] for a document that is not valid, [ErrStateFileInUse], or
// the file system's error. Its fields are documented with its definition,
// [model.StateFileError].
type StateFileError = model.StateFileError

// ErrStateClockAhead is wrapped by the [*StateFileError] that [Open]
// returns when the state file was saved at a time ahead of the server's
// clock, which cannot be moved forward to it (the wall clock, and any
// [Clock] but a [FakeClock]): typically a file saved on a fake clock
// that was advanced, loaded without one. Loading it would date the
// changes from now on before the ones it holds (an update before its
// context's creation).
var ErrStateClockAhead = model.ErrStateClockAhead
