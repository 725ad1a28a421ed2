package store

import (
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// Webhook is a stored registration. What can change (url, events, secret,
// active, deleted) is a WebhookState replaced as a whole, never changed in
// place: the delivery engine reads a webhook's url and secret as they are
// at each attempt with one atomic load (Target), and lists read it without
// a lock. The secret never leaves the store but through Target and the
// state document.
type Webhook struct {
	id        string
	account   string
	createdAt time.Time
	seq       uint64 // registration order: the admin list's order and cursor position
	state     atomic.Pointer[WebhookState]
}

// WebhookState is the changeable part of a webhook.
type WebhookState struct {
	URL     string
	Events  []contextsvc.EventType
	Secret  string
	Active  bool
	Deleted bool
}

// Deliverable reports whether the webhook takes deliveries: it is active
// and not deleted.
func (st *WebhookState) Deliverable() bool { return st.Active && !st.Deleted }

// NewWebhook builds a webhook of account with the given registration order
// and state (a loaded state's, or a new one's).
func NewWebhook(id, account string, seq uint64, createdAt time.Time, st WebhookState) *Webhook {
	w := &Webhook{id: id, account: account, seq: seq, createdAt: createdAt}
	w.state.Store(&st)
	return w
}

// ID returns the webhook's id.
func (w *Webhook) ID() string { return w.id }

// Account returns the account that owns the webhook.
func (w *Webhook) Account() string { return w.account }

// Target returns where an attempt to the webhook goes now, with which
// secret, and whether the webhook takes deliveries (active, not deleted)
// or was deleted.
func (w *Webhook) Target() (url, secret string, deliverable, deleted bool) {
	st := w.state.Load()
	return st.URL, st.Secret, st.Deliverable(), st.Deleted
}

// State returns the webhook's state now; it must not be changed.
func (w *Webhook) State() *WebhookState { return w.state.Load() }

// Seq returns the webhook's place in registration order.
func (w *Webhook) Seq() uint64 { return w.seq }

// CreatedAt returns when the webhook was registered.
func (w *Webhook) CreatedAt() time.Time { return w.createdAt }

// Info returns a copy of w as the Go API and the admin API show it,
// without its secret (model.Webhook, mockserver.Webhook).
func (w *Webhook) Info() model.Webhook {
	st := w.state.Load()
	return model.Webhook{ID: w.id, Account: w.account, URL: st.URL, Events: slices.Clone(st.Events), CreatedAt: w.createdAt, Active: st.Active}
}

// hookIndex holds every account's webhooks by id and in registration
// order, for the admin API and the Go methods that take a webhook id: a
// lookup is a map access and a page starts with a binary search. Its lock
// is taken before an account's lock, never after.
type hookIndex struct {
	mu    sync.RWMutex
	seq   uint64
	byID  map[string]*Webhook
	order []*Webhook // ascending seq
}

// forgetLocked marks every indexed webhook deleted: replaced (a reset, a
// load), it takes no delivery from an event that read it just before.
func (ix *hookIndex) forgetLocked() {
	for _, w := range ix.order {
		st := *w.state.Load()
		st.Deleted = true
		w.state.Store(&st)
	}
}

// AddWebhook registers an active webhook of account a, made at the time
// now gives (under the locks), unless a already has max webhooks; it
// reports whether it did.
func (s *Store) AddWebhook(a *Account, id, url, secret string, events []contextsvc.EventType, now func() time.Time, max int) (*Webhook, bool) {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	a.mu.Lock()
	if len(a.webhooks) >= max {
		a.mu.Unlock()
		return nil, false
	}
	s.hooks.seq++
	w := NewWebhook(id, a.id, s.hooks.seq, now(), WebhookState{URL: url, Events: events, Secret: secret, Active: true})
	a.webhooks = append(a.webhooks, w)
	a.mu.Unlock()
	s.hooks.byID[w.id] = w
	s.hooks.order = append(s.hooks.order, w)
	return w, true
}

// Webhook returns the webhook id, whatever its account, and whether it
// exists. A deleted webhook does not.
func (s *Store) Webhook(id string) (*Webhook, bool) {
	s.hooks.mu.RLock()
	defer s.hooks.mu.RUnlock()
	w, ok := s.hooks.byID[id]
	return w, ok
}

// AccountWebhooks appends copies of a's webhooks to out, in registration
// order.
func (a *Account) AccountWebhooks(out []model.Webhook) []model.Webhook {
	a.mu.RLock()
	defer a.mu.RUnlock()
	out = slices.Grow(out, len(a.webhooks))
	for _, w := range a.webhooks {
		out = append(out, w.Info())
	}
	return out
}

// WebhookPage returns up to limit webhooks registered after position after
// (0: from the first), of account when it is not "", and the position to
// continue from when more follow (0 when none do). It starts with a binary
// search, so its cost does not grow with its depth.
func (s *Store) WebhookPage(after uint64, limit int, account string) (out []*Webhook, next uint64) {
	s.hooks.mu.RLock()
	defer s.hooks.mu.RUnlock()
	src := s.hooks.order
	i := sort.Search(len(src), func(i int) bool { return src[i].seq > after })
	out = make([]*Webhook, 0, min(limit, len(src)-i))
	for ; i < len(src); i++ {
		w := src[i]
		if account != "" && w.account != account {
			continue
		}
		if len(out) == limit {
			return out, src[i-1].seq
		}
		out = append(out, w)
	}
	return out, 0
}

// UpdateWebhook replaces the state of webhook id by what change makes of a
// copy of it, and returns the webhook with its states before and after;
// it reports false when there is no such webhook. A new state, never a
// change to the old one: an attempt that read the old one sends with it,
// the next reads this one.
func (s *Store) UpdateWebhook(id string, change func(*WebhookState)) (w *Webhook, before, after WebhookState, ok bool) {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	w, ok = s.hooks.byID[id]
	if !ok {
		return nil, WebhookState{}, WebhookState{}, false
	}
	old := w.state.Load()
	st := *old
	change(&st)
	w.state.Store(&st)
	return w, *old, st, true
}

// DeleteWebhook removes webhook id from its account and the index, and
// marks it deleted; it reports false when there is no such webhook.
func (s *Store) DeleteWebhook(id string) (*Webhook, bool) {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	w, ok := s.hooks.byID[id]
	if !ok {
		return nil, false
	}
	delete(s.hooks.byID, id)
	i := sort.Search(len(s.hooks.order), func(i int) bool { return s.hooks.order[i].seq >= w.seq })
	s.hooks.order = slices.Delete(s.hooks.order, i, i+1)
	a := s.accounts[w.account]
	a.mu.Lock()
	a.webhooks = slices.DeleteFunc(a.webhooks, func(x *Webhook) bool { return x == w })
	a.mu.Unlock()
	st := *w.state.Load()
	st.Deleted = true
	w.state.Store(&st)
	return w, true
}
