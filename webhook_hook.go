package contextsvc

import (
	"context"
	"errors"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
)

// This file is the webhook handler's hook: what it tells an observer (such
// as package contextsvcotel's tracing) about each request it answers.

// DeliveryOutcome says how the handler made by [NewWebhookHandler] answered
// a request.
type DeliveryOutcome string

// The outcomes of a request to the handler, with the status each answers.
const (
	// DeliveryHandled: the function returned nil (200).
	DeliveryHandled DeliveryOutcome = "handled"
	// DeliveryDuplicate: the event was already handled; the function was
	// not called (200).
	DeliveryDuplicate DeliveryOutcome = "duplicate"
	// DeliveryBusy: another attempt is handling the same event right now
	// (409; the sender retries).
	DeliveryBusy DeliveryOutcome = "busy"
	// DeliveryBadSignature: the signature header is missing or does not
	// verify (401).
	DeliveryBadSignature DeliveryOutcome = "bad_signature"
	// DeliveryMalformed: the verified body is not a valid event (400).
	DeliveryMalformed DeliveryOutcome = "malformed"
	// DeliveryOutsideWindow: the event's timestamp is outside the replay
	// window (400).
	DeliveryOutsideWindow DeliveryOutcome = "outside_window"
	// DeliveryTooLarge: the body is over the limit, as declared or as
	// read (413).
	DeliveryTooLarge DeliveryOutcome = "too_large"
	// DeliveryTooSlow: the body was not received whole within the
	// handler's body time-out ([WithWebhookBodyTimeout]) (408).
	DeliveryTooSlow DeliveryOutcome = "too_slow"
	// DeliveryUnreadable: reading the body failed, e.g. the sender hung up
	// (400).
	DeliveryUnreadable DeliveryOutcome = "unreadable"
	// DeliveryHandlerError: the function returned an error (500; the
	// sender retries).
	DeliveryHandlerError DeliveryOutcome = "handler_error"
	// DeliveryPanicked: the function (or the Deduper) panicked, and the
	// panic went on to net/http, which answers nothing: it closes the
	// connection (HTTP/1) or resets the stream (HTTP/2), and the sender
	// retries. StatusCode is 0, since no status was sent; a middleware
	// outside the handler that recovers the panic may answer instead.
	DeliveryPanicked DeliveryOutcome = "panicked"
	// DeliveryDeduperError: the [Deduper] failed, so the function was not
	// called (500; the sender retries).
	DeliveryDeduperError DeliveryOutcome = "deduper_error"
	// DeliveryMethodNotAllowed: the request is not a POST (405).
	DeliveryMethodNotAllowed DeliveryOutcome = "method_not_allowed"
)

// DeliveryResult is how the handler answered one request, for a
// [DeliveryHook].
type DeliveryResult struct {
	// Outcome says what happened.
	Outcome DeliveryOutcome
	// StatusCode is the status the handler answered with; 0 when it
	// answered nothing (DeliveryPanicked).
	StatusCode int
	// Event is the verified event; nil when the request was refused before
	// its signature and envelope were checked.
	Event *Event
	// DeliveryID is the X-Service-Delivery header ("dlv_…": one per event
	// and webhook, the same on every attempt). The sender does not sign its
	// headers, so it is as trustworthy as the request's origin; it is empty
	// when absent or not of the expected form (up to 128 letters, digits,
	// "_", "-" or "."). With [WithSignatureHeader] set to
	// "X-Name-Signature", it is read from X-Name-Delivery.
	DeliveryID string
	// Attempt is the X-Service-Delivery-Attempt header (from 1), unsigned
	// like DeliveryID; 0 when absent or not a number. With
	// [WithSignatureHeader] set to "X-Name-Signature", it is read from
	// X-Name-Delivery-Attempt.
	Attempt int
	// Err is why the delivery failed, for the outcomes that have a cause:
	// the function's error (DeliveryHandlerError), the Deduper's
	// (DeliveryDeduperError), the read error (DeliveryUnreadable,
	// DeliveryTooSlow), the signature's ([ErrMissingSignature]…,
	// DeliveryBadSignature), the envelope's (DeliveryMalformed), the
	// window's ([ErrOutsideReplayWindow], DeliveryOutsideWindow) or the
	// panic's (DeliveryPanicked). Log it with care: the function's error is
	// the caller's own text.
	Err error
}

// DeliveryHook observes the handler made by [NewWebhookHandler]: it is
// called at the start of every request, before anything is read, and
// returns the context the handler goes on with (passed to the Deduper and to
// the function; derive it from r.Context()) and a function the handler calls
// once with the result as it answers, also when the function panics (then
// with [DeliveryPanicked], before the panic goes on). It must not read r's
// body. Package contextsvcotel's tracing is one.
type DeliveryHook func(r *http.Request) (context.Context, func(DeliveryResult))

// WithDeliveryHook makes the handler report every request to hook (see
// [DeliveryHook]). Without it, or with a nil hook, the handler does none of
// this work.
func WithDeliveryHook(hook DeliveryHook) WebhookOption {
	return func(c *webhookConfig) error {
		c.hook = hook
		return nil
	}
}

// errDeliveryPanicked is the Err of a request whose handling panicked (or
// otherwise never returned, as on runtime.Goexit).
var errDeliveryPanicked = errors.New("contextsvc: handling the delivery panicked; nothing was answered")

// serveHooked is ServeHTTP with a DeliveryHook.
func (h *WebhookHandler) serveHooked(w http.ResponseWriter, r *http.Request) {
	ctx, end := h.cfg.hook(r)
	if ctx == nil {
		ctx = r.Context()
	}
	if end == nil {
		h.serve(ctx, w, r, nil)
		return
	}
	// Until serve returns, the request is one whose handling panicked:
	// the panic is not recovered, so net/http sees it and answers nothing.
	var calling *Event
	res := DeliveryResult{Outcome: DeliveryPanicked, Err: errDeliveryPanicked}
	defer func() {
		if res.Outcome == DeliveryPanicked {
			res.Event = calling
		}
		res.DeliveryID, res.Attempt = h.deliveryHeaders(r.Header)
		end(res)
	}()
	res = h.serve(ctx, w, r, &calling)
}

// deliveryHeaders reads the delivery id and attempt number headers, named
// after the signature header (X-Service-Signature: X-Service-Delivery and
// X-Service-Delivery-Attempt), keeping only values of the expected form.
func (h *WebhookHandler) deliveryHeaders(header http.Header) (id string, attempt int) {
	prefix, ok := strings.CutSuffix(textproto.CanonicalMIMEHeaderKey(h.cfg.header), "-Signature")
	if !ok {
		prefix = "X-Service"
	}
	id = header.Get(prefix + "-Delivery")
	if len(id) > 128 || strings.ContainsFunc(id, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.')
	}) {
		id = ""
	}
	if v := header.Get(prefix + "-Delivery-Attempt"); len(v) <= 9 {
		if n, err := strconv.Atoi(v); err == nil && n > 0 && v[0] != '+' {
			attempt = n
		}
	}
	return id, attempt
}
