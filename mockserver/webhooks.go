package mockserver

import "github.com/contextsvc/contextsvc-go/mockserver/internal/model"

// Webhooks are registered through the /v1 API (POST /v1/webhooks) and
// managed through the admin API's /_mock/webhooks and the Go methods
// ([Server.UpdateWebhook] and its neighbours), since the reference shows
// no /v1 endpoint for it.

// MaxWebhooksPerAccount is how many webhooks one account may have. A
// registration past it is a 400 (delete one first, DELETE
// /_mock/webhooks/{id} or [Server.DeleteWebhook]): each event is delivered
// to every subscribed webhook, so the number of webhooks multiplies the
// deliveries an event makes.
const MaxWebhooksPerAccount = 100

// Webhook is a registered webhook as the server stores it: its ID
// ("wh_…"), Account, URL, subscribed Events (without duplicates), when it
// was registered, and whether it is Active (see [Server.UpdateWebhook]).
// The secret is deliberately not part of it. Its JSON is the admin API's,
// {"id","account","url","events","createdAt","active"}, which the default
// decoding reads back. Its fields are documented with its definition,
// [model.Webhook].
type Webhook = model.Webhook

// WebhookUpdate is a change to a webhook ([Server.UpdateWebhook]): each
// field that is set (URL, Events, Active, Secret) replaces what the
// webhook has, and a nil one leaves it. At least one must be set. URL,
// Events and Secret are checked as registration checks them; a new url or
// secret applies to every attempt from then on, retries of earlier events
// included, and Active false ends the webhook's waiting deliveries. Its
// String never shows the secret. Its fields are documented with its
// definition, [model.WebhookUpdate].
type WebhookUpdate = model.WebhookUpdate

// Errors of the webhook management methods. Test them with errors.Is; the
// admin API answers them with 404 and 400.
var (
	// ErrWebhookNotFound: no webhook has the given id (or it was deleted).
	ErrWebhookNotFound = model.ErrWebhookNotFound
	// ErrInvalidWebhook: a change a webhook cannot take (a url, events or
	// secret that registration would refuse, or nothing to change). The
	// error names the field and never repeats a secret.
	ErrInvalidWebhook = model.ErrInvalidWebhook
)
