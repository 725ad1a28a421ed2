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
	"github.com/contextsvc/contextsvc-go/mockserver/internal/rules"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/store"
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
	scope := httpapi.ListScope(append([]string{a.ID()}, slices.Sorted(slices.Values(tags))...)...)
	limit, after, e := s.cursors.PageParams(q, httpapi.CursorContexts, scope)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	views, last, hasMore := a.Page(after, limit, tags)
	next := ""
	if hasMore {
		next = s.cursors.Encode(httpapi.CursorContexts, last, scope)
	}
	// The page is encoded after the lock is released: writers never wait
	// for a page of large contexts.
	buf := jsonwire.GetBuffer()
	b := append((*buf)[:0], `{"data":[`...)
	for i := range views {
		if i > 0 {
			b = append(b, ',')
		}
		b = views[i].AppendJSON(b)
	}
	*buf = httpapi.AppendListEnd(b, hasMore, next)
	httpapi.WriteJSON(w, http.StatusOK, *buf)
	jsonwire.PutBuffer(buf)
}

// writeContext writes v as the Context JSON with status.
func writeContext(w http.ResponseWriter, status int, v *store.View) {
	buf := jsonwire.GetBuffer()
	*buf = v.AppendJSON((*buf)[:0])
	httpapi.WriteJSON(w, status, *buf)
	jsonwire.PutBuffer(buf)
}

// notFound is the 404 of a request for the context id, which its account
// does not have.
func notFound(id string) *httpapi.Error {
	return httpapi.NotFound("no context with id " + strconv.Quote(id))
}

func (s *Server) getContext(w http.ResponseWriter, r *http.Request, k *apiKey) {
	v, ok := k.acct.Get(r.PathValue("id"))
	if !ok {
		httpapi.WriteError(w, notFound(r.PathValue("id")))
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
	content := ""
	if f.content != nil {
		content = *f.content
	}
	a := k.acct
	c := a.Create(ids.New("ctx_"), *f.name, content, f.tags, s.now, k.User)
	s.emit(r.Context(), a.ID(), contextsvc.EventContextCreated, contextCreatedData{ContextID: c.ID, Name: c.Name, Version: 1, Tags: c.Tags, CreatedBy: k.User})
	s.emit(r.Context(), a.ID(), contextsvc.EventContextVersionCreated, versionCreatedData{ContextID: c.ID, Version: 1, CreatedBy: k.User})
	writeContext(w, http.StatusCreated, &c.View)
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
	a := k.acct
	u, ok := a.Update(r.PathValue("id"), store.Update{Name: f.name, Content: f.content, Tags: f.tags, HasTags: f.hasTags}, s.now, k.User)
	if !ok {
		httpapi.WriteError(w, notFound(r.PathValue("id")))
		return
	}
	if u.Changed {
		s.emit(r.Context(), a.ID(), contextsvc.EventContextUpdated, contextUpdatedData{ContextID: u.ID, Name: u.Name, Version: u.Version, UpdatedBy: k.User, Changes: u.Changes})
		s.emit(r.Context(), a.ID(), contextsvc.EventContextVersionCreated, versionCreatedData{ContextID: u.ID, Version: u.Version, CreatedBy: k.User})
	}
	writeContext(w, http.StatusOK, &u.View)
}

func (s *Server) deleteContext(w http.ResponseWriter, r *http.Request, k *apiKey) {
	a := k.acct
	id := r.PathValue("id")
	name, ok := a.Delete(id)
	if !ok {
		httpapi.WriteError(w, notFound(id))
		return
	}
	s.emit(r.Context(), a.ID(), contextsvc.EventContextDeleted, contextDeletedData{ContextID: id, Name: name, DeletedBy: k.User})
	b, _ := json.Marshal(struct {
		ID      string `json:"id"`
		Deleted bool   `json:"deleted"`
	}{id, true})
	httpapi.WriteJSON(w, http.StatusOK, b)
}

func (s *Server) listVersions(w http.ResponseWriter, r *http.Request, k *apiKey) {
	a := k.acct
	id := r.PathValue("id")
	scope := httpapi.ListScope(a.ID(), id)
	limit, after, e := s.cursors.PageParams(r.URL.Query(), httpapi.CursorVersions, scope)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	page, end, hasMore, ok := a.Versions(id, after, limit)
	if !ok {
		httpapi.WriteError(w, notFound(id))
		return
	}
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
		b = store.AppendVersionJSON(b, id, v)
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
	p, ok := s.store.Publish(contextID)
	if !ok {
		return Event{}, fmt.Errorf("%w: %q", ErrContextNotFound, contextID)
	}
	d := contextPublishedData{ContextID: contextID, Name: p.Name, Version: p.Version, PublishedBy: p.By}
	return Event(s.emit(ctx, p.Account, contextsvc.EventContextPublished, d)), nil
}

// ErrContextNotFound is returned by Go methods given the id of no live
// context.
var ErrContextNotFound = errors.New("mockserver: no such context")
