package mockserver

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/internal/redact"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/rules"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/store"
)

// This file is webhook management, which the reference shows no /v1
// endpoint for: the Go methods, which the admin API's /_mock/webhooks
// endpoints (the adminapi package) are a thin layer over.

// Errors of the webhook management methods. Test them with errors.Is; the
// admin API answers them with 404 and 400.
var (
	// ErrWebhookNotFound: no webhook has the given id (or it was deleted).
	ErrWebhookNotFound = errors.New("mockserver: webhook not found")
	// ErrInvalidWebhook: a change a webhook cannot take (a url, events or
	// secret that registration would refuse, or nothing to change). The
	// error names the field and never repeats a secret.
	ErrInvalidWebhook = errors.New("mockserver: invalid webhook change")
)

// WebhookUpdate is a change to a webhook: each field that is set replaces
// what the webhook has, and a nil one leaves it. At least one must be set.
// URL, Events and Secret are checked as registration checks them.
type WebhookUpdate struct {
	// URL is where deliveries go from now on, retries of earlier events
	// included.
	URL *string
	// Events are the event types the webhook receives from now on (nil:
	// unchanged; non-nil: at least one, duplicates dropped). Deliveries
	// of earlier events of a type it no longer receives go on.
	Events []contextsvc.EventType
	// Active false stops deliveries: the webhook gets no new ones, and
	// its pending ones end failed at once (one whose attempt is running
	// ends with the attempt); true starts new deliveries again.
	Active *bool
	// Secret signs every attempt from now on, retries of earlier events
	// included. It is never returned nor logged.
	Secret *string
}

// String describes the update without its secret, so it is safe to log.
func (u WebhookUpdate) String() string {
	var parts []string
	if u.URL != nil {
		parts = append(parts, "URL:"+redact.URL(*u.URL))
	}
	if u.Events != nil {
		parts = append(parts, fmt.Sprintf("Events:%v", u.Events))
	}
	if u.Active != nil {
		parts = append(parts, fmt.Sprintf("Active:%t", *u.Active))
	}
	if u.Secret != nil {
		parts = append(parts, "Secret:[redacted]")
	}
	return "WebhookUpdate{" + strings.Join(parts, " ") + "}"
}

// GoString is String, so %#v does not print the secret either.
func (u WebhookUpdate) GoString() string { return u.String() }

// Webhook returns the webhook with the given id, whatever its account, and
// whether it exists. A deleted webhook does not.
func (s *Server) Webhook(id string) (Webhook, bool) {
	w, ok := s.store.Webhook(id)
	if !ok {
		return Webhook{}, false
	}
	return Webhook(w.Info()), true
}

// AccountWebhooks returns the webhooks of an account in registration
// order (at most [MaxWebhooksPerAccount]); nil for an unknown account.
func (s *Server) AccountWebhooks(account string) []Webhook {
	a := s.store.Account(account)
	if a == nil {
		return nil
	}
	return appendWebhooks([]Webhook{}, a)
}

// appendWebhooks appends copies of a's webhooks to out, in registration
// order.
func appendWebhooks(out []Webhook, a *store.Account) []Webhook {
	for _, w := range a.AccountWebhooks(nil) {
		out = append(out, Webhook(w))
	}
	return out
}

// UpdateWebhook changes a webhook in place (see [WebhookUpdate]) and
// returns it as it now is. Changing the secret this way rotates it with
// no duplicate delivery: there is still one webhook, every attempt from
// now on (retries of earlier events included) is signed with the new
// secret, and a receiver that accepts both secrets meanwhile
// ([contextsvc.WithWebhookSecrets]) verifies every attempt. It fails with
// an error wrapping [ErrWebhookNotFound] or [ErrInvalidWebhook].
func (s *Server) UpdateWebhook(id string, u WebhookUpdate) (Webhook, error) {
	w, e := s.updateWebhook(id, u)
	if e != nil {
		return Webhook{}, webhookError(e)
	}
	return w, nil
}

// DeleteWebhook removes a webhook: it gets no new deliveries, and its
// pending ones end failed at once, saying so (one whose attempt is running
// ends with the attempt). Its deliveries stay in the history. It fails
// with an error wrapping [ErrWebhookNotFound].
func (s *Server) DeleteWebhook(id string) error {
	if e := s.deleteWebhook(id); e != nil {
		return webhookError(e)
	}
	return nil
}

// webhookError turns a webhook method's API error into a Go error.
func webhookError(e *httpapi.Error) error {
	if e.Status == http.StatusNotFound {
		return fmt.Errorf("%w: %s", ErrWebhookNotFound, e.Message)
	}
	if e.Param != "" {
		return fmt.Errorf("%w: %s: %s", ErrInvalidWebhook, e.Param, e.Message)
	}
	return fmt.Errorf("%w: %s", ErrInvalidWebhook, e.Message)
}

// updateWebhook is UpdateWebhook with the admin API's errors.
func (s *Server) updateWebhook(id string, u WebhookUpdate) (Webhook, *httpapi.Error) {
	if u.URL == nil && u.Events == nil && u.Active == nil && u.Secret == nil {
		return Webhook{}, httpapi.BadRequest("", "the change must carry at least one of url, events, active, secret")
	}
	var events []contextsvc.EventType
	if u.URL != nil {
		if e := rules.WebhookURL(*u.URL, s.httpsOnly); e != nil {
			return Webhook{}, e
		}
	}
	if u.Events != nil {
		var e *httpapi.Error
		if events, e = rules.WebhookEvents(u.Events); e != nil {
			return Webhook{}, e
		}
	}
	if u.Secret != nil {
		if e := rules.WebhookSecret(*u.Secret); e != nil {
			return Webhook{}, e
		}
	}

	w, old, st, ok := s.store.UpdateWebhook(id, func(st *store.WebhookState) {
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
		return Webhook{}, rules.WebhookNotFound(id)
	}
	pub := Webhook(w.Info())

	s.stateChanged()
	ended := 0
	if old.Deliverable() && !st.Deliverable() {
		ended = s.deliveries.Retire(w)
	}
	s.logger.Info("webhook changed", "webhook", id, "change", u.String(), "endedDeliveries", ended)
	s.changes.Publish(changes.Change{Kind: changes.KindWebhook, ID: id, Action: "changed", Account: pub.Account})
	return pub, nil
}

// deleteWebhook is DeleteWebhook with the admin API's errors.
func (s *Server) deleteWebhook(id string) *httpapi.Error {
	w, ok := s.store.DeleteWebhook(id)
	if !ok {
		return rules.WebhookNotFound(id)
	}

	s.stateChanged()
	ended := s.deliveries.Retire(w)
	s.logger.Info("webhook deleted", "webhook", id, "endedDeliveries", ended)
	s.changes.Publish(changes.Change{Kind: changes.KindWebhook, ID: id, Action: "deleted", Account: w.Account()})
	return nil
}
