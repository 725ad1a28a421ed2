package mockserver

import (
	"encoding/json"
	"slices"
	"sort"
	"sync"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/markdown"
)

// account holds one account's contexts and webhooks behind its own lock, so
// requests of different accounts never contend.
type account struct {
	id string
	mu sync.RWMutex
	// byID finds live contexts.
	byID map[string]*contextRec
	// order holds the live contexts in creation order (ascending seq).
	// A page starts with a binary search for the cursor's seq, so its cost
	// does not depend on its depth; delete removes the entry (one memmove).
	order []*contextRec
	// byTag holds, per tag, the live contexts carrying it in seq order, so a
	// tag-filtered page walks only contexts with the rarest requested tag.
	byTag    map[string][]*contextRec
	nextSeq  uint64
	webhooks []*webhook
	// users are the user ids of the account's keys, first one first; the
	// admin publish action records the first.
	users []string
}

func newAccount(id string) *account {
	return &account{id: id, byID: make(map[string]*contextRec), byTag: make(map[string][]*contextRec)}
}

// contextRec is a stored context. Its fields change only under the
// account's write lock, and a stored string or slice is replaced, never
// changed in place, so a reader may keep a copy of the fields (a
// contextView) after unlocking.
//
// Each version's text is held once: content is the latest version's
// Content (the same string), and the JSON shapes are encoded on each read
// rather than cached beside the text.
type contextRec struct {
	seq       uint64
	id        string
	name      string
	content   string
	tags      []string
	version   int
	createdAt time.Time
	updatedAt time.Time
	versions  []*versionRec
	// jsonHead and jsonTail are the Context JSON around the content,
	// encoded at each change (see contextView): a read then encodes only
	// the content.
	jsonHead, jsonTail []byte
	// md is the analysis of content, kept so an update parses only the
	// new text; its section bodies are digests, not copies of the text.
	md markdown.Info
}

// versionRec is a recorded version.
type versionRec struct {
	v StoredVersion
}

// contextJSON is the wire shape of a Context (contextView.appendJSON
// writes it).
type contextJSON struct {
	ID        string   `json:"id"`
	Name      string   `json:"name"`
	Content   string   `json:"content"`
	Tags      []string `json:"tags"`
	Version   int      `json:"version"`
	CreatedAt string   `json:"createdAt"`
	UpdatedAt string   `json:"updatedAt"`
}

// versionJSON is the wire shape of a Version (appendVersionJSON writes it).
type versionJSON struct {
	ContextID string             `json:"contextId"`
	Version   int                `json:"version"`
	Name      string             `json:"name"`
	Content   string             `json:"content"`
	Tags      []string           `json:"tags"`
	CreatedAt string             `json:"createdAt"`
	CreatedBy string             `json:"createdBy"`
	Changes   contextsvc.Changes `json:"changes"`
}

// encodeMeta encodes the Context JSON around the content; call it under
// the account's write lock after every change.
func (c *contextRec) encodeMeta() {
	v := newContextView(c.id, c.name, c.content, c.tags, c.version, c.createdAt, c.updatedAt)
	c.jsonHead, c.jsonTail = v.head, v.tail
}

// view copies what a read of the current context needs; call it under the
// account's lock.
func (c *contextRec) view() contextView {
	return contextView{head: c.jsonHead, content: c.content, tail: c.jsonTail}
}

// encode returns the current Context JSON; call it under the account's
// lock.
func (c *contextRec) encode() []byte {
	v := c.view()
	return v.appendJSON(make([]byte, 0, len(v.head)+len(v.content)+len(v.tail)+16))
}

// asOfVersion returns the Context JSON as it was at version v (v must exist).
func (c *contextRec) asOfVersion(v *versionRec) []byte {
	cv := newContextView(c.id, v.v.Name, v.v.Content, v.v.Tags, v.v.Version, c.createdAt, v.v.CreatedAt)
	return cv.appendJSON(make([]byte, 0, len(cv.head)+len(cv.content)+len(cv.tail)+16))
}

func newVersionRec(v StoredVersion) *versionRec { return &versionRec{v: v} }

func (c *contextRec) hasTag(t string) bool { return slices.Contains(c.tags, t) }

// insert adds a new context (its seq is the largest) to every index.
func (a *account) insert(c *contextRec) {
	a.byID[c.id] = c
	a.order = append(a.order, c)
	for _, t := range c.tags {
		a.byTag[t] = insertBySeq(a.byTag[t], c)
	}
}

// remove drops c from every index.
func (a *account) remove(c *contextRec) {
	delete(a.byID, c.id)
	a.order = removeBySeq(a.order, c)
	for _, t := range c.tags {
		a.untag(c, t)
	}
}

func (a *account) untag(c *contextRec, t string) {
	l := removeBySeq(a.byTag[t], c)
	if len(l) == 0 {
		delete(a.byTag, t)
	} else {
		a.byTag[t] = l
	}
}

// retag moves c between tag indexes when its tags change.
func (a *account) retag(c *contextRec, old []string) {
	for _, t := range old {
		if !slices.Contains(c.tags, t) {
			a.untag(c, t)
		}
	}
	for _, t := range c.tags {
		if !slices.Contains(old, t) {
			a.byTag[t] = insertBySeq(a.byTag[t], c)
		}
	}
}

