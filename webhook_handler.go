package contextsvc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Defaults of the handler made by [NewWebhookHandler].
const (
	// DefaultSignatureHeader is the header carrying the signature. The real
	// service's header has its name in place of "Service".
	DefaultSignatureHeader = "X-Service-Signature"
	// DefaultWebhookMaxBodyBytes is the largest body the handler reads (1 MiB).
	DefaultWebhookMaxBodyBytes = 1 << 20
	// DefaultWebhookBodyTimeout is how long the handler waits for a whole
	// body once it starts reading it: the mock server's sender gives up on
	// an attempt after 10 s, so a body slower than that is never answered
	// in time, while a 1 MiB body at 1 Mbit/s takes 8 s.
	DefaultWebhookBodyTimeout = 10 * time.Second
	// DefaultReplayWindow is how old an event may be: the service's whole
	// retry schedule (1 + 5 + 30 + 120 + 1440 minutes, about 26.6 h) plus
	// slack.
	DefaultReplayWindow = 27 * time.Hour
	// DefaultFutureSkew is how far in the future an event's timestamp may
	// be, for clock skew between the service and the receiver.
	DefaultFutureSkew = 5 * time.Minute
	// webhookClaimLease bounds how long a claimed event id stays held if
	// the process dies while handling it. An attempt that runs longer
	// loses its claim to the next attempt (see Deduper).
	webhookClaimLease = 10 * time.Minute
	// webhookRememberSlack is how long past the replay window a handled id
	// is remembered. The window admits an event up to and including the
	// instant it is exactly that old, while a store forgets an id the
	// instant its remember duration has passed; without slack a
	// redelivery at that instant would be handled again. A second also
	// covers the time between the handler reading its clock and the store
	// starting the duration on its own, and stores that count in
	// milliseconds (Redis PX).
	webhookRememberSlack = time.Second
)

// WebhookOption configures the handler made by [NewWebhookHandler]. An
// option given a value it cannot use makes NewWebhookHandler return an
// error wrapping [ErrInvalidArgument].
type WebhookOption func(*webhookConfig) error

type webhookConfig struct {
	secrets     []string
	header      string
	maxBody     int64
	bodyTimeout time.Duration
	logger      *slog.Logger
	window      time.Duration
	future      time.Duration
	deduper     Deduper
	deduperSet  bool
	now         func() time.Time
	hook        DeliveryHook
}

// WithWebhookSecrets adds secrets that are also accepted, for rotation:
// while the service changes over to a new secret, accept both. An empty
// secret among them is an error.
func WithWebhookSecrets(secrets ...string) WebhookOption {
	return func(c *webhookConfig) error {
		if slices.Contains(secrets, "") {
			return fmt.Errorf("%w: WithWebhookSecrets: an empty secret (an unset variable?) would let anyone sign", ErrInvalidArgument)
		}
		c.secrets = append(c.secrets, secrets...)
		return nil
	}
}

// WithSignatureHeader sets the name of the signature header (default
// [DefaultSignatureHeader]). An empty name, or one a header cannot have,
// is an error.
func WithSignatureHeader(name string) WebhookOption {
	return func(c *webhookConfig) error {
		if name == "" || strings.ContainsFunc(name, func(r rune) bool { return !isTokenChar(r) }) {
			return fmt.Errorf("%w: WithSignatureHeader(%q): not a header name", ErrInvalidArgument, name)
		}
		c.header = name
		return nil
	}
}

// WithMaxBodyBytes sets the largest body read (default
// [DefaultWebhookMaxBodyBytes]); a larger one is answered 413. n must be
// positive.
func WithMaxBodyBytes(n int64) WebhookOption {
	return func(c *webhookConfig) error {
		if n <= 0 {
			return fmt.Errorf("%w: WithMaxBodyBytes(%d): must be positive", ErrInvalidArgument, n)
		}
		c.maxBody = n
		return nil
	}
}

