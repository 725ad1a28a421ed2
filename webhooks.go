package contextsvc

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/contextsvc/contextsvc-go/redact"
)

// WebhooksService holds the webhook registration. Use it through
// [Client.Webhooks].
type WebhooksService struct {
	client *Client
}

// Webhook is a registered webhook as the service returns it. The signing
// secret is never returned.
type Webhook struct {
	// ID is the webhook's identifier ("wh_…").
	ID string `json:"id"`
	// URL receives the deliveries.
	URL string `json:"url"`
	// Events are the event types delivered to URL.
	Events []EventType `json:"events"`
	// CreatedAt is when the webhook was registered.
	CreatedAt time.Time `json:"createdAt"`
	// Active tells whether deliveries are being made.
	Active bool `json:"active"`
}

// validate checks what the client needs of a registered webhook: its id.
func (w *Webhook) validate() string {
	if w.ID == "" {
		return "a webhook without an id"
	}
	return ""
}

// RegisterWebhookRequest is the body of [WebhooksService.Register].
//
// Formatting it (%v, %+v, %#v, String) shows the secret as [REDACTED],
// and the URL with its userinfo and query values as xxxxx (a receiver's
// URL may carry a token in either).
type RegisterWebhookRequest struct {
	// URL is the https endpoint that receives deliveries (http is accepted
	// for loopback hosts).
	URL string `json:"url"`
	// Events selects the event types to receive; at least one.
	Events []EventType `json:"events"`
	// Secret signs the deliveries (see VerifySignature); 1 to 256
	// characters.
	Secret string `json:"secret"`
}

// String describes the request without its secret, the URL redacted.
func (r RegisterWebhookRequest) String() string {
	return fmt.Sprintf("{URL:%s Events:%v Secret:[REDACTED]}", redact.URL(r.URL), r.Events)
}

// GoString describes the request for %#v without its secret, the URL
// redacted.
func (r RegisterWebhookRequest) GoString() string {
	return "contextsvc.RegisterWebhookRequest{URL:" + strconv.Quote(redact.URL(r.URL)) +
		", Events:" + fmt.Sprintf("%#v", r.Events) + `, Secret:"[REDACTED]"}`
}

// Format makes every fmt verb print the redacted form.
func (r RegisterWebhookRequest) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		io.WriteString(f, r.GoString())
		return
	}
	io.WriteString(f, r.String())
}

// Register registers a webhook that receives signed deliveries of the
// chosen events. Like Contexts.Create, it carries an Idempotency-Key and is
// retried safely: a lost answer never registers the webhook twice.
func (s *WebhooksService) Register(ctx context.Context, req *RegisterWebhookRequest, opts ...RequestOption) (*Webhook, error) {
	if req == nil {
		return nil, fmt.Errorf("%w: Register: nil request", ErrInvalidArgument)
	}
	return doJSON[Webhook](ctx, s.client, http.MethodPost, "/webhooks", req, opts)
}
