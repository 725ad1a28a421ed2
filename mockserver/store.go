package mockserver

import (
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/store"
)

// StoredContext is a snapshot of a stored context, for tests.
type StoredContext struct {
	// Account owns the context; only its keys see it.
	Account string
	// ID is the context id ("ctx_…").
	ID string
	// Name is the current name.
	Name string
	// Content is the current Markdown text.
	Content string
	// Tags are the current tags, never nil.
	Tags []string
	// Version is the current version number, from 1.
	Version int
	// CreatedAt is when the context was created.
	CreatedAt time.Time
	// UpdatedAt is when its latest version was recorded.
	UpdatedAt time.Time
	// Versions are all recorded versions, oldest first.
	Versions []StoredVersion
}

// StoredVersion is one recorded version of a context.
type StoredVersion struct {
	// Version is the version number, from 1.
	Version int
	// Name is the context's name as of this version.
	Name string
	// Content is the Markdown text as of this version.
	Content string
	// Tags are the tags as of this version.
	Tags []string
	// CreatedAt is when the version was recorded.
	CreatedAt time.Time
	// CreatedBy is the user ("user_…") whose key made the change.
	CreatedBy string
	// Changes is what the version changed from the one before.
	Changes contextsvc.Changes
}

// Webhook is a registered webhook as the server stores it. The secret is
// deliberately not part of it.
type Webhook struct {
	// ID is the webhook id ("wh_…").
	ID string
	// Account owns the webhook; its events are the ones delivered.
	Account string
	// URL receives the deliveries.
	URL string
	// Events are the subscribed event types, without duplicates.
	Events []contextsvc.EventType
	// CreatedAt is when the webhook was registered.
	CreatedAt time.Time
	// Active tells whether deliveries are made to it (see
	// [Server.UpdateWebhook]).
	Active bool
}

// MarshalJSON encodes the webhook as the admin API shows it:
// {"id","account","url","events","createdAt","active"}, the time in RFC
// 3339 UTC with millisecond precision; never a secret (a Webhook has
// none). The default decoding reads it back.
func (w Webhook) MarshalJSON() ([]byte, error) { return store.Info(w).MarshalJSON() }

// Snapshot is a deep copy of everything the server stores (contexts with
// their versions, webhooks), ordered by account in key order then by
// creation; tests compare one taken before and after an action.
type Snapshot struct {
	// Contexts are every stored context with its versions.
	Contexts []StoredContext
	// Webhooks are every registered webhook.
	Webhooks []Webhook
}

// storedContext converts the store's copy of a context.
func storedContext(c store.Copy) StoredContext {
	sc := StoredContext{Account: c.Account, ID: c.ID, Name: c.Name, Content: c.Content, Tags: c.Tags, Version: c.Version,
		CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
	if c.Versions != nil {
		sc.Versions = make([]StoredVersion, len(c.Versions))
		for i, v := range c.Versions {
			sc.Versions[i] = StoredVersion(v)
		}
	}
	return sc
}

// Snapshot returns a deep copy of the store.
func (s *Server) Snapshot() Snapshot {
	var snap Snapshot
	for _, a := range s.store.Accounts() {
		cs, ws := a.Snapshot()
		for _, c := range cs {
			snap.Contexts = append(snap.Contexts, storedContext(c))
		}
		for _, w := range ws {
			snap.Webhooks = append(snap.Webhooks, Webhook(w))
		}
	}
	return snap
}

// Context returns the live context with the given id, whatever its
// account, and whether it exists.
func (s *Server) Context(id string) (StoredContext, bool) {
	c, ok := s.store.Copy(id)
	if !ok {
		return StoredContext{}, false
	}
	return storedContext(c), true
}

// Contexts returns the live contexts of an account in creation order.
func (s *Server) Contexts(accountID string) []StoredContext {
	a := s.store.Account(accountID)
	if a == nil {
		return nil
	}
	cs, _ := a.Snapshot()
	out := make([]StoredContext, 0, len(cs))
	for _, c := range cs {
		out = append(out, storedContext(c))
	}
	return out
}

// Webhooks returns every registered webhook, by account (in key order)
// then registration; [Server.AccountWebhooks] returns one account's, and
// GET /_mock/webhooks pages through them in registration order. It copies
// the webhooks alone: its cost does not grow with the contexts stored.
func (s *Server) Webhooks() []Webhook {
	var out []Webhook
	for _, a := range s.store.Accounts() {
		out = appendWebhooks(out, a)
	}
	return out
}
