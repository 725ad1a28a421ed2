package model

import (
	"errors"
	"strings"
)

// Errors of a state document and of the state file.
var (
	// ErrInvalidState is wrapped by every error about a state document
	// itself (malformed JSON, a field that breaks a rule, a newer format):
	// the error is a *StateError saying where.
	ErrInvalidState = errors.New("mockserver: invalid state document")
	// ErrStateTooNew is wrapped, besides ErrInvalidState, by the error for
	// a state document of a newer format version than the server reads.
	ErrStateTooNew = errors.New("mockserver: state document of a newer format")
	// ErrStateFileInUse is wrapped by the error for a state file another
	// server (in this process or another) keeps its state in: two servers
	// writing one file would each overwrite the other's state.
	ErrStateFileInUse = errors.New("mockserver: in use by another server")
	// ErrStateClockAhead is wrapped by the error for a state file saved at
	// a time ahead of the server's clock, which cannot be moved forward to
	// it (the wall clock, any clock but a fake one): loading it would date
	// the changes from now on before the ones it holds.
	ErrStateClockAhead = errors.New("mockserver: saved ahead of the server's clock")
)

// StateError is why a state document was refused: mockserver.StateError.
// Nothing of the document was applied.
type StateError struct {
	// Path is where in the document, as "accounts[0].contexts[3].versions[1].name";
	// empty when the document as a whole is at fault (malformed JSON, not an object).
	Path string
	// Message says what is wrong, in words.
	Message string

	tooNew bool
}

// StateTooNew is the error for a document of a newer format than the
// server reads: a StateError that also matches ErrStateTooNew.
func StateTooNew(path, message string) *StateError {
	return &StateError{Path: path, Message: message, tooNew: true}
}

// Error returns "mockserver: state document: PATH: MESSAGE".
func (e *StateError) Error() string {
	if e.Path == "" {
		return "mockserver: state document: " + e.Message
	}
	return "mockserver: state document: " + e.Path + ": " + e.Message
}

// Is makes errors.Is match ErrInvalidState, and ErrStateTooNew for a
// newer format.
func (e *StateError) Is(target error) bool {
	return target == ErrInvalidState || (e.tooNew && target == ErrStateTooNew)
}

// StateFileError is a failure to load or write the state file:
// mockserver.StateFileError. It unwraps to the cause: a *StateError for a
// document that is not valid, ErrStateFileInUse, or the file system's
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
