package mockserver

import (
	"errors"
	"io"
	"slices"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/state"
)

// This file is the Go side of the state document: what the server keeps
// across a restart (contexts with all their versions, webhooks with their
// secrets, pending deliveries with their schedules), written by SaveState
// and read back by LoadState. The document is written and read by the
// state package; the file that holds it (-state-file) is statefile.go's.

// StateFormatVersion is the version of the state document this server
// writes and the newest it reads. A document of a newer version is refused
// (the error wraps [ErrStateTooNew]) rather than read wrongly.
const StateFormatVersion = 1

// ErrInvalidState is wrapped by every error of [Server.LoadState] (and of
// [Open] for a state file) about the document itself: malformed JSON, a
// field that breaks a rule, a newer format. The error is a [*StateError]
// saying where.
var ErrInvalidState = errors.New("mockserver: invalid state document")

// ErrStateTooNew is wrapped, besides [ErrInvalidState], by the error for a
// state document of a newer format version than [StateFormatVersion].
var ErrStateTooNew = errors.New("mockserver: state document of a newer format")

// StateError is why a state document was refused. Nothing of it was
// applied.
type StateError struct {
	// Path is where in the document, as "accounts[0].contexts[3].versions[1].name";
	// empty when the document as a whole is at fault (malformed JSON, not an object).
	Path string
	// Message says what is wrong, in words.
	Message string

	tooNew bool
}

// Error returns "mockserver: state document: PATH: MESSAGE".
func (e *StateError) Error() string {
	if e.Path == "" {
		return "mockserver: state document: " + e.Message
	}
	return "mockserver: state document: " + e.Path + ": " + e.Message
}

// Is makes errors.Is match [ErrInvalidState], and [ErrStateTooNew] for a
// newer format.
func (e *StateError) Is(target error) bool {
	return target == ErrInvalidState || (e.tooNew && target == ErrStateTooNew)
}

// SaveState writes the server's state document to w: every account's
// contexts with all their versions, its webhooks with their secrets, and
// the pending webhook deliveries with their attempts and due times (see
// "State that survives a restart" in the package documentation). The
// event log, finished deliveries, faults, idempotency keys and rate-limit
// buckets are not part of it. It holds webhook secrets: keep it private.
//
// The copy is one whole state: a load or a reset happens wholly before it
// or wholly after. It is taken a little at a time (the deliveries, then
// each account under its own lock), so requests are held up only while
// pointers are copied; the text is written after. GET /_mock/state serves
// the same document.
func (s *Server) SaveState(w io.Writer) error {
	_, err := s.snapshotState().WriteTo(w)
	return err
}

// LoadState replaces the server's state with the document read from r, as
// [Server.SaveState] writes it: contexts, webhooks and pending deliveries
// become the document's, the event log and finished deliveries are
// emptied (running attempts are canceled and forgotten), and so are the
// idempotency keys, whose answers named the old contexts; the cursor salt
// becomes the document's, so its cursors keep working. Keys, faults,
// rate-limit buckets, options and the clock stay.
//
// Every field is held to the API's rules (names, content, tags, webhook
// urls and secrets, ids, times) and references must resolve; the first
// fault found is returned as a [*StateError] (wrapping [ErrInvalidState],
// and [ErrStateTooNew] for a newer format) and nothing is changed. An error
// reading r is returned as it is. Every account of the document must be
// one of the server's (a key's, or one its state file held when it
// started). PUT /_mock/state does the same over HTTP. The document is
// installed as one change: a copy of the state ([Server.SaveState]), a
// [Server.Reset] or another load happens wholly before it or wholly
// after.
func (s *Server) LoadState(r io.Reader) error { return publicStateError(s.loadState(r)) }

// loadState is LoadState with the state package's errors (a document
// refused is a *state.Error), as the admin API takes them.
func (s *Server) loadState(r io.Reader) error {
	st, err := s.readState(r, false)
	if err != nil {
		return err
	}
	// Read and checked without the lock (a large document takes a
	// while); installed under it.
	s.stateMu.Lock()
	s.installState(st, false)
	s.stateMu.Unlock()
	s.stateChanged()
	// Everything may have changed: the dashboard reloads as after a reset.
	s.changes.Publish(changes.Change{Kind: changes.KindReset})
	return nil
}

// snapshotState copies the state. The deliveries are copied first: each
// was made for a webhook that took deliveries then, so a delivery whose
// webhook is missing from the accounts copied after it, or no longer takes
// deliveries, lost it meanwhile (a delete, a deactivation, a reset), and
// is left out, as the server ends it; the document never names a webhook
// it does not hold, nor has a pending delivery to an inactive one.
func (s *Server) snapshotState() *state.Snapshot {
	s.stateMu.RLock()
	defer s.stateMu.RUnlock()
	snap := &state.Snapshot{Salt: s.cursors.Salt(), EventSeq: s.events.LastSeq()}
	pending, dseq := s.deliveries.SavePending()
	snap.DeliverySeq = dseq
	snap.Store = s.store.Save()
	deliverable := make(map[string]bool)
	for _, a := range snap.Store.Accounts {
		for _, w := range a.Webhooks {
			deliverable[w.ID] = w.State.Deliverable()
		}
	}
	snap.Deliveries = slices.DeleteFunc(pending, func(d delivery.Saved) bool { return !deliverable[d.WebhookID] })
	// The clock last: no time the copy holds is later (statefile.go).
	_, wall := s.clock.(RealClock)
	snap.SavedAt, snap.FakeClock = s.clock.Now(), !wall
	return snap
}

// installState makes st the server's state: the store's data (see
// store.Store.Install), then the history is emptied and the deliveries
// restored. The caller holds stateMu, so no copy of the state sees it
// half-way and no reset or other load comes between. addAccounts lets st
// hold accounts no key belongs to (only before the server serves: the
// account map is read without a lock).
func (s *Server) installState(st *state.Loaded, addAccounts bool) {
	s.store.Install(&st.Store, addAccounts)
	if st.Salt != nil {
		s.cursors.SetSalt(st.Salt)
	}
	s.events.ResetTo(st.EventSeq)
	s.idem.Reset()
	s.deliveries.Restore(st.Deliveries, st.DeliverySeq)
}

// readState reads and validates a whole document; nothing is applied. A
// document refused is a *state.Error.
func (s *Server) readState(r io.Reader, addAccounts bool) (*state.Loaded, error) {
	return state.Read(r, state.ReadConfig{
		Now: s.clock.Now(), HTTPSOnly: s.httpsOnly, AddAccounts: addAccounts, MaxWebhooks: MaxWebhooksPerAccount,
		Known: func(account string) bool { return s.store.Account(account) != nil },
	})
}

// publicStateError makes a document refused (a *state.Error) a
// *StateError; any other error is returned as it is.
func publicStateError(err error) error {
	if de, ok := errors.AsType[*state.Error](err); ok {
		return &StateError{Path: de.Path, Message: de.Message, tooNew: de.TooNew}
	}
	return err
}
