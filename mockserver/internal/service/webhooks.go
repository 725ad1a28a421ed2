package service

import (
	"fmt"
	"net/http"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/rules"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/store"
)

// webhookErr is the error of a webhook change: it wraps the error the Go
// API promises (model.ErrWebhookNotFound or model.ErrInvalidWebhook) and
// the admin API's answer (an *httpapi.Error, with its status and param),
// so that each reads it with errors.Is or errors.As.
type webhookErr struct {
	err error
	api *httpapi.Error
}

// Error returns the Go API's text: "mockserver: webhook not found: …" or
// "mockserver: invalid webhook change: PARAM: …".
func (e *webhookErr) Error() string {
	if e.api.Param == "" || e.err == model.ErrWebhookNotFound {
		return e.err.Error() + ": " + e.api.Message
	}
	return e.err.Error() + ": " + e.api.Param + ": " + e.api.Message
}

// Unwrap returns both errors it wraps.
func (e *webhookErr) Unwrap() []error { return []error{e.err, e.api} }

// webhookError is the error of a webhook change refused with the admin
// API's answer e.
func webhookError(e *httpapi.Error) error {
	if e.Status == http.StatusNotFound {
		return &webhookErr{err: model.ErrWebhookNotFound, api: e}
	}
	return &webhookErr{err: model.ErrInvalidWebhook, api: e}
}

// UpdateWebhook changes a webhook in place, as
// mockserver.Server.UpdateWebhook documents, and returns it as it now is.
// Its error wraps model.ErrWebhookNotFound or model.ErrInvalidWebhook, and
// the admin API's answer (an *httpapi.Error).
func (s *Service) UpdateWebhook(id string, u model.WebhookUpdate) (model.Webhook, error) {
	if u.URL == nil && u.Events == nil && u.Active == nil && u.Secret == nil {
		return model.Webhook{}, webhookError(httpapi.BadRequest("", "the change must carry at least one of url, events, active, secret"))
	}
	var events []contextsvc.EventType
	if u.URL != nil {
		if e := rules.WebhookURL(*u.URL, s.HTTPSOnly); e != nil {
			return model.Webhook{}, webhookError(e)
		}
	}
	if u.Events != nil {
		var e *httpapi.Error
		if events, e = rules.WebhookEvents(u.Events); e != nil {
			return model.Webhook{}, webhookError(e)
		}
	}
	if u.Secret != nil {
		if e := rules.WebhookSecret(*u.Secret); e != nil {
			return model.Webhook{}, webhookError(e)
		}
	}

	w, old, st, ok := s.Store.UpdateWebhook(id, func(st *store.WebhookState) {
		if u.URL != nil {
			st.URL = *u.URL
		}
		if events != nil {
			st.Events = events
		}
		if u.Active != nil {
			st.Active = *u.Active
		}
		if u.Secret != nil {
			st.Secret = *u.Secret
		}
	})
	if !ok {
		return model.Webhook{}, webhookError(rules.WebhookNotFound(id))
	}
	info := w.Info()

	s.StateChanged()
	ended := 0
	if old.Deliverable() && !st.Deliverable() {
		ended = s.Deliveries.Retire(w)
	}
	s.Logger.Info("webhook changed", "webhook", id, "change", u.String(), "endedDeliveries", ended)
	s.Changes.Publish(changes.Change{Kind: changes.KindWebhook, ID: id, Action: "changed", Account: info.Account})
	return info, nil
}

// DeleteWebhook removes a webhook, as mockserver.Server.DeleteWebhook
// documents. Its error wraps model.ErrWebhookNotFound and the admin API's
// answer (an *httpapi.Error).
func (s *Service) DeleteWebhook(id string) error {
	w, ok := s.Store.DeleteWebhook(id)
	if !ok {
		return webhookError(rules.WebhookNotFound(id))
	}

	s.StateChanged()
	ended := s.Deliveries.Retire(w)
	s.Logger.Info("webhook deleted", "webhook", id, "endedDeliveries", ended)
	s.Changes.Publish(changes.Change{Kind: changes.KindWebhook, ID: id, Action: "deleted", Account: w.Account()})
	return nil
}

// AddWebhook registers a webhook of account a with fields checked as
// registration checks them, unless a has MaxWebhooks already (a 400).
func (s *Service) AddWebhook(a *store.Account, id, url, secret string, events []contextsvc.EventType) (*store.Webhook, *httpapi.Error) {
	wh, ok := s.Store.AddWebhook(a, id, url, secret, events, s.Now, s.MaxWebhooks)
	if !ok {
		return nil, httpapi.BadRequest("", fmt.Sprintf("this account already has %d webhooks, the most it may have: "+
			"delete one first (DELETE /_mock/webhooks/{id}), or change one (PATCH /_mock/webhooks/{id})", s.MaxWebhooks))
	}
	s.Changes.Publish(changes.Change{Kind: changes.KindWebhook, ID: wh.ID(), Action: "created", Account: a.ID()})
	return wh, nil
}
