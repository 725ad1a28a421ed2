package mockserver

import (
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/state"
)

// The state document is what the server keeps across a restart (contexts
// with all their versions, webhooks with their secrets, pending deliveries
// with their schedules), written by [Server.SaveState] and read back by
// [Server.LoadState]; the file that holds it ([WithStateFile]) is
// statefile.go's.

// StateFormatVersion (1) is the version of the state document this server
// writes and the newest it reads. A document of a newer version is refused
// (the error wraps [ErrStateTooNew]) rather than read wrongly.
const StateFormatVersion = state.Version

// ErrInvalidState is wrapped by every error of [Server.LoadState] (and of
// [Open] for a state file) about the document itself: malformed JSON, a
// field that breaks a rule, a newer format. The error is a [*StateError]
// saying where.
var ErrInvalidState = model.ErrInvalidState

// ErrStateTooNew is wrapped, besides [ErrInvalidState], by the error for a
// state document of a newer format version than [StateFormatVersion].
var ErrStateTooNew = model.ErrStateTooNew

// StateError is why a state document was refused: where in the document
// (Path, as "accounts[0].contexts[3].versions[1].name"; empty when the
// document as a whole is at fault) and what is wrong (Message). Nothing of
// the document was applied. Its Error is "mockserver: state document:
// PATH: MESSAGE", and errors.Is matches it to [ErrInvalidState], and to
// [ErrStateTooNew] for a newer format. Its fields are documented with its
// definition, [model.StateError].
type StateError = model.StateError
