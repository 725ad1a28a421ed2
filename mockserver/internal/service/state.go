package service

import (
	"io"
	"slices"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/state"
)

// This file is the service's side of the state document: what the server
// keeps across a restart (contexts with all their versions, webhooks with
// their secrets, pending deliveries with their schedules), copied by
// SaveState and installed by LoadState. The document is written and read
// by the state package; the file that holds it is statefile.go's.

// SaveState writes the state document to w (mockserver.Server.SaveState
// documents it). The copy is one whole state, taken a little at a time
// (the deliveries, then each account under its own lock), so requests are
// held up only while pointers are copied; the text is written after.
func (s *Service) SaveState(w io.Writer) error {
	_, err := s.snapshotState().WriteTo(w)
	return err
}

// LoadState replaces the state with the document read from r
// (mockserver.Server.LoadState documents it). A document refused is a
// *model.StateError, and nothing is changed; an error reading r is
// returned as it is.
func (s *Service) LoadState(r io.Reader) error {
	st, err := s.readState(r, false)
	if err != nil {
		return err
	}
	// Read and checked without the lock (a large document takes a
	// while); installed under it.
	s.stateMu.Lock()
	s.installState(st, false)
	s.stateMu.Unlock()
	s.StateChanged()
	// Everything may have changed: the dashboard reloads as after a reset.
	s.Changes.Publish(changes.Change{Kind: changes.KindReset})
	return nil
}

// snapshotState copies the state. The deliveries are copied first: each
// was made for a webhook that took deliveries then, so a delivery whose
// webhook is missing from the accounts copied after it, or no longer takes
// deliveries, lost it meanwhile (a delete, a deactivation, a reset), and
// is left out, as the server ends it; the document never names a webhook
// it does not hold, nor has a pending delivery to an inactive one.
func (s *Service) snapshotState() *state.Snapshot {
	s.stateMu.RLock()
	defer s.stateMu.RUnlock()
	snap := &state.Snapshot{Salt: s.Cursors.Salt(), EventSeq: s.Events.LastSeq()}
	pending, dseq := s.Deliveries.SavePending()
	snap.DeliverySeq = dseq
	snap.Store = s.Store.Save()
	deliverable := make(map[string]bool)
	for _, a := range snap.Store.Accounts {
		for _, w := range a.Webhooks {
			deliverable[w.ID] = w.State.Deliverable()
		}
	}
	snap.Deliveries = slices.DeleteFunc(pending, func(d delivery.Saved) bool { return !deliverable[d.WebhookID] })
	// The clock last: no time the copy holds is later (statefile.go).
	_, wall := s.Clock.(model.RealClock)
	snap.SavedAt, snap.FakeClock = s.Clock.Now(), !wall
	return snap
}

// installState makes st the state: the store's data (see
// store.Store.Install), then the history is emptied and the deliveries
// restored. The caller holds stateMu, so no copy of the state sees it
// half-way and no reset or other load comes between. addAccounts lets st
// hold accounts no key belongs to (only before the server serves: the
// account map is read without a lock).
func (s *Service) installState(st *state.Loaded, addAccounts bool) {
	s.Store.Install(&st.Store, addAccounts)
	if st.Salt != nil {
		s.Cursors.SetSalt(st.Salt)
	}
	s.Events.ResetTo(st.EventSeq)
	s.Idem.Reset()
	s.Deliveries.Restore(st.Deliveries, st.DeliverySeq)
}

// readState reads and validates a whole document; nothing is applied. A
// document refused is a *model.StateError.
func (s *Service) readState(r io.Reader, addAccounts bool) (*state.Loaded, error) {
	return state.Read(r, state.ReadConfig{
		Now: s.Clock.Now(), HTTPSOnly: s.HTTPSOnly, AddAccounts: addAccounts, MaxWebhooks: s.MaxWebhooks,
		Known: func(account string) bool { return s.Store.Account(account) != nil },
	})
}
