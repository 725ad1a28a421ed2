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

// resendList is the answer of POST /_mock/events/{id}/resend: the new
// deliveries.
type resendList struct {
	Deliveries []model.Delivery `json:"deliveries"`
}

// resendEvent makes a new delivery of a kept event: to the webhook the
// body names ({"webhookId"}), or to every active webhook of its account
// that receives its type. The body is optional.
func (h *Handler) resendEvent(w http.ResponseWriter, r *http.Request) {
	var webhookID string
	if r.ContentLength != 0 {
		f, e := readObject(w, r, "webhookId")
		if e != nil {
			httpapi.WriteError(w, e)
			return
		}
		if raw, ok := f["webhookId"]; ok {
			if webhookID, e = httpapi.DecodeString("webhookId", raw); e != nil {
				httpapi.WriteError(w, e)
				return
			}
			if webhookID == "" {
				httpapi.WriteError(w, httpapi.BadRequest("webhookId", "webhookId must be a webhook's id (leave it out for every webhook that receives the event)"))
				return
			}
		}
	}
	ds, err := h.svc.Resend(r.Context(), r.PathValue("id"), webhookID)
	if err != nil {
		httpapi.WriteError(w, apiError(err))
		return
	}
	httpapi.WriteValue(w, http.StatusCreated, resendList{Deliveries: ds})
}