// WithWebhookBodyTimeout sets how long the handler waits for a body once it
// starts reading it (default [DefaultWebhookBodyTimeout]); a body not
// received whole by then is answered 408 and its connection closed, so a
// sender trickling bytes holds a goroutine for d at most, whatever the
// server's own time-outs. d must be positive.
func WithWebhookBodyTimeout(d time.Duration) WebhookOption {
	return func(c *webhookConfig) error {
		if d <= 0 {
			return fmt.Errorf("%w: WithWebhookBodyTimeout(%v): must be positive", ErrInvalidArgument, d)
		}
		c.bodyTimeout = d
		return nil
	}
}

// WithWebhookLogger sets the logger for refused and failed deliveries
// (default, and nil: none). Logs carry event ids, types and reasons, never
// secrets, signatures or bodies.
func WithWebhookLogger(l *slog.Logger) WebhookOption {
	return func(c *webhookConfig) error {
		if l == nil {
			l = slog.New(slog.DiscardHandler)
		}
		c.logger = l
		return nil
	}
}

// WithReplayWindow sets how old (past) and how far in the future (future)
// an event's timestamp may be; the defaults are [DefaultReplayWindow] and
// [DefaultFutureSkew]. The timestamp is inside the signed bytes, so it
// cannot be changed without breaking the signature. A past of 0 turns
// replay protection off: no time check and no deduplication. A negative
// past or future is an error.
func WithReplayWindow(past, future time.Duration) WebhookOption {
	return func(c *webhookConfig) error {
		if past < 0 || future < 0 {
			return fmt.Errorf("%w: WithReplayWindow(%v, %v): must not be negative (a past of 0 turns the check off)", ErrInvalidArgument, past, future)
		}
		c.window, c.future = past, future
		return nil
	}
}

// WithDeduper sets where handled event ids are remembered (default: a
// [MemoryDeduper] of [DefaultMemoryDeduperSize] ids on the handler's
// clock). Receivers with several replicas pass a shared one, such as
// redisstore.NewDeduper. nil turns deduplication off while keeping the
// time check.
func WithDeduper(d Deduper) WebhookOption {
	return func(c *webhookConfig) error {
		c.deduper, c.deduperSet = d, true
		return nil
	}
}

// WithWebhookClock sets the handler's clock (default time.Now), for tests
// of the replay window. nil is an error.
func WithWebhookClock(now func() time.Time) WebhookOption {
	return func(c *webhookConfig) error {
		if now == nil {
			return fmt.Errorf("%w: WithWebhookClock(nil)", ErrInvalidArgument)
		}
		c.now = now
		return nil
	}
}

// WebhookHandler is the [net/http.Handler] made by [NewWebhookHandler]: it
// receives the service's webhook deliveries. It is safe for concurrent use.
type WebhookHandler struct {
	cfg     webhookConfig
	verify  *verifier
	fn      func(context.Context, *Event) error
	readers sync.Pool // of *bodyReader
}

