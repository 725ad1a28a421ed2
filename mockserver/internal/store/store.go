// Package store is the mock server's data: its accounts, each with its
// contexts (every version of each, indexed by id, in creation order and by
// tag, a page at a time, with the Markdown analysis change tracking needs)
// and its webhooks (indexed server-wide by id and in registration order).
// It makes the /v1 JSON of a context ready as it changes, so a read costs
// little more than quoting its text.
//
// It owns the records and their locks: an account's lock guards its
// contexts and its list of webhooks; the webhook index's lock comes before
// any account's. Callers get copies or views, never a record to change. It
// does not check requests (the rules package does, before), fire events or
// deliver anything: a webhook is handed to the delivery engine as what the
// engine needs of it (ID, Account, Target). What it hands out is model's
// (a StoredContext, a Webhook without its secret: mockserver's types). It
// imports model, markdown, jsonwire and page, nothing else of the mock
// server.
package store

import (
	"cmp"
	"slices"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// Store is every account's contexts and webhooks. Accounts are added
// before the server serves (AddAccount), so finding one needs no lock.
type Store struct {
	accounts map[string]*Account
	list     []*Account // in the order they were added
	hooks    hookIndex
}

// New returns an empty store.
func New() *Store {
	return &Store{accounts: make(map[string]*Account), hooks: hookIndex{byID: make(map[string]*Webhook)}}
}

// AddAccount returns the account id, made if it is new. Call it before the
// store is shared: the account map is read without a lock.
func (s *Store) AddAccount(id string) *Account {
	if a := s.accounts[id]; a != nil {
		return a
	}
	a := newAccount(id)
	s.accounts[id] = a
	s.list = append(s.list, a)
	return a
}

// Account returns the account id, nil when there is none.
func (s *Store) Account(id string) *Account { return s.accounts[id] }

// Accounts returns the accounts in the order they were added.
func (s *Store) Accounts() []*Account { return s.list }

// Counts returns how many contexts and webhooks the accounts hold: a lock
// and a length per account, whatever they hold.
func (s *Store) Counts() (contexts, webhooks int) {
	for _, a := range s.list {
		c, w := a.Counts()
		contexts += c
		webhooks += w
	}
	return contexts, webhooks
}

// Reset empties every account, and forgets every webhook: a webhook
// forgotten takes no delivery from an event that read it just before.
func (s *Store) Reset() {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	for _, a := range s.list {
		a.mu.Lock()
		a.byID = make(map[string]*Context)
		a.order = nil
		a.byTag = make(map[string][]*Context)
		a.webhooks = nil
		a.mu.Unlock()
	}
	s.hooks.forgetLocked()
	s.hooks.byID = make(map[string]*Webhook)
	s.hooks.order = nil
}

// Targets returns the account's active webhooks subscribed to typ.
func (s *Store) Targets(accountID string, typ contextsvc.EventType) []*Webhook {
	a := s.accounts[accountID]
	if a == nil {
		return nil
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	var out []*Webhook
	for _, w := range a.webhooks {
		if st := w.state.Load(); st.Deliverable() && slices.Contains(st.Events, typ) {
			out = append(out, w)
		}
	}
	return out
}

// Loaded is a state to install: its accounts (built by NewContext and
// NewWebhook), and the registration counter of the webhooks.
type Loaded struct {
	Accounts   []*LoadedAccount
	WebhookSeq uint64
}

// LoadedAccount is an account of a Loaded state.
type LoadedAccount struct {
	ID         string
	ContextSeq uint64
	Contexts   []*Context // ascending seq
	Webhooks   []*Webhook
}

// Install makes st the store's data. Each account is swapped under its own
// lock, with indexes built before, and the webhook index with them, as
// Reset does: the webhooks replaced take no delivery from an event that
// read them just before. addAccounts lets st hold accounts the store has
// not (only before the store is shared); without it they are left out.
func (s *Store) Install(st *Loaded, addAccounts bool) {
	byID := make(map[string]*LoadedAccount, len(st.Accounts))
	for _, la := range st.Accounts {
		byID[la.ID] = la
		if addAccounts {
			s.AddAccount(la.ID)
		}
	}
	hooks := make(map[string]*Webhook)
	var hookOrder []*Webhook
	for _, la := range st.Accounts {
		for _, w := range la.Webhooks {
			hooks[w.id] = w
			hookOrder = append(hookOrder, w)
		}
	}
	slices.SortFunc(hookOrder, func(a, b *Webhook) int { return cmp.Compare(a.seq, b.seq) })
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	s.hooks.forgetLocked()
	s.hooks.byID, s.hooks.order = hooks, hookOrder
	s.hooks.seq = max(s.hooks.seq, st.WebhookSeq)
	for _, a := range s.list {
		la := byID[a.id]
		ids := make(map[string]*Context)
		tags := make(map[string][]*Context)
		var order []*Context
		var accountHooks []*Webhook
		seq := uint64(0)
		if la != nil {
			order, accountHooks, seq = la.Contexts, la.Webhooks, la.ContextSeq
			ids = make(map[string]*Context, len(order))
			for _, c := range order {
				ids[c.id] = c
				for _, t := range c.tags {
					tags[t] = append(tags[t], c) // ascending seq, as order is
				}
			}
		}
		a.mu.Lock()
		a.byID, a.order, a.byTag, a.webhooks = ids, order, tags, accountHooks
		if la != nil {
			a.nextSeq = seq
		}
		a.mu.Unlock()
	}
}

// Saved is a copy of the store's data for the state document, taken under
// the locks and written without them: strings and recorded versions never
// change once stored, so it shares them with the store.
type Saved struct {
	WebhookSeq uint64
	Accounts   []SavedAccount
}

// SavedAccount is an account of a Saved copy.
type SavedAccount struct {
	ID         string
	ContextSeq uint64
	Contexts   []SavedContext
	Webhooks   []SavedWebhook
}

// SavedContext is a context as the state document keeps it: its versions.
type SavedContext struct {
	ID       string
	Seq      uint64
	Versions []*Version
}

// SavedWebhook is a webhook as it was when copied.
type SavedWebhook struct {
	ID        string
	Seq       uint64
	CreatedAt time.Time
	State     WebhookState
}

// Save copies the store's data, an account at a time under its lock.
func (s *Store) Save() Saved {
	var out Saved
	s.hooks.mu.RLock()
	out.WebhookSeq = s.hooks.seq
	s.hooks.mu.RUnlock()
	for _, a := range s.list {
		a.mu.RLock()
		sa := SavedAccount{ID: a.id, ContextSeq: a.nextSeq, Contexts: make([]SavedContext, len(a.order))}
		for i, c := range a.order {
			sa.Contexts[i] = SavedContext{ID: c.id, Seq: c.seq, Versions: slices.Clip(c.versions)}
		}
		for _, w := range a.webhooks {
			sa.Webhooks = append(sa.Webhooks, SavedWebhook{ID: w.id, Seq: w.seq, CreatedAt: w.createdAt, State: *w.state.Load()})
		}
		a.mu.RUnlock()
		out.Accounts = append(out.Accounts, sa)
	}
	return out
}
