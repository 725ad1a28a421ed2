package adminapi

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/events"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/service"
)

// listEvents pages through the kept events, oldest first, like the
// /v1 lists (limit, cursor), optionally of one type.
func (h *Handler) listEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	typ, e := typeFilter(q)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	account, e := accountFilter(q)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	scope := httpapi.ListScope(string(typ), account)
	limit, start, scope, e := h.svc.Cursors.ListParams(q, httpapi.CursorEvents, scope)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	recs, next := h.svc.Events.Page(start, limit, typ, account)
	items := make([]events.Event, len(recs))
	for i, rec := range recs {
		items[i] = rec.Event
	}
	httpapi.WritePage(w, h.svc.Cursors, httpapi.CursorEvents, scope, items, next)
}

func (h *Handler) emitEvent(w http.ResponseWriter, r *http.Request) {
	f, e := readObject(w, r, "type", "data", "account")
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	raw, ok := f["type"]
	if !ok {
		httpapi.WriteError(w, httpapi.BadRequest("type", "type is required"))
		return
	}
	typ, e := httpapi.DecodeString("type", raw)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	var account string
	if raw, ok := f["account"]; ok {
		if account, e = httpapi.DecodeString("account", raw); e != nil {
			httpapi.WriteError(w, e)
			return
		}
	}
	data, ok := f["data"]
	if !ok {
		httpapi.WriteError(w, httpapi.BadRequest("data", "data is required (a JSON object)"))
		return
	}
	if err := service.ValidEventType(typ); err != nil {
		httpapi.WriteError(w, httpapi.BadRequest("type", err.Error()))
		return
	}
	ev, err := h.svc.EmitEvent(r.Context(), account, contextsvc.EventType(typ), data)
	switch {
	case errors.Is(err, model.ErrUnknownAccount):
		httpapi.WriteError(w, httpapi.BadRequest("account", fmt.Sprintf("no key belongs to account %q", account)))
		return
	case err != nil:
		httpapi.WriteError(w, httpapi.BadRequest("data", err.Error()))
		return
	}
	httpapi.WriteValue(w, http.StatusCreated, ev)
}

func (h *Handler) getEvent(w http.ResponseWriter, r *http.Request) {
	ev, ok := h.svc.Events.Get(r.PathValue("id"))
	if !ok {
		httpapi.WriteError(w, httpapi.NotFound("no kept event with id "+strconv.Quote(r.PathValue("id"))))
		return
	}
	httpapi.WriteValue(w, http.StatusOK, ev)
}