// NewWebhookHandler returns a handler that receives the service's webhook
// deliveries and calls fn once per verified event. Mount it on a server
// with time-outs (http.ListenAndServe has none, and the handler listens to
// the whole internet):
//
//	secret := os.Getenv("CONTEXTSVC_WEBHOOK_SECRET")
//	h, err := contextsvc.NewWebhookHandler(secret, handleEvent)
//	if err != nil {
//		log.Fatal(err) // no secret, or a bad option
//	}
//	mux := http.NewServeMux()
//	mux.Handle("/webhooks/contextsvc", h)
//	srv := &http.Server{
//		Addr:              ":8080",
//		Handler:           mux,
//		ReadHeaderTimeout: 5 * time.Second,  // the request's headers
//		ReadTimeout:       15 * time.Second, // headers and body
//		WriteTimeout:      30 * time.Second, // from the headers to the end of the answer, handleEvent included
//		IdleTimeout:       time.Minute,      // a kept-alive connection between deliveries
//	}
//	log.Fatal(srv.ListenAndServe())
//
// where handleEvent is a func(context.Context, *contextsvc.Event) error.
//
// For each request it answers:
//   - 405 with "Allow: POST" for any other method;
//   - 401 when the signature header is missing or malformed, at once:
//     the body is neither read nor buffered;
//   - 413 when the body exceeds the limit (1 MiB, [WithMaxBodyBytes]),
//     at once when its declared Content-Length does: the handler reads what
//     arrives, up to the limit, and never reserves memory for what a
//     sender only declares;
//   - 408 when the body is not received whole within its time-out (10 s,
//     [WithWebhookBodyTimeout]);
//   - 401 when the signature does not verify over the exact bytes
//     received (checked before any parsing; the body says only "invalid
//     signature");
//   - 400 when a verified body is not a valid event envelope, or its
//     timestamp is outside the replay window ([WithReplayWindow]);
//   - 200 without calling fn when the event id was already handled;
//   - 409 when the same event id is being handled right now (the sender
//     retries later, and then gets 200 or a fresh attempt);
//   - 500 when fn returns an error (so the sender retries), and the event
//     id is not remembered, so that retry calls fn again;
//   - 500 without calling fn when the [Deduper] fails (its store is
//     unreachable, say), so the sender retries once it is back;
//   - 200 when fn returns nil.
//
// A refusal answered before the body was read whole closes the HTTP/1
// connection, so the server does not go on reading it. When fn panics,
// nothing is answered: the panic goes on to net/http, which closes the
// connection, and the sender retries.
//
// fn runs with the request's context. An attempt holds its event id for
// at most 10 minutes (the claim's lease, see [Deduper]); fn should finish
// well within that, and within the sender's time-out: past it, another
// attempt may claim the event and run fn again. Events come in no
// guaranteed order (a context.version.created may arrive before its
// context.created, and a retry after later events): fn must not assume
// one. The signing secret is secret plus any given with
// [WithWebhookSecrets].
//
// An empty secret (an unset environment variable, typically), a nil fn or
// an option given a value it cannot use is an error wrapping
// [ErrInvalidArgument]: a receiver that would accept forged deliveries, or
// drop real ones, does not start.
func NewWebhookHandler(secret string, fn func(context.Context, *Event) error, opts ...WebhookOption) (*WebhookHandler, error) {
	if secret == "" {
		return nil, fmt.Errorf("%w: NewWebhookHandler: empty webhook secret (an unset variable?) would let anyone sign", ErrInvalidArgument)
	}
	if fn == nil {
		return nil, fmt.Errorf("%w: NewWebhookHandler: nil function", ErrInvalidArgument)
	}
	cfg := webhookConfig{
		secrets:     []string{secret},
		header:      DefaultSignatureHeader,
		maxBody:     DefaultWebhookMaxBodyBytes,
		bodyTimeout: DefaultWebhookBodyTimeout,
		logger:      slog.New(slog.DiscardHandler),
		window:      DefaultReplayWindow,
		future:      DefaultFutureSkew,
		now:         time.Now,
	}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if !cfg.deduperSet {
		cfg.deduper = newMemoryDeduper(DefaultMemoryDeduperSize, cfg.now)
	}
	if cfg.window <= 0 {
		cfg.deduper = nil
	}
	h := &WebhookHandler{cfg: cfg, verify: newVerifier(cfg.secrets), fn: fn}
	h.readers.New = func() any { return new(bodyReader) }
	return h, nil
}

// ServeHTTP implements [net/http.Handler].
func (h *WebhookHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.cfg.hook != nil {
		h.serveHooked(w, r)
		return
	}
	h.serve(r.Context(), w, r, nil)
}

