package store

import (
	"slices"
	"sort"
	"sync"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/markdown"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// Account holds one account's contexts and webhooks behind its own lock,
// so requests of different accounts never contend.
type Account struct {
	id string
	mu sync.RWMutex
	// byID finds live contexts.
	byID map[string]*Context
	// order holds the live contexts in creation order (ascending seq).
	// A page starts with a binary search for the cursor's seq, so its cost
	// does not depend on its depth; delete removes the entry (one memmove).
	order []*Context
	// byTag holds, per tag, the live contexts carrying it in seq order, so a
	// tag-filtered page walks only contexts with the rarest requested tag.
	byTag    map[string][]*Context
	nextSeq  uint64
	webhooks []*Webhook
	// users are the user ids of the account's keys, first one first; the
	// admin publish action records the first. They are set before the
	// store is shared.
	users []string
}

func newAccount(id string) *Account {
	return &Account{id: id, byID: make(map[string]*Context), byTag: make(map[string][]*Context)}
}

// ID returns the account's id, its name.
func (a *Account) ID() string { return a.id }

// AddUser records a user of the account's keys. Call it before the store
// is shared.
func (a *Account) AddUser(user string) { a.users = append(a.users, user) }

// Counts returns how many contexts and webhooks the account holds.
func (a *Account) Counts() (contexts, webhooks int) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	return len(a.order), len(a.webhooks)
}

// insert adds a new context (its seq is the largest) to every index.
func (a *Account) insert(c *Context) {
	a.byID[c.id] = c
	a.order = append(a.order, c)
	for _, t := range c.tags {
		a.byTag[t] = insertBySeq(a.byTag[t], c)
	}
}

// remove drops c from every index.
func (a *Account) remove(c *Context) {
	delete(a.byID, c.id)
	a.order = removeBySeq(a.order, c)
	for _, t := range c.tags {
		a.untag(c, t)
	}
}

func (a *Account) untag(c *Context, t string) {
	l := removeBySeq(a.byTag[t], c)
	if len(l) == 0 {
		delete(a.byTag, t)
	} else {
		a.byTag[t] = l
	}
}

