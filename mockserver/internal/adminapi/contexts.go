package adminapi

import (
	"encoding/json"
	"net/http"
	"strconv"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/store"
)

// ContextJSON is a context as the admin lists show it: the contract's
// Context (model.ContextJSON) with its account, and its content's size
// instead of the content (TestAdminShapesFollowTheWire holds it to the
// definition).
type ContextJSON struct {
	ID        string   `json:"id"`
	Account   string   `json:"account"`
	Name      string   `json:"name"`
	Tags      []string `json:"tags"`
	Version   int      `json:"version"`
	SizeBytes int      `json:"sizeBytes"`
	CreatedAt string   `json:"createdAt"`
	UpdatedAt string   `json:"updatedAt"`
	// Content is set only on GET /_mock/contexts/{id}.
	Content *string `json:"content,omitempty"`
}

// MarshalJSON is the default encoding; it lets httpapi.WritePage encode contexts.
func (c ContextJSON) MarshalJSON() ([]byte, error) {
	type plain ContextJSON
	return json.Marshal(plain(c))
}

func toContextJSON(c store.Summary) ContextJSON {
	return ContextJSON{ID: c.ID, Account: c.Account, Name: c.Name, Tags: c.Tags, Version: c.Version,
		SizeBytes: c.SizeBytes, CreatedAt: jsonwire.FormatTime(c.CreatedAt), UpdatedAt: jsonwire.FormatTime(c.UpdatedAt)}
}

// listContexts pages through every account's contexts (or one
// account's), by account in the order of their first key, then in
// creation order; newest first with order=desc. Each page is a binary
// search per account it visits and its items, at any depth. The content
// is left out (sizeBytes says how long it is): GET /_mock/contexts/{id}
// has it.
func (h *Handler) listContexts(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	account, e := accountFilter(q)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	scope := httpapi.ListScope(account)
	limit, start, scope, e := h.svc.Cursors.ListParams(q, httpapi.CursorAdminContexts, scope)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	sums, next := h.svc.Store.ContextsPage(account, start, limit)
	items := make([]ContextJSON, len(sums))
	for i, c := range sums {
		items[i] = toContextJSON(c)
	}
	httpapi.WritePage(w, h.svc.Cursors, httpapi.CursorAdminContexts, scope, items, next)
}

func (h *Handler) getContext(w http.ResponseWriter, r *http.Request) {
	c, ok := h.svc.Store.Find(r.PathValue("id"))
	if !ok {
		httpapi.WriteError(w, httpapi.NotFound("no context with id "+strconv.Quote(r.PathValue("id"))))
		return
	}
	cj := toContextJSON(c)
	cj.Content = &c.Content
	// The page shows the content: 1 MB of '<' answers 1 MB, not 6. (The
	// plain type has no MarshalJSON, whose json.Marshal would escape.)
	type plain ContextJSON
	writeText(w, plain(cj))
}

// VersionJSON is a version as the admin list shows it: the contract's
// Version (model.VersionJSON) with its content's size instead of the
// content (GET /v1/contexts/{id}/versions has it, and the diff compares
// it).
type VersionJSON struct {
	ContextID string             `json:"contextId"`
	Version   int                `json:"version"`
	Name      string             `json:"name"`
	Tags      []string           `json:"tags"`
	SizeBytes int                `json:"sizeBytes"`
	CreatedAt string             `json:"createdAt"`
	CreatedBy string             `json:"createdBy"`
	Changes   contextsvc.Changes `json:"changes"`
}

// MarshalJSON is the default encoding; it lets httpapi.WritePage encode versions.
func (v VersionJSON) MarshalJSON() ([]byte, error) {
	type plain VersionJSON
	if v.Changes.SectionsModified == nil {
		v.Changes.SectionsModified = []string{}
	}
	return json.Marshal(plain(v))
}

// listContextVersions pages through the versions of any account's
// context, without their content; newest first with order=desc.
func (h *Handler) listContextVersions(w http.ResponseWriter, r *http.Request) {
	scope := httpapi.ListScope(r.PathValue("id"))
	limit, start, scope, e := h.svc.Cursors.ListParams(r.URL.Query(), httpapi.CursorContextVersions, scope)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	id := r.PathValue("id")
	var items []VersionJSON
	next, ok := h.svc.Store.VersionsPage(id, start, limit, func(v *store.Version) {
		items = append(items, VersionJSON{ContextID: id, Version: v.Version, Name: v.Name, Tags: v.Tags,
			SizeBytes: len(v.Content), CreatedAt: jsonwire.FormatTime(v.CreatedAt), CreatedBy: v.CreatedBy, Changes: v.Changes})
	})
	if !ok {
		httpapi.WriteError(w, httpapi.NotFound("no context with id "+strconv.Quote(id)))
		return
	}
	if items == nil {
		items = []VersionJSON{}
	}
	httpapi.WritePage(w, h.svc.Cursors, httpapi.CursorContextVersions, scope, items, next)
}

func (h *Handler) publish(w http.ResponseWriter, r *http.Request) {
	ev, err := h.svc.Publish(r.Context(), r.PathValue("id"))
	if err != nil {
		httpapi.WriteError(w, httpapi.NotFound("no context with id "+r.PathValue("id")))
		return
	}
	httpapi.WriteValue(w, http.StatusCreated, ev)
}

// writeText writes v as a 200 JSON answer without HTML's escapes: a '<'
// of a content is one byte, not six ("\u003c"), so an answer carrying
// texts (a context's content, a diff) is about as long as they are, not up
// to six times (a JSON reader takes either).
func writeText(w http.ResponseWriter, v any) {
	b, err := jsonwire.MarshalText(v)
	if err != nil {
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusInternalServerError, Type: httpapi.TypeInternal, Message: "encoding the response: " + err.Error()})
		return
	}
	httpapi.WriteJSON(w, http.StatusOK, b)
}
