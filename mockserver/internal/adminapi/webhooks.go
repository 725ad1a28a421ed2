package adminapi

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/rules"
)

// listWebhooks pages through the webhooks in registration order, like
// the /v1 lists (limit, cursor), optionally of one account.
func (h *Handler) listWebhooks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	account, e := accountFilter(q)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	scope := httpapi.ListScope(account)
	limit, after, e := h.svc.Cursors.PageParams(q, httpapi.CursorWebhooks, scope)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	hooks, next := h.svc.Store.WebhookPage(after, limit, account)
	items := make([]model.Webhook, len(hooks))
	for i, wh := range hooks {
		items[i] = wh.Info()
	}
	httpapi.WritePage(w, h.svc.Cursors, httpapi.CursorWebhooks, scope, items, next)
}

func (h *Handler) getWebhook(w http.ResponseWriter, r *http.Request) {
	wh, ok := h.svc.Store.Webhook(r.PathValue("id"))
	if !ok {
		httpapi.WriteError(w, rules.WebhookNotFound(r.PathValue("id")))
		return
	}
	httpapi.WriteValue(w, http.StatusOK, wh.Info())
}

// updateWebhook applies PATCH {url, events, active, secret}: the body
// is checked whole (as registration checks it) before the id is looked up.
func (h *Handler) updateWebhook(w http.ResponseWriter, r *http.Request) {
	f, e := readObject(w, r, "url", "events", "active", "secret")
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	if len(f) == 0 {
		httpapi.WriteError(w, httpapi.BadRequest("", "the body must carry at least one of url, events, active, secret"))
		return
	}
	var u model.WebhookUpdate
	if raw, ok := f["url"]; ok {
		v, e := rules.DecodeWebhookURL(raw, h.svc.HTTPSOnly)
		if e != nil {
			httpapi.WriteError(w, e)
			return
		}
		u.URL = &v
	}
	if raw, ok := f["events"]; ok {
		if u.Events, e = rules.DecodeWebhookEvents(raw); e != nil {
			httpapi.WriteError(w, e)
			return
		}
	}
	if raw, ok := f["active"]; ok {
		var v bool
		if s := string(raw); s != "true" && s != "false" {
			httpapi.WriteError(w, httpapi.BadRequest("active", "active must be true or false"))
			return
		}
		_ = json.Unmarshal(raw, &v)
		u.Active = &v
	}
	if raw, ok := f["secret"]; ok {
		v, e := rules.DecodeWebhookSecret(raw)
		if e != nil {
			httpapi.WriteError(w, e)
			return
		}
		u.Secret = &v
	}
	wh, err := h.svc.UpdateWebhook(r.PathValue("id"), u)
	if err != nil {
		httpapi.WriteError(w, apiError(err))
		return
	}
	httpapi.WriteValue(w, http.StatusOK, wh)
}

// webhookDeleted is the answer to DELETE /_mock/webhooks/{id}, in the
// shape of the /v1 context deletion.
type webhookDeleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

func (h *Handler) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if err := h.svc.DeleteWebhook(id); err != nil {
		httpapi.WriteError(w, apiError(err))
		return
	}
	httpapi.WriteValue(w, http.StatusOK, webhookDeleted{ID: id, Deleted: true})
}

// apiError is the answer a service's error carries (a webhook change's),
// or a 500 saying what went wrong.
func apiError(err error) *httpapi.Error {
	if e, ok := errors.AsType[*httpapi.Error](err); ok {
		return e
	}
	return &httpapi.Error{Status: http.StatusInternalServerError, Type: httpapi.TypeInternal, Message: err.Error()}
}
