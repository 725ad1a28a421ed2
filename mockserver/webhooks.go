package mockserver

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/ids"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/rules"
)

// MaxWebhooksPerAccount is how many webhooks one account may have. A
// registration past it is a 400 (delete one first, DELETE
// /_mock/webhooks/{id} or [Server.DeleteWebhook]): each event is delivered
// to every subscribed webhook, so the number of webhooks multiplies the
// deliveries an event makes.
const MaxWebhooksPerAccount = 100

// webhook is a stored registration. What can change (url, events, secret,
// active, deleted) is a webhookState replaced as a whole, never changed in
// place: the delivery engine reads a webhook's url and secret as they are
// at each attempt with one atomic load, and lists read it without a lock.
// The secret never leaves the package.
type webhook struct {
	id        string
	account   string
	createdAt time.Time
	seq       uint64 // registration order: the admin list's order and cursor position
	state     atomic.Pointer[webhookState]
}

// ID returns the webhook's id.
func (w *webhook) ID() string { return w.id }

// Account returns the account that owns the webhook.
func (w *webhook) Account() string { return w.account }

// Target returns where an attempt to the webhook goes now, with which
// secret, and whether the webhook takes deliveries (active, not deleted)
// or was deleted.
func (w *webhook) Target() (url, secret string, deliverable, deleted bool) {
	st := w.state.Load()
	return st.url, st.secret, st.deliverable(), st.deleted
}

// webhookState is the changeable part of a webhook.
type webhookState struct {
	url     string
	events  []contextsvc.EventType
	secret  string
	active  bool
	deleted bool
}

// newWebhook returns an active webhook with the given settings.
func newWebhook(id, account, url, secret string, events []contextsvc.EventType, createdAt time.Time) *webhook {
	w := &webhook{id: id, account: account, createdAt: createdAt}
	w.state.Store(&webhookState{url: url, events: events, secret: secret, active: true})
	return w
}

// deliverable reports whether the webhook takes deliveries: it is active
// and not deleted.
func (st *webhookState) deliverable() bool { return st.active && !st.deleted }

func (w *webhook) public() Webhook {
	st := w.state.Load()
	return Webhook{ID: w.id, Account: w.account, URL: st.url, Events: slices.Clone(st.events), CreatedAt: w.createdAt, Active: st.active}
}

type webhookJSON struct {
	ID        string                 `json:"id"`
	URL       string                 `json:"url"`
	Events    []contextsvc.EventType `json:"events"`
	CreatedAt string                 `json:"createdAt"`
	Active    bool                   `json:"active"`
}

// webhookIndex holds every account's webhooks by id and in registration
// order, for the admin API and the Go methods that take a webhook id: a
// lookup is a map access and a page starts with a binary search. Its lock
// is taken before an account's lock, never after.
type webhookIndex struct {
	mu    sync.RWMutex
	seq   uint64
	byID  map[string]*webhook
	order []*webhook // ascending seq
}

func (s *Server) registerWebhook(w http.ResponseWriter, r *http.Request, k *apiKey) {
	f, e := s.decodeWebhook(r)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	wh, e := s.addWebhook(k.acct, f)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	st := wh.state.Load()
	b, _ := json.Marshal(webhookJSON{ID: wh.id, URL: st.url, Events: st.events, CreatedAt: jsonwire.FormatTime(wh.createdAt), Active: true})
	httpapi.WriteJSON(w, http.StatusCreated, b)
}

// webhookFields are the validated fields of a registration.
type webhookFields struct {
	url    string
	events []contextsvc.EventType
	secret string
}

// addWebhook stores a new webhook of account a, unless a already has
// MaxWebhooksPerAccount.
func (s *Server) addWebhook(a *account, f webhookFields) (*webhook, *httpapi.Error) {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	a.mu.Lock()
	if len(a.webhooks) >= MaxWebhooksPerAccount {
		a.mu.Unlock()
		return nil, httpapi.BadRequest("", fmt.Sprintf("this account already has %d webhooks, the most it may have: "+
			"delete one first (DELETE /_mock/webhooks/{id}), or change one (PATCH /_mock/webhooks/{id})", MaxWebhooksPerAccount))
	}
	wh := newWebhook(ids.New("wh_"), a.id, f.url, f.secret, f.events, s.now())
	s.hooks.seq++
	wh.seq = s.hooks.seq
	a.webhooks = append(a.webhooks, wh)
	a.mu.Unlock()
	s.hooks.byID[wh.id] = wh
	s.hooks.order = append(s.hooks.order, wh)
	s.changes.Publish(changes.Change{Kind: changes.KindWebhook, ID: wh.id, Action: "created", Account: a.id})
	return wh, nil
}

func (s *Server) decodeWebhook(r *http.Request) (webhookFields, *httpapi.Error) {
	fields, e := httpapi.ReadObject(r, "url", "events", "secret")
	if e != nil {
		return webhookFields{}, e
	}
	for _, f := range []string{"url", "events", "secret"} {
		if _, ok := fields[f]; !ok {
			return webhookFields{}, httpapi.BadRequest(f, f+" is required")
		}
	}
	var wf webhookFields
	if wf.url, e = s.decodeWebhookURL(fields["url"]); e != nil {
		return webhookFields{}, e
	}
	if wf.events, e = decodeWebhookEvents(fields["events"]); e != nil {
		return webhookFields{}, e
	}
	if wf.secret, e = decodeWebhookSecret(fields["secret"]); e != nil {
		return webhookFields{}, e
	}
	return wf, nil
}

func (s *Server) decodeWebhookURL(raw json.RawMessage) (string, *httpapi.Error) {
	u, e := httpapi.DecodeString("url", raw)
	if e != nil {
		return "", e
	}
	return u, rules.WebhookURL(u, s.httpsOnly)
}

func decodeWebhookEvents(raw json.RawMessage) ([]contextsvc.EventType, *httpapi.Error) {
	evs, e := httpapi.DecodeStrings("events", raw)
	if e != nil {
		return nil, e
	}
	types := make([]contextsvc.EventType, len(evs))
	for i, ev := range evs {
		types[i] = contextsvc.EventType(ev)
	}
	return rules.WebhookEvents(types)
}

func decodeWebhookSecret(raw json.RawMessage) (string, *httpapi.Error) {
	secret, e := httpapi.DecodeString("secret", raw)
	if e != nil {
		// decodeString's messages name what is wrong, never the value.
		return "", e
	}
	return secret, rules.WebhookSecret(secret)
}
