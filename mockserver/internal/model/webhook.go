package model

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/redact"
)

// Webhook is a registered webhook as the server shows it, without its
// secret: mockserver.Webhook.
type Webhook struct {
	// ID is the webhook id ("wh_…").
	ID string
	// Account owns the webhook; its events are the ones delivered.
	Account string
	// URL receives the deliveries.
	URL string
	// Events are the subscribed event types, without duplicates.
	Events []contextsvc.EventType
	// CreatedAt is when the webhook was registered.
	CreatedAt time.Time
	// Active tells whether deliveries are made to it (see
	// mockserver.Server.UpdateWebhook).
	Active bool
}

// webhookJSON is a webhook as the admin API shows it: the contract's
// Webhook (WebhookJSON) with its account after its id
// (TestAdminShapesFollowTheWire).
type webhookJSON struct {
	ID        string                 `json:"id"`
	Account   string                 `json:"account"`
	URL       string                 `json:"url"`
	Events    []contextsvc.EventType `json:"events"`
	CreatedAt string                 `json:"createdAt"`
	Active    bool                   `json:"active"`
}

// MarshalJSON encodes the webhook as the admin API shows it:
// {"id","account","url","events","createdAt","active"}, the time in RFC
// 3339 UTC with millisecond precision; never a secret (a Webhook has
// none). The default decoding reads it back.
func (w Webhook) MarshalJSON() ([]byte, error) {
	events := w.Events
	if events == nil {
		events = []contextsvc.EventType{}
	}
	return json.Marshal(webhookJSON{ID: w.ID, Account: w.Account, URL: w.URL, Events: events,
		CreatedAt: formatTime(w.CreatedAt), Active: w.Active})
}

// WebhookUpdate is a change to a webhook: mockserver.WebhookUpdate. Each
// field that is set replaces what the webhook has, and a nil one leaves
// it.
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

// Errors of the webhook management methods (mockserver's, and the admin
// API's 404 and 400).
var (
	// ErrWebhookNotFound: no webhook has the given id (or it was deleted).
	ErrWebhookNotFound = errors.New("mockserver: webhook not found")
	// ErrInvalidWebhook: a change a webhook cannot take (a url, events or
	// secret that registration would refuse, or nothing to change). The
	// error names the field and never repeats a secret.
	ErrInvalidWebhook = errors.New("mockserver: invalid webhook change")
)