// searchSeq returns the index of the first entry of l with seq > after.
func searchSeq(l []*contextRec, after uint64) int {
	return sort.Search(len(l), func(i int) bool { return l[i].seq > after })
}

func insertBySeq(l []*contextRec, c *contextRec) []*contextRec {
	i := searchSeq(l, c.seq-1)
	return slices.Insert(l, i, c)
}

func removeBySeq(l []*contextRec, c *contextRec) []*contextRec {
	i := searchSeq(l, c.seq-1)
	if i < len(l) && l[i] == c {
		return slices.Delete(l, i, i+1)
	}
	return l
}

// page returns up to limit contexts after seq `after` that carry every tag
// in tags, and whether more follow. Without tags it is a binary search and
// a slice copy; with tags it walks the index of the rarest tag.
func (a *account) page(after uint64, limit int, tags []string) (out []*contextRec, hasMore bool) {
	src := a.order
	if len(tags) > 0 {
		src = nil
		for i, t := range tags {
			l, ok := a.byTag[t]
			if !ok {
				return nil, false
			}
			if i == 0 || len(l) < len(src) {
				src = l
			}
		}
	}
	out = make([]*contextRec, 0, min(limit, len(src)))
	for i := searchSeq(src, after); i < len(src); i++ {
		c := src[i]
		if len(tags) > 1 && !hasAll(c, tags) {
			continue
		}
		if len(out) == limit {
			return out, true
		}
		out = append(out, c)
	}
	return out, false
}

func hasAll(c *contextRec, tags []string) bool {
	for _, t := range tags {
		if !c.hasTag(t) {
			return false
		}
	}
	return true
}

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

// mockWebhookJSON is a webhook as the admin API shows it: the /v1 shape
// plus its account.
type mockWebhookJSON struct {
	ID        string                 `json:"id"`
	Account   string                 `json:"account"`
	URL       string                 `json:"url"`
	Events    []contextsvc.EventType `json:"events"`
	CreatedAt string                 `json:"createdAt"`
	Active    bool                   `json:"active"`
}

// MarshalJSON encodes the webhook as the admin API shows it:
// {"id","account","url","events","createdAt","active"}, the time in RFC
// 3339 UTC with millisecond precision; never a secret (a Webhook has
// none). The default decoding reads it back.
func (w Webhook) MarshalJSON() ([]byte, error) {
	events := w.Events
	if events == nil {
		events = []contextsvc.EventType{}
	}
	return json.Marshal(mockWebhookJSON{ID: w.ID, Account: w.Account, URL: w.URL, Events: events,
		CreatedAt: jsonwire.FormatTime(w.CreatedAt), Active: w.Active})
}

// Snapshot is a deep copy of everything the server stores (contexts with
// their versions, webhooks), ordered by account in key order then by
// creation; tests compare one taken before and after an action.
type Snapshot struct {
	// Contexts are every stored context with its versions.
	Contexts []StoredContext
	// Webhooks are every registered webhook.
	Webhooks []Webhook
}

func (c *contextRec) snapshot(acct string) StoredContext {
	sc := StoredContext{
		Account: acct, ID: c.id, Name: c.name, Content: c.content, Tags: slices.Clone(c.tags),
		Version: c.version, CreatedAt: c.createdAt, UpdatedAt: c.updatedAt,
	}
	for _, v := range c.versions {
		vv := v.v
		vv.Tags = slices.Clone(vv.Tags)
		vv.Changes.SectionsModified = slices.Clone(vv.Changes.SectionsModified)
		sc.Versions = append(sc.Versions, vv)
	}
	return sc
}

// Snapshot returns a deep copy of the store.
func (s *Server) Snapshot() Snapshot {
	var snap Snapshot
	for _, a := range s.accountList {
		a.mu.RLock()
		for _, c := range a.order {
			snap.Contexts = append(snap.Contexts, c.snapshot(a.id))
		}
		for _, w := range a.webhooks {
			snap.Webhooks = append(snap.Webhooks, w.public())
		}
		a.mu.RUnlock()
	}
	return snap
}

// Context returns the live context with the given id, whatever its
// account, and whether it exists.
func (s *Server) Context(id string) (StoredContext, bool) {
	for _, a := range s.accountList {
		a.mu.RLock()
		c, ok := a.byID[id]
		var sc StoredContext
		if ok {
			sc = c.snapshot(a.id)
		}
		a.mu.RUnlock()
		if ok {
			return sc, true
		}
	}
	return StoredContext{}, false
}

// Contexts returns the live contexts of an account in creation order.
func (s *Server) Contexts(accountID string) []StoredContext {
	a := s.accounts[accountID]
	if a == nil {
		return nil
	}
	a.mu.RLock()
	defer a.mu.RUnlock()
	out := make([]StoredContext, 0, len(a.order))
	for _, c := range a.order {
		out = append(out, c.snapshot(a.id))
	}
	return out
}

// Webhooks returns every registered webhook, by account (in key order)
// then registration; [Server.AccountWebhooks] returns one account's, and
// GET /_mock/webhooks pages through them in registration order. It copies
// the webhooks alone: its cost does not grow with the contexts stored.
func (s *Server) Webhooks() []Webhook {
	var out []Webhook
	for _, a := range s.accountList {
		out = a.appendWebhooks(out)
	}
	return out
}