// serve answers one request with ctx as its context, and says how. Once
// the event is verified, and before fn runs, it is stored in *calling
// (when calling is not nil), so that a caller watching for a panic knows
// which event was being handled.
func (h *WebhookHandler) serve(ctx context.Context, w http.ResponseWriter, r *http.Request, calling **Event) DeliveryResult {
	log := h.cfg.logger
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		closeUnread(w, r)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return DeliveryResult{Outcome: DeliveryMethodNotAllowed, StatusCode: http.StatusMethodNotAllowed}
	}
	if h.verify == nil {
		// A WebhookHandler not made by NewWebhookHandler has no secret:
		// refuse rather than accept or drop anything.
		// Such a handler has no hook either, so no outcome is heard.
		closeUnread(w, r)
		http.Error(w, "receiver misconfigured: use NewWebhookHandler", http.StatusInternalServerError)
		return DeliveryResult{StatusCode: http.StatusInternalServerError}
	}

	// A request without a well-formed signature cannot be a delivery:
	// refuse it before reading or buffering any of its body.
	want, err := h.verify.decode(r.Header.Get(h.cfg.header))
	if err != nil {
		// err is one of the signature sentinels: no secret, no signature.
		log.Warn("contextsvc webhook delivery refused: bad signature", "reason", err.Error())
		closeUnread(w, r)
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return DeliveryResult{Outcome: DeliveryBadSignature, StatusCode: http.StatusUnauthorized, Err: err}
	}
	if r.ContentLength > h.cfg.maxBody {
		return h.refuseTooLarge(w, r)
	}

	br := h.readers.Get().(*bodyReader)
	body, err := br.read(w, r, h.cfg.maxBody, h.cfg.bodyTimeout)
	defer h.putReader(br)
	switch {
	case err == errBodyTooLarge:
		return h.refuseTooLarge(w, r)
	case err == errBodyTooSlow:
		log.Warn("contextsvc webhook delivery refused: body too slow", "timeout", h.cfg.bodyTimeout)
		closeUnread(w, r)
		http.Error(w, "body not received in time", http.StatusRequestTimeout)
		return DeliveryResult{Outcome: DeliveryTooSlow, StatusCode: http.StatusRequestTimeout, Err: err}
	case err != nil:
		log.Warn("contextsvc webhook delivery refused: reading body", "error", err)
		closeUnread(w, r)
		http.Error(w, "cannot read body", http.StatusBadRequest)
		return DeliveryResult{Outcome: DeliveryUnreadable, StatusCode: http.StatusBadRequest, Err: err}
	}

	if err := h.verify.verifyMAC(body, &want); err != nil {
		log.Warn("contextsvc webhook delivery refused: bad signature", "reason", err.Error())
		http.Error(w, "invalid signature", http.StatusUnauthorized)
		return DeliveryResult{Outcome: DeliveryBadSignature, StatusCode: http.StatusUnauthorized, Err: err}
	}

	ev, err := ParseEvent(body)
	if err != nil {
		log.Warn("contextsvc webhook delivery refused: malformed event", "error", err)
		http.Error(w, "malformed event", http.StatusBadRequest)
		return DeliveryResult{Outcome: DeliveryMalformed, StatusCode: http.StatusBadRequest, Err: err}
	}
	if err := checkReplayWindow(ev, h.cfg.now(), h.cfg.window, h.cfg.future); err != nil {
		log.Warn("contextsvc webhook delivery refused: event outside the replay window", "event", ev.ID, "type", ev.Type, "timestamp", ev.Timestamp)
		http.Error(w, "event outside replay window", http.StatusBadRequest)
		return DeliveryResult{Outcome: DeliveryOutsideWindow, StatusCode: http.StatusBadRequest, Event: ev, Err: err}
	}
	if calling != nil {
		*calling = ev
	}

	d := h.cfg.deduper
	var claimToken ClaimToken
	if d != nil {
		res, token, err := d.Claim(ctx, ev.ID, webhookClaimLease)
		if err != nil {
			log.Error("contextsvc webhook deduper claim failed", "event", ev.ID, "error", err)
			http.Error(w, "internal error", http.StatusInternalServerError)
			return DeliveryResult{Outcome: DeliveryDeduperError, StatusCode: http.StatusInternalServerError, Event: ev, Err: err}
		}
		switch res {
		case ClaimDuplicate:
			log.Debug("contextsvc webhook duplicate event acknowledged", "event", ev.ID, "type", ev.Type)
			w.WriteHeader(http.StatusOK)
			return DeliveryResult{Outcome: DeliveryDuplicate, StatusCode: http.StatusOK, Event: ev}
		case ClaimAcquired:
			claimToken = token
		default: // ClaimBusy, or a result this code does not know: not handled, not acknowledged.
			log.Info("contextsvc webhook event is being handled by another attempt", "event", ev.ID, "type", ev.Type)
			http.Error(w, "event is being handled", http.StatusConflict)
			return DeliveryResult{Outcome: DeliveryBusy, StatusCode: http.StatusConflict, Event: ev}
		}
	}

	if err := h.call(ctx, ev, claimToken); err != nil {
		log.Error("contextsvc webhook handler failed; the sender will retry", "event", ev.ID, "type", ev.Type, "error", err)
		http.Error(w, "handler failed", http.StatusInternalServerError)
		return DeliveryResult{Outcome: DeliveryHandlerError, StatusCode: http.StatusInternalServerError, Event: ev, Err: err}
	}
	if d != nil {
		// Remembered until the window refuses the event by its age, counted
		// from now on the handler's clock (the Deduper counts it on its own).
		remember := ev.Timestamp.Add(h.cfg.window + webhookRememberSlack).Sub(h.cfg.now())
		// The sender may have hung up; remembering must not depend on it.
		err := d.Commit(context.WithoutCancel(ctx), ev.ID, claimToken, remember)
		switch {
		case errors.Is(err, ErrClaimLost):
			log.Warn("contextsvc webhook handler outlived its claim's lease; another attempt holds the event and decides whether it is remembered", "event", ev.ID, "type", ev.Type, "lease", webhookClaimLease)
		case err != nil:
			log.Error("contextsvc webhook deduper commit failed; a redelivery may be handled again", "event", ev.ID, "error", err)
		}
	}
	w.WriteHeader(http.StatusOK)
	return DeliveryResult{Outcome: DeliveryHandled, StatusCode: http.StatusOK, Event: ev}
}

