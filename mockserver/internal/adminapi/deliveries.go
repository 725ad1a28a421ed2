package adminapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// listDeliveries pages through the kept deliveries in creation order,
// like the /v1 lists (limit, cursor), optionally filtered.
func (h *Handler) listDeliveries(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var f delivery.Filter
	var state string
	var e *httpapi.Error
	for _, p := range []struct {
		name string
		v    *string
	}{{"eventId", &f.EventID}, {"webhookId", &f.WebhookID}, {"state", &state}} {
		if *p.v, e = filterParam(q, p.name); e != nil {
			httpapi.WriteError(w, e)
			return
		}
	}
	f.State = delivery.State(state)
	switch f.State {
	case "", delivery.Pending, delivery.Succeeded, delivery.Failed:
	default:
		httpapi.WriteError(w, httpapi.BadRequest("state", fmt.Sprintf("state must be pending, succeeded or failed, got %q", f.State)))
		return
	}
	if f.Account, e = accountFilter(q); e != nil {
		httpapi.WriteError(w, e)
		return
	}
	if f.EventType, e = typeFilter(q); e != nil {
		httpapi.WriteError(w, e)
		return
	}
	scope := httpapi.ListScope(f.EventID, f.WebhookID, state, f.Account, string(f.EventType))
	limit, start, scope, e := h.svc.Cursors.ListParams(q, httpapi.CursorDeliveries, scope)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	items, next := h.svc.Deliveries.Page(start, limit, f)
	httpapi.WritePage(w, h.svc.Cursors, httpapi.CursorDeliveries, scope, items, next)
}

func (h *Handler) getDelivery(w http.ResponseWriter, r *http.Request) {
	d, ok := h.svc.Deliveries.Get(r.PathValue("id"))
	if !ok {
		httpapi.WriteError(w, httpapi.NotFound("no delivery with id "+r.PathValue("id")))
		return
	}
	httpapi.WriteValue(w, http.StatusOK, d)
}

func (h *Handler) redeliver(w http.ResponseWriter, r *http.Request) {
	d, err := h.svc.Deliveries.Redeliver(r.PathValue("id"))
	switch {
	case errors.Is(err, model.ErrDeliveryNotFound):
		httpapi.WriteError(w, httpapi.NotFound("no delivery with id "+r.PathValue("id")))
	case errors.Is(err, model.ErrDeliveryInFlight):
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusConflict, Type: httpapi.TypeConflict,
			Message: "an attempt of this delivery is running; redeliver it once it has finished"})
	case errors.Is(err, model.ErrWebhookInactive):
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusConflict, Type: httpapi.TypeConflict,
			Message: strings.TrimPrefix(err.Error(), "mockserver: ") +
				" (an inactive webhook takes deliveries again once reactivated: PATCH /_mock/webhooks/{id} {\"active\":true})"})
	case errors.Is(err, model.ErrDeliveriesClosed):
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusServiceUnavailable, Type: httpapi.TypeUnavailable,
			Message: "the mock server is shutting down and makes no new delivery attempts"})
	case err != nil:
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusInternalServerError, Type: httpapi.TypeInternal, Message: err.Error()})
	default:
		httpapi.WriteValue(w, http.StatusOK, d)
	}
}
