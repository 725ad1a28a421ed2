package v1api

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/ids"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/keys"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/rules"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/store"
)

func (h *Handler) listContexts(w http.ResponseWriter, r *http.Request, k *keys.Key, id string) {
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
	a := k.Data
	// A cursor continues the account's list with the same tags, in any
	// order.
	scope := httpapi.ListScope(append([]string{a.ID()}, slices.Sorted(slices.Values(tags))...)...)
	limit, after, e := h.svc.Cursors.PageParams(q, httpapi.CursorContexts, scope)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	views, last, hasMore := a.Page(after, limit, tags)
	next := ""
	if hasMore {
		next = h.svc.Cursors.Encode(httpapi.CursorContexts, last, scope)
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

func (h *Handler) getContext(w http.ResponseWriter, r *http.Request, k *keys.Key, id string) {
	v, ok := k.Data.Get(id)
	if !ok {
		httpapi.WriteError(w, notFound(id))
		return
	}
	writeContext(w, http.StatusOK, &v)
}

func (h *Handler) createContext(w http.ResponseWriter, r *http.Request, k *keys.Key, id string) {
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
	a := k.Data
	c := a.Create(ids.New("ctx_"), *f.name, content, f.tags, h.svc.Now, k.User)
	h.svc.Emit(r.Context(), a.ID(), contextsvc.EventContextCreated, c.ID, contextsvc.ContextCreatedData{ContextID: c.ID, Name: c.Name, Version: 1, Tags: c.Tags, CreatedBy: k.User})
	h.svc.Emit(r.Context(), a.ID(), contextsvc.EventContextVersionCreated, c.ID, contextsvc.ContextVersionCreatedData{ContextID: c.ID, Version: 1, CreatedBy: k.User})
	writeContext(w, http.StatusCreated, &c.View)
}

func (h *Handler) updateContext(w http.ResponseWriter, r *http.Request, k *keys.Key, id string) {
	f, n, e := decodeContextFields(r)
	if e == nil && n == 0 {
		e = httpapi.BadRequest("", "the body must carry at least one of name, content, tags")
	}
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	a := k.Data
	u, ok := a.Update(id, store.Update{Name: f.name, Content: f.content, Tags: f.tags, HasTags: f.hasTags}, h.svc.Now, k.User)
	if !ok {
		httpapi.WriteError(w, notFound(id))
		return
	}
	if u.Changed {
		h.svc.Emit(r.Context(), a.ID(), contextsvc.EventContextUpdated, u.ID, contextsvc.ContextUpdatedData{ContextID: u.ID, Name: u.Name, Version: u.Version, UpdatedBy: k.User, Changes: u.Changes})
		h.svc.Emit(r.Context(), a.ID(), contextsvc.EventContextVersionCreated, u.ID, contextsvc.ContextVersionCreatedData{ContextID: u.ID, Version: u.Version, CreatedBy: k.User})
	}
	writeContext(w, http.StatusOK, &u.View)
}

func (h *Handler) deleteContext(w http.ResponseWriter, r *http.Request, k *keys.Key, id string) {
	a := k.Data
	name, ok := a.Delete(id)
	if !ok {
		httpapi.WriteError(w, notFound(id))
		return
	}
	h.svc.Emit(r.Context(), a.ID(), contextsvc.EventContextDeleted, id, contextsvc.ContextDeletedData{ContextID: id, Name: name, DeletedBy: k.User})
	b, _ := json.Marshal(struct {
		ID      string `json:"id"`
		Deleted bool   `json:"deleted"`
	}{id, true})
	httpapi.WriteJSON(w, http.StatusOK, b)
}

func (h *Handler) listVersions(w http.ResponseWriter, r *http.Request, k *keys.Key, id string) {
	a := k.Data
	scope := httpapi.ListScope(a.ID(), id)
	limit, after, e := h.svc.Cursors.PageParams(r.URL.Query(), httpapi.CursorVersions, scope)
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
		next = h.svc.Cursors.Encode(httpapi.CursorVersions, uint64(end), scope)
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