// refuseTooLarge answers a body over the limit, declared or read.
func (h *WebhookHandler) refuseTooLarge(w http.ResponseWriter, r *http.Request) DeliveryResult {
	h.cfg.logger.Warn("contextsvc webhook delivery refused: body too large", "limit", h.cfg.maxBody)
	closeUnread(w, r)
	http.Error(w, "payload too large", http.StatusRequestEntityTooLarge)
	return DeliveryResult{Outcome: DeliveryTooLarge, StatusCode: http.StatusRequestEntityTooLarge}
}

// closeUnread asks the server to close an HTTP/1 connection after the
// answer, for a request whose body may not have been read whole: net/http
// would otherwise go on reading what is left of it (up to 256 KiB, as
// slowly as the sender sends it) to keep the connection alive. An HTTP/2
// stream needs nothing: its body is discarded without holding the handler.
func closeUnread(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor < 2 && r.ContentLength != 0 {
		w.Header().Set("Connection", "close")
	}
}

// putReader returns br to the pool, unless its timer may still run.
func (h *WebhookHandler) putReader(br *bodyReader) {
	if br.reusable() {
		h.readers.Put(br)
	}
}

// call runs fn and, if the event id was claimed (with token), releases the
// claim unless fn succeeded, also when fn panics (the panic goes on to
// net/http).
func (h *WebhookHandler) call(ctx context.Context, ev *Event, token ClaimToken) (err error) {
	if h.cfg.deduper != nil {
		ok := false
		defer func() {
			if !ok {
				if rerr := h.cfg.deduper.Release(context.WithoutCancel(ctx), ev.ID, token); rerr != nil {
					h.cfg.logger.Error("contextsvc webhook deduper release failed", "event", ev.ID, "error", rerr)
				}
			}
		}()
		err = h.fn(ctx, ev)
		ok = err == nil
		return err
	}
	return h.fn(ctx, ev)
}