// retag moves c between tag indexes when its tags change.
func (a *Account) retag(c *Context, old []string) {
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
func searchSeq(l []*Context, after uint64) int {
	return sort.Search(len(l), func(i int) bool { return l[i].seq > after })
}

func insertBySeq(l []*Context, c *Context) []*Context {
	i := searchSeq(l, c.seq-1)
	return slices.Insert(l, i, c)
}

func removeBySeq(l []*Context, c *Context) []*Context {
	i := searchSeq(l, c.seq-1)
	if i < len(l) && l[i] == c {
		return slices.Delete(l, i, i+1)
	}
	return l
}

// page returns up to limit contexts after seq `after` that carry every tag
// in tags, and whether more follow. Without tags it is a binary search and
// a slice copy; with tags it walks the index of the rarest tag.
func (a *Account) page(after uint64, limit int, tags []string) (out []*Context, hasMore bool) {
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
	out = make([]*Context, 0, min(limit, len(src)))
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

func hasAll(c *Context, tags []string) bool {
	for _, t := range tags {
		if !slices.Contains(c.tags, t) {
			return false
		}
	}
	return true
}

// Page returns the views of up to limit contexts created after position
// after that carry every tag in tags, the position of the last one, and
// whether more follow. The views are copied under the lock and encoded
// after it, so writers never wait for a page of large contexts.
func (a *Account) Page(after uint64, limit int, tags []string) (views []View, last uint64, hasMore bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	page, hasMore := a.page(after, limit, tags)
	views = make([]View, len(page))
	for i, c := range page {
		views[i] = c.view()
	}
	if len(page) > 0 {
		last = page[len(page)-1].seq
	}
	return views, last, hasMore
}

// Get returns the view of the live context id.
func (a *Account) Get(id string) (View, bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	c, ok := a.byID[id]
	if !ok {
		return View{}, false
	}
	return c.view(), true
}

// Created is what a create made: the context's view and what its events
// tell.
type Created struct {
	View    View
	ID      string
	Name    string
	Tags    []string
	Changes contextsvc.Changes
}

// Create stores a new context of version 1 by user by, at the time now
// gives under the account's lock (so creation times follow creation
// order). tags must hold no duplicates; nil is none. The Markdown work
// happens before the lock.
func (a *Account) Create(id, name, content string, tags []string, now func() time.Time, by string) Created {
	c := &Context{id: id, name: name, content: content, tags: tags, version: 1}
	if c.tags == nil {
		c.tags = []string{}
	}
	c.md = markdown.Analyze([]byte(c.content))
	changes := markdown.Diff(nil, c.md)
	a.mu.Lock()
	at := now()
	c.createdAt, c.updatedAt = at, at
	a.nextSeq++
	c.seq = a.nextSeq
	c.versions = []*Version{{Version: 1, Name: c.name, Content: c.content, Tags: c.tags, CreatedAt: at, CreatedBy: by, Changes: changes}}
	c.encodeMeta()
	a.insert(c)
	v := c.view()
	a.mu.Unlock()
	return Created{View: v, ID: c.id, Name: c.name, Tags: c.tags, Changes: changes}
}

// Update is a change to a context; a nil field is left as it is.
type Update struct {
	Name, Content *string
	// Tags replace the context's when HasTags is set.
	Tags    []string
	HasTags bool
}

// Updated is what an update did: the context's view and, when it changed
// anything (Changed), what its events tell.
type Updated struct {
	View    View
	Changed bool
	ID      string
	Name    string
	Version int
	Changes contextsvc.Changes
}

// Update applies u to the live context id by user by, recording a new
// version at the time now gives (under the lock) unless u changes nothing.
// The new text is parsed before the lock, so reads of the account never
// wait for Markdown work; the diff against the stored analysis under the
// lock is cheap. It reports false when there is no such context.
func (a *Account) Update(id string, u Update, now func() time.Time, by string) (Updated, bool) {
	var info markdown.Info
	if u.Content != nil {
		info = markdown.Analyze([]byte(*u.Content))
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.byID[id]
	if !ok {
		return Updated{}, false
	}
	name, content, tags := c.name, c.content, c.tags
	if u.Name != nil {
		name = *u.Name
	}
	if u.Content != nil {
		content = *u.Content
	}
	if u.HasTags {
		tags = u.Tags
	}
	if name == c.name && content == c.content && slices.Equal(tags, c.tags) {
		return Updated{View: c.view()}, true
	}
	changes := contextsvc.Changes{SectionsModified: []string{}}
	if content != c.content {
		changes = markdown.Diff(&c.md, info)
		c.md = info
	}
	at := now()
	oldTags := c.tags
	c.name, c.content, c.tags = name, content, tags
	c.version++
	c.updatedAt = at
	c.versions = append(c.versions, &Version{
		Version: c.version, Name: name, Content: content, Tags: tags, CreatedAt: at, CreatedBy: by, Changes: changes,
	})
	a.retag(c, oldTags)
	c.encodeMeta()
	return Updated{View: c.view(), Changed: true, ID: c.id, Name: name, Version: c.version, Changes: changes}, true
}

// Delete removes the live context id and returns its name, or reports
// false when there is none.
func (a *Account) Delete(id string) (name string, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	c, ok := a.byID[id]
	if !ok {
		return "", false
	}
	a.remove(c)
	return c.name, true
}

// Versions returns up to limit versions of the live context id after
// version after, the number of the last one, and whether more follow; it
// reports false when there is no such context. Version n sits at index
// n-1, so the cursor indexes the versions directly. Versions never change
// once recorded: they are encoded after the lock is released.
func (a *Account) Versions(id string, after uint64, limit int) (page []*Version, end int, hasMore, ok bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	c, ok := a.byID[id]
	if !ok {
		return nil, 0, false, false
	}
	start := len(c.versions)
	if after < uint64(start) {
		start = int(after)
	}
	end = min(start+limit, len(c.versions))
	page = append([]*Version(nil), c.versions[start:end]...)
	return page, end, end < len(c.versions), true
}

// AsOf is a context as of one version, as the export renders it.
type AsOf struct {
	Name, Content string
	Version       int
	// UpdatedAt is when the version was recorded.
	UpdatedAt time.Time
	// JSON is the Context JSON as of the version.
	JSON []byte
}

// AsOf returns the live context id as of version want (0: the current
// one) and whether it has that version, and its current version; found is
// false when there is no such context.
func (a *Account) AsOf(id string, want int) (doc AsOf, has bool, current int, found bool) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	c, ok := a.byID[id]
	if !ok {
		return AsOf{}, false, 0, false
	}
	switch {
	case want == 0 || want == c.version:
		return AsOf{Name: c.name, Content: c.content, Version: c.version, UpdatedAt: c.updatedAt, JSON: c.encode()}, true, c.version, true
	case want <= len(c.versions):
		v := c.versions[want-1]
		return AsOf{Name: v.Name, Content: v.Content, Version: v.Version, UpdatedAt: v.CreatedAt, JSON: c.asOfVersion(v)}, true, c.version, true
	}
	return AsOf{}, false, c.version, true
}

// Snapshot returns copies of the account's live contexts, in creation
// order, and of its webhooks, in registration order, taken under one lock.
func (a *Account) Snapshot() ([]model.StoredContext, []model.Webhook) {
	a.mu.RLock()
	defer a.mu.RUnlock()
	cs := make([]model.StoredContext, 0, len(a.order))
	for _, c := range a.order {
		cs = append(cs, c.copy(a.id))
	}
	ws := make([]model.Webhook, 0, len(a.webhooks))
	for _, w := range a.webhooks {
		ws = append(ws, w.Info())
	}
	return cs, ws
}
