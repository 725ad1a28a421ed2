package mockserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/ids"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/markdown"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/rules"
)

func (s *Server) listContexts(w http.ResponseWriter, r *http.Request, k *apiKey) {
	q := r.URL.Query()
	var tags []string
	for _, t := range q["tag"] {
		if t == "" {
			httpapi.WriteError(w, httpapi.BadRequest("tag", "tag must not be empty"))
			return
		}
		// Past maxTags distinct tags no context can match, so the page is
		// empty whatever follows; stopping keeps the duplicate check short
		// for a query repeating tag= thousands of times.
		if len(tags) <= rules.MaxTags && !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	a := k.acct
	// A cursor continues the account's list with the same tags, in any
	// order.
	scope := httpapi.ListScope(append([]string{a.id}, slices.Sorted(slices.Values(tags))...)...)
	limit, after, e := s.cursors.PageParams(q, httpapi.CursorContexts, scope)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	a.mu.RLock()
	page, hasMore := a.page(after, limit, tags)
	views := make([]contextView, len(page))
	for i, c := range page {
		views[i] = c.view()
	}
	a.mu.RUnlock()
	next := ""
	if hasMore {
		next = s.cursors.Encode(httpapi.CursorContexts, page[len(page)-1].seq, scope)
	}
	// The page is encoded after the lock is released: writers never wait
	// for a page of large contexts.
	buf := jsonwire.GetBuffer()
	b := append((*buf)[:0], `{"data":[`...)
	for i := range views {
		if i > 0 {
			b = append(b, ',')
		}
		b = views[i].appendJSON(b)
	}
	*buf = httpapi.AppendListEnd(b, hasMore, next)
	httpapi.WriteJSON(w, http.StatusOK, *buf)
	jsonwire.PutBuffer(buf)
}

// writeContext writes v as the Context JSON with status.
func writeContext(w http.ResponseWriter, status int, v *contextView) {
	buf := jsonwire.GetBuffer()
	*buf = v.appendJSON((*buf)[:0])
	httpapi.WriteJSON(w, status, *buf)
	jsonwire.PutBuffer(buf)
}

// found returns the account's live context with the request's id.
func found(a *account, r *http.Request) (*contextRec, *httpapi.Error) {
	id := r.PathValue("id")
	if c, ok := a.byID[id]; ok {
		return c, nil
	}
	return nil, httpapi.NotFound("no context with id " + strconv.Quote(id))
}

func (s *Server) getContext(w http.ResponseWriter, r *http.Request, k *apiKey) {
	a := k.acct
	a.mu.RLock()
	c, e := found(a, r)
	var v contextView
	if c != nil {
		v = c.view()
	}
	a.mu.RUnlock()
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	writeContext(w, http.StatusOK, &v)
}

func (s *Server) now() time.Time { return s.clock.Now().UTC().Truncate(time.Millisecond) }

func (s *Server) createContext(w http.ResponseWriter, r *http.Request, k *apiKey) {
	f, _, e := decodeContextFields(r)
	if e == nil && f.name == nil {
		e = httpapi.BadRequest("name", "name is required")
	}
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	c := &contextRec{id: ids.New("ctx_"), name: *f.name, tags: f.tags, version: 1}
	if f.content != nil {
		c.content = *f.content
	}
	if c.tags == nil {
		c.tags = []string{}
	}
	// The Markdown work happens before the lock.
	c.md = markdown.Analyze([]byte(c.content))
	changes := markdown.Diff(nil, c.md)
	a := k.acct
	a.mu.Lock()
	now := s.now()
	c.createdAt, c.updatedAt = now, now
	a.nextSeq++
	c.seq = a.nextSeq
	c.versions = []*versionRec{newVersionRec(StoredVersion{
		Version: 1, Name: c.name, Content: c.content, Tags: c.tags, CreatedAt: now, CreatedBy: k.User, Changes: changes,
	})}
	c.encodeMeta()
	a.insert(c)
	v := c.view()
	a.mu.Unlock()

	s.emit(r.Context(), a.id, contextsvc.EventContextCreated, contextCreatedData{ContextID: c.id, Name: c.name, Version: 1, Tags: c.tags, CreatedBy: k.User})
	s.emit(r.Context(), a.id, contextsvc.EventContextVersionCreated, versionCreatedData{ContextID: c.id, Version: 1, CreatedBy: k.User})
	writeContext(w, http.StatusCreated, &v)
}

func (s *Server) updateContext(w http.ResponseWriter, r *http.Request, k *apiKey) {
	f, n, e := decodeContextFields(r)
	if e == nil && n == 0 {
		e = httpapi.BadRequest("", "the body must carry at least one of name, content, tags")
	}
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	// The new text is parsed before the lock, so reads of the account
	// never wait for Markdown work; the diff against the stored analysis
	// under the lock is cheap.
	var info markdown.Info
	if f.content != nil {
		info = markdown.Analyze([]byte(*f.content))
	}
	a := k.acct
	a.mu.Lock()
	c, e := found(a, r)
	if e != nil {
		a.mu.Unlock()
		httpapi.WriteError(w, e)
		return
	}
	name, content, tags := c.name, c.content, c.tags
	if f.name != nil {
		name = *f.name
	}
	if f.content != nil {
		content = *f.content
	}
	if f.hasTags {
		tags = f.tags
	}
	if name == c.name && content == c.content && slices.Equal(tags, c.tags) {
		v := c.view()
		a.mu.Unlock()
		writeContext(w, http.StatusOK, &v)
		return
	}
	changes := contextsvc.Changes{SectionsModified: []string{}}
	if content != c.content {
		changes = markdown.Diff(&c.md, info)
		c.md = info
	}
	now := s.now()
	oldTags := c.tags
	c.name, c.content, c.tags = name, content, tags
	c.version++
	c.updatedAt = now
	c.versions = append(c.versions, newVersionRec(StoredVersion{
		Version: c.version, Name: name, Content: content, Tags: tags, CreatedAt: now, CreatedBy: k.User, Changes: changes,
	}))
	a.retag(c, oldTags)
	c.encodeMeta()
	v := c.view()
	id, version := c.id, c.version
	a.mu.Unlock()

	s.emit(r.Context(), a.id, contextsvc.EventContextUpdated, contextUpdatedData{ContextID: id, Name: name, Version: version, UpdatedBy: k.User, Changes: changes})
	s.emit(r.Context(), a.id, contextsvc.EventContextVersionCreated, versionCreatedData{ContextID: id, Version: version, CreatedBy: k.User})
	writeContext(w, http.StatusOK, &v)
}

func (s *Server) deleteContext(w http.ResponseWriter, r *http.Request, k *apiKey) {
	a := k.acct
	a.mu.Lock()
	c, e := found(a, r)
	if e != nil {
		a.mu.Unlock()
		httpapi.WriteError(w, e)
		return
	}
	a.remove(c)
	a.mu.Unlock()
	s.emit(r.Context(), a.id, contextsvc.EventContextDeleted, contextDeletedData{ContextID: c.id, Name: c.name, DeletedBy: k.User})
	b, _ := json.Marshal(struct {
		ID      string `json:"id"`
		Deleted bool   `json:"deleted"`
	}{c.id, true})
	httpapi.WriteJSON(w, http.StatusOK, b)
}

func (s *Server) listVersions(w http.ResponseWriter, r *http.Request, k *apiKey) {
	a := k.acct
	scope := httpapi.ListScope(a.id, r.PathValue("id"))
	limit, after, e := s.cursors.PageParams(r.URL.Query(), httpapi.CursorVersions, scope)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	a.mu.RLock()
	c, e := found(a, r)
	if e != nil {
		a.mu.RUnlock()
		httpapi.WriteError(w, e)
		return
	}
	// Version n sits at index n-1, so the cursor (the last version
	// returned) indexes the slice directly.
	start := len(c.versions)
	if after < uint64(start) {
		start = int(after)
	}
	end := min(start+limit, len(c.versions))
	// Versions never change once recorded, so they are encoded after the
	// lock is released.
	page := append([]*versionRec(nil), c.versions[start:end]...)
	hasMore := end < len(c.versions)
	id := c.id
	a.mu.RUnlock()
	next := ""
	if hasMore {
		next = s.cursors.Encode(httpapi.CursorVersions, uint64(end), scope)
	}
	buf := jsonwire.GetBuffer()
	b := append((*buf)[:0], `{"data":[`...)
	for i, v := range page {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendVersionJSON(b, id, &v.v)
	}
	*buf = httpapi.AppendListEnd(b, hasMore, next)
	httpapi.WriteJSON(w, http.StatusOK, *buf)
	jsonwire.PutBuffer(buf)
}

// Publish records a context.published event for the live context with id
// contextID (the mock's stand-in for the dashboard action, which has no
// public endpoint), as published by the first user of its account. It
// reports an error wrapping [ErrContextNotFound] when no such context
// exists. ctx bounds the wait for room when the delivery backlog is full
// (see [WithDeliveryBacklog]).
func (s *Server) Publish(ctx context.Context, contextID string) (Event, error) {
	for _, a := range s.accountList {
		a.mu.RLock()
		c, ok := a.byID[contextID]
		var d contextPublishedData
		if ok {
			// An account a state file brought, with no key, publishes as
			// the context's last author.
			by := c.versions[len(c.versions)-1].v.CreatedBy
			if len(a.users) > 0 {
				by = a.users[0]
			}
			d = contextPublishedData{ContextID: c.id, Name: c.name, Version: c.version, PublishedBy: by}
		}
		a.mu.RUnlock()
		if ok {
			return Event(s.emit(ctx, a.id, contextsvc.EventContextPublished, d)), nil
		}
	}
	return Event{}, fmt.Errorf("%w: %q", ErrContextNotFound, contextID)
}

// ErrContextNotFound is returned by Go methods given the id of no live
// context.
var ErrContextNotFound = errors.New("mockserver: no such context")
