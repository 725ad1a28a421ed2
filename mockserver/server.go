package mockserver

import (
	"cmp"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/adminapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/ids"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/keys"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/proxy"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/service"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/telemetry"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/v1api"
)

// This file is the Server: how it is made (Open), how it serves a request
// (serve), and each of its Go methods, a thin layer over the service
// (internal/service) that the /v1 and admin APIs serve too. What the
// server is made of (its options, clock, keys and the types it shows)
// is declared in the package's other files.

// Server is the in-memory Context Management Service. It is an
// http.Handler serving the /v1 API (and, unless turned off, /_mock/); use
// [New] to make one or [NewTestServer] to run one in a test. It is safe for
// concurrent use.
type Server struct {
	// svc is the service: the parts, and every action that spans them.
	svc *service.Service
	// clock is the clock as the user gave it (Server.Clock).
	clock Clock

	// api serves /v1 (a v1api.Handler); admin every path under /_mock/
	// (nil when the admin routes are off); proxy, with WithUpstream,
	// forwards /v1 instead.
	api   http.Handler
	admin *adminapi.Handler
	proxy *proxy.Proxy

	logger     *slog.Logger
	requestLog bool

	readHeaderTimeout time.Duration
	readBodyTimeout   time.Duration
	idleTimeout       time.Duration

	// handler serves every request: serve, or (in this package's tests
	// only) serve wrapped by testHandler.
	handler http.Handler

	// A Server is used by its pointer: == on Server values is refused, as
	// it always was, so that a field of any kind may be added.
	_ [0]func()
}

// testHandler, when set, wraps the handler of every Server that New makes.
// Only this package's own tests set it (in TestMain), to check every
// request and response of every test against openapi.yaml with
// kin-openapi, which no program imports; it is nil everywhere else.
var testHandler func(s *Server, next http.Handler) http.Handler

// New is [Open] for tests and programs whose options are fixed in their
// code, as httptest.NewServer is: it returns the Server, and panics with
// the error Open would return (an option or key it cannot accept, a state
// file it cannot load). Code whose options come from its users (flags,
// files, the environment) calls Open.
func New(opts ...Option) *Server {
	s, err := Open(opts...)
	if err != nil {
		panic(err)
	}
	return s
}

// Open returns a Server configured by opts. Without a [WithKey] option it
// creates one key (plan business, scope write, in an account of its own,
// "acct_…"), see [Server.DefaultKey].
//
// An option given a value it cannot use, an invalid key or two keys with
// one token is an error wrapping [ErrInvalidOption]; it names a key by
// its position, never by its token. With [WithStateFile], Open loads the
// state file (a missing one is a first start, and the server starts
// empty) and returns an error naming the file and what is wrong when it
// cannot be read, is not a valid state document (the error wraps
// [ErrInvalidState]), or its directory cannot take a new file; the file is
// then left as it is.
func Open(opts ...Option) (*Server, error) {
	cf := config{clock: RealClock{}, admin: true}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&cf); err != nil {
			return nil, err
		}
	}
	if cf.logger == nil {
		cf.logger = slog.New(slog.DiscardHandler)
	}
	if cf.historyLimit <= 0 {
		cf.historyLimit = DefaultHistoryLimit
	}
	orDefault := func(d, def time.Duration) time.Duration {
		if d <= 0 {
			return def
		}
		return d
	}
	ks, err := keys.New(cf.keys)
	if err != nil {
		return nil, invalidOption("%s", err)
	}
	tel, err := telemetry.New(telemetry.Config{TracerProvider: cf.tracerProvider, MeterProvider: cf.meterProvider,
		Propagator: cf.propagator})
	if err != nil {
		return nil, invalidOption("WithMeterProvider: %v", err)
	}
	hub := new(changes.Hub)
	var p *proxy.Proxy
	if cf.upstream != "" {
		if p, err = newProxy(&cf, hub); err != nil {
			return nil, err
		}
	}
	svc := service.New(service.Config{
		Clock: cf.clock, Engine: engineClock(cf.clock), Logger: cf.logger, HTTPSOnly: cf.httpsOnly, Keys: ks,
		HistoryLimit: cf.historyLimit, MaxEventBytes: MaxEventHistoryBytes, MaxWebhooks: MaxWebhooksPerAccount,
		Delivery: delivery.Config{
			Schedule:   cf.retrySchedule,
			Timeout:    cf.deliveryTimeout,
			Workers:    cf.deliveryWorkers,
			MaxBacklog: cf.deliveryBacklog,
			RetryLimit: cf.retryLimit,
			HTTPClient: cf.deliveryClient,
		},
		Telemetry: tel, Changes: hub, Proxy: p,
	})
	s := &Server{
		svc: svc, clock: cf.clock, proxy: p, logger: cf.logger, requestLog: cf.requestLog,
		readHeaderTimeout: orDefault(cf.readHeaderTimeout, DefaultReadHeaderTimeout),
		readBodyTimeout:   orDefault(cf.readBodyTimeout, DefaultReadBodyTimeout),
		idleTimeout:       orDefault(cf.idleTimeout, DefaultIdleTimeout),
	}
	s.api = v1api.New(svc, s.readBodyTimeout)
	if cf.admin {
		s.admin = newAdmin(svc, &cf)
	}
	s.handler = http.HandlerFunc(s.serve)
	if testHandler != nil {
		s.handler = testHandler(s, s.handler)
	}
	if cf.chaos != nil {
		if _, err := svc.SetChaos(*cf.chaos); err != nil {
			return nil, invalidOption("WithChaos: %w", err)
		}
	}
	if cf.stateFile != "" {
		err := svc.OpenStateFile(service.StateFile{Path: cf.stateFile, Interval: orDefault(cf.stateInterval, DefaultStateInterval),
			Hooks: cf.stateHooks})
		if err != nil {
			return nil, err
		}
	}
	// Last, so that a server Open refuses is not left on its clock.
	if c, ok := cf.clock.(watchedClock); ok {
		c.watch(svc)
	}
	return s, nil
}

// HTTPServer returns an http.Server that serves s on addr with the
// server's time-outs ([WithReadHeaderTimeout], [WithIdleTimeout]; the body
// time-out is enforced by s itself) and its logger for connection errors,
// ready for ListenAndServe (or Serve on your own listener):
//
//	srv := mockserver.New()
//	log.Fatal(srv.HTTPServer("127.0.0.1:8080").ListenAndServe())
//
// Shut it down with its Shutdown, then stop deliveries with [Server.Close].
// Its Shutdown also ends the dashboard's event streams (GET
// /_mock/stream), which would otherwise keep it waiting.
func (s *Server) HTTPServer(addr string) *http.Server {
	hs := &http.Server{
		Addr:              addr,
		Handler:           s,
		ReadHeaderTimeout: s.readHeaderTimeout,
		IdleTimeout:       s.idleTimeout,
		ErrorLog:          slog.NewLogLogger(s.logger.Handler(), slog.LevelWarn),
	}
	hs.RegisterOnShutdown(s.CloseStreams)
	return hs
}

// CloseStreams ends the dashboard's open event streams (GET
// /_mock/stream) and refuses new ones (503). An http.Server's Shutdown
// waits for every running request, and a stream runs until its page
// closes: [Server.HTTPServer] and [NewTestServer] call it on shutdown, and
// [Server.Close] calls it; a program serving s on an http.Server of its
// own calls it (or Close) before the http.Server's Shutdown, or registers
// it with RegisterOnShutdown.
func (s *Server) CloseStreams() { s.svc.Changes.CloseAll() }

// ServeHTTP gives every response a request id, turns a panic into the
// contract's 500 error, then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// serve is every request's way in, /v1 and admin alike: its request id
// and span, a panic answered as the contract's 500, the body's read
// deadline, the route (the admin API, the validating proxy or the /v1
// API), then the change of the state noted and the request logged.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rid := ids.Fast("req_")
	w.Header()["X-Request-Id"] = []string{rid}
	rw := &httpapi.Tracker{ResponseWriter: w}
	if tel := s.svc.Tel; tel != nil {
		// The span ends last, after a panic is answered: r is the request
		// as routed (its Pattern names the span).
		var q *telemetry.Request
		r, q = tel.StartRequest(r, rid)
		defer func() { tel.End(q, r, rw.Answered(), chaosOf(rw)) }()
	}
	// Only the method and path are logged: never a header (the
	// Authorization header carries the key) nor the query.
	level := slog.LevelDebug
	if s.requestLog {
		level = slog.LevelInfo
	}
	var start time.Time
	logged := s.logger.Enabled(r.Context(), level)
	if logged {
		start = time.Now()
	}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.logger.Error("mockserver: recovered panic", "requestId", rid, "method", r.Method, "path", r.URL.Path, "panic", v)
			if !rw.Wrote() {
				httpapi.WriteError(rw, &httpapi.Error{Status: http.StatusInternalServerError, Type: httpapi.TypeInternal, Message: "internal error"})
			}
		}
	}()
	if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
		httpapi.ArmBodyDeadline(rw, r, s.readBodyTimeout)
		r.Body = &httpapi.DeadlineBody{ReadCloser: r.Body, W: rw}
	}
	switch p := r.URL.Path; {
	case s.admin != nil && adminapi.IsPath(p):
		// The admin API admits (its Host, site and credentials) and
		// answers every path under /_mock/ itself.
		s.admin.ServeHTTP(rw, r)
	case httpapi.UncleanPath(p):
		httpapi.NoSuchPath(rw, r)
	case s.proxy != nil && v1api.IsPath(p):
		// A validating proxy forwards /v1 to its upstream, whose request
		// id the answer carries: the log names that one.
		s.proxy.ServeHTTP(rw, r)
		rid = cmp.Or(w.Header().Get("X-Request-Id"), rid)
	default:
		s.api.ServeHTTP(rw, r)
	}
	// Any request but a read may have changed the state (a fault in mode
	// after answers a 5xx for one that did): the state file is written
	// once its interval has passed. Go methods that change the state note
	// it themselves.
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.svc.StateChanged()
	}
	if logged {
		if rw.ChaosFailed() {
			// An injected failure is told from a real one.
			s.logger.LogAttrs(r.Context(), level, "request",
				slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", rw.Answered()),
				slog.Duration("duration", time.Since(start)), slog.String("requestId", rid), slog.String("chaos", chaosOf(rw)))
			return
		}
		s.logger.LogAttrs(r.Context(), level, "request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", rw.Answered()),
			slog.Duration("duration", time.Since(start)), slog.String("requestId", rid))
	}
}

// chaosOf is what the chaos mode did to the request rw answered, for its
// log line and span: "api-error", or "".
func chaosOf(rw *httpapi.Tracker) string {
	if rw.ChaosFailed() {
		return string(ChaosAPIError)
	}
	return ""
}

// Clock returns the clock the server reads all its time from (see
// [WithClock]). A test that gave a [FakeClock] advances it directly.
func (s *Server) Clock() Clock { return s.clock }

// DefaultKey returns the first key (the one New created when given none),
// with its defaults filled in.
func (s *Server) DefaultKey() Key { return s.svc.Keys.Default() }

// Keys returns every key the server accepts, in the order given, with
// defaults filled in.
func (s *Server) Keys() []Key { return s.svc.Keys.All() }

// Close stops webhook deliveries gracefully: no new attempt starts (waiting
// ones stay pending), running attempts may finish until ctx is done, then
// they are canceled and Close returns ctx's error. It also ends the
// dashboard's event streams and refuses new ones ([Server.CloseStreams]):
// nothing they would report happens any more, and an open stream would
// keep an http.Server's Shutdown waiting. The API keeps answering (the
// Server is only a handler; stop its http.Server first). Calling Close
// again waits again.
//
// With [WithStateFile], Close then writes the state file a last time (if
// the state changed since it was written), with the deliveries as they
// ended; a failure to write it is returned too. Stop the http.Server
// first, so no request changes the state after that write. Close then lets
// the file's lock go, so another server may open the file; a later Close
// with changes to write takes it back, or fails with [ErrStateFileInUse]
// if another server holds it.
func (s *Server) Close(ctx context.Context) error {
	s.CloseStreams()
	err := s.svc.Close(ctx)
	// Nothing is left for an advance to wait for, or to show.
	if c, ok := s.clock.(watchedClock); ok {
		c.unwatch(s.svc)
	}
	return err
}

// Reset empties the server as if it were new: contexts, webhooks, events,
// deliveries (running attempts are canceled and forgotten), faults,
// idempotency keys, the validating proxy's findings, and every key's
// rate-limit bucket (full again). A chaos mode starts over: the same
// settings and seed, its ordinals from 1 and no decision yet, so that each
// test after a reset is replayed alike. Keys, options and the clock stay.
// It is one change: a copy of the state ([Server.SaveState]) or a load
// ([Server.LoadState]) happens wholly before it or wholly after.
func (s *Server) Reset() { s.svc.Reset() }

// Snapshot returns a deep copy of the store.
func (s *Server) Snapshot() Snapshot { return s.svc.Store.Snapshot() }

// Context returns the live context with the given id, whatever its
// account, and whether it exists.
func (s *Server) Context(id string) (StoredContext, bool) { return s.svc.Store.Copy(id) }

// Contexts returns the live contexts of an account in creation order (nil
// for an unknown account).
func (s *Server) Contexts(accountID string) []StoredContext { return s.svc.Store.Contexts(accountID) }

// Publish records a context.published event for the live context with id
// contextID (the mock's stand-in for the dashboard action, which has no
// public endpoint), as published by the first user of its account. It
// reports an error wrapping [ErrContextNotFound] when no such context
// exists. ctx bounds the wait for room when the delivery backlog is full
// (see [WithDeliveryBacklog]).
func (s *Server) Publish(ctx context.Context, contextID string) (Event, error) {
	return s.svc.Publish(ctx, contextID)
}

// EmitEvent records an event of any type with the given data for an
// account ("" means the default key's account) and delivers it to that
// account's webhooks subscribed to the type, exactly as the API's own
// events. It is the only way to fire team.member.added and
// team.member.removed. An account no key belongs to is an error wrapping
// [ErrUnknownAccount]; typ must be 1 to 100 printable ASCII characters
// without spaces, and data a JSON object; otherwise the error wraps
// [ErrInvalidEvent]. typ need not be one of the eight known types, but
// webhooks subscribe only to those, so an event of another type is
// recorded and delivered nowhere. data is not checked against the type's
// shape, so malformed payloads can be sent on purpose. ctx bounds the wait
// for room when the delivery backlog is full (see [WithDeliveryBacklog]).
func (s *Server) EmitEvent(ctx context.Context, account string, typ contextsvc.EventType, data json.RawMessage) (Event, error) {
	return s.svc.EmitEvent(ctx, account, typ, data)
}

// Events returns copies of every event the server keeps, oldest first
// (changing them changes nothing on the server). It keeps the last
// [DefaultHistoryLimit] events, or as many as [WithHistoryLimit] says, so
// the oldest of a long run are gone; GET /_mock/events pages through the
// same events.
func (s *Server) Events() []Event { return s.svc.Events.All() }

// Deliveries returns copies of the kept webhook deliveries that match f,
// in creation order; the zero filter returns them all. Every pending
// delivery is kept, and the last [DefaultHistoryLimit] (or
// [WithHistoryLimit]) to finish; GET /_mock/deliveries pages through the
// same ones. The result is never nil.
func (s *Server) Deliveries(f DeliveryFilter) []Delivery { return s.svc.Deliveries.List(f) }

// Delivery returns a copy of the delivery with the given id, and whether
// it exists.
func (s *Server) Delivery(id string) (Delivery, bool) { return s.svc.Deliveries.Get(id) }

// NextAttemptAt returns when the earliest waiting delivery attempt is due
// on the server's clock, and false when none is waiting (or deliveries
// are closed). A time at or before the clock's now is an attempt due now,
// waiting for a sender.
func (s *Server) NextAttemptAt() (time.Time, bool) { return s.svc.Deliveries.NextDue() }

// Redeliver makes a new attempt of a delivery due now (any state) and puts
// it back to pending; attempt numbers continue and the retry schedule
// starts over. It fails with an error wrapping [ErrDeliveryNotFound],
// [ErrDeliveryInFlight] (an attempt is running), [ErrWebhookInactive] (its
// webhook is inactive or deleted) or [ErrDeliveriesClosed] (after
// [Server.Close]).
func (s *Server) Redeliver(id string) (Delivery, error) { return s.svc.Deliveries.Redeliver(id) }

// WaitIdle blocks until no delivery attempt is due or running and, on a
// validating proxy ([WithUpstream]), no exchange is being forwarded or
// checked; or until ctx is done (it then returns ctx's error). A test
// calls it for the attempts that are due at once (an event's first, a
// redelivery); on a [FakeClock], an Advance already waits for those it
// makes due. A proxy's caller may read an answer whole before the proxy
// has checked it: call WaitIdle before [Server.ContractFindings]. Nothing
// sleeps or polls.
func (s *Server) WaitIdle(ctx context.Context) error {
	if s.proxy != nil {
		if err := s.proxy.WaitIdle(ctx); err != nil {
			return err
		}
	}
	return s.svc.Deliveries.WaitIdle(ctx)
}

// WaitForDelivery blocks until a delivery, existing or future, matches
// match, and returns a copy of it; or until ctx is done, and returns ctx's
// error. match runs without the server's locks. It sees every delivery,
// then each again after it changes, but may miss a short-lived state when
// changes come quickly: test for one that lasts (succeeded, failed, n
// attempts made).
func (s *Server) WaitForDelivery(ctx context.Context, match func(Delivery) bool) (Delivery, error) {
	return s.svc.Deliveries.WaitFor(ctx, match)
}

// Webhooks returns every registered webhook, by account (in key order)
// then registration; [Server.AccountWebhooks] returns one account's, and
// GET /_mock/webhooks pages through them in registration order. It copies
// the webhooks alone: its cost does not grow with the contexts stored.
func (s *Server) Webhooks() []Webhook { return s.svc.Store.Webhooks() }

// AccountWebhooks returns the webhooks of an account in registration
// order (at most [MaxWebhooksPerAccount]); nil for an unknown account.
func (s *Server) AccountWebhooks(account string) []Webhook {
	return s.svc.Store.AccountWebhooks(account)
}

// Webhook returns the webhook with the given id, whatever its account, and
// whether it exists. A deleted webhook does not.
func (s *Server) Webhook(id string) (Webhook, bool) { return s.svc.Store.WebhookInfo(id) }

// UpdateWebhook changes a webhook in place (see [WebhookUpdate]) and
// returns it as it now is. Changing the secret this way rotates it with
// no duplicate delivery: there is still one webhook, every attempt from
// now on (retries of earlier events included) is signed with the new
// secret, and a receiver that accepts both secrets meanwhile
// ([contextsvc.WithWebhookSecrets]) verifies every attempt. Deactivating
// it ends its waiting deliveries as failed. It fails with an error
// wrapping [ErrWebhookNotFound] or [ErrInvalidWebhook].
func (s *Server) UpdateWebhook(id string, u WebhookUpdate) (Webhook, error) {
	return s.svc.UpdateWebhook(id, u)
}

// DeleteWebhook removes a webhook: it gets no new deliveries, and its
// pending ones end failed at once, saying so (one whose attempt is running
// ends with the attempt). Its deliveries stay in the history. It fails
// with an error wrapping [ErrWebhookNotFound].
func (s *Server) DeleteWebhook(id string) error { return s.svc.DeleteWebhook(id) }

// AddFault makes the next f.Times requests matching f fail or slow down
// (see [Fault]). It fails with an error wrapping [ErrInvalidFault] when f
// has neither a status in 400 to 599 nor a latency (mode instead), no
// status in 500 to 599 (mode after), a status (mode drop), a RetryAfter
// without status 429 or 503, or another bad field, and with one wrapping
// [ErrTooManyFaults] when [MaxFaults] are active.
func (s *Server) AddFault(f Fault) error {
	_, err := s.svc.Faults.Add(f)
	return err
}

// Faults returns the faults still active, oldest first, each with the
// number of requests it still applies to in Times.
func (s *Server) Faults() []Fault { return s.svc.Faults.All() }

// ClearFaults removes every fault.
func (s *Server) ClearFaults() { s.svc.Faults.Clear(true) }

// SetChaos puts the chaos mode c in force from now (see [Chaos]),
// replacing any, its ordinals from 1, and returns it as it stands: its
// seed chosen (and logged) when c gives none, its delay filled in. It
// fails with a [*ChaosError] (matching [ErrInvalidChaos]) for settings
// that cannot be used and on a validating proxy ([WithUpstream]), and the
// mode is then left as it was. PUT /_mock/chaos does the same.
func (s *Server) SetChaos(c Chaos) (ChaosReport, error) { return s.svc.SetChaos(c) }

// Chaos returns the chaos mode as it stands: its settings and seed, its
// counts and its newest decisions; On is false when it is off (GET
// /_mock/chaos).
func (s *Server) Chaos() ChaosReport { return s.svc.Chaos.Report() }

// StopChaos turns the chaos mode off (DELETE /_mock/chaos): it decides
// nothing more, though a delivery it already held back, or a duplicate it
// already made due, still goes at its time. It reports whether the mode
// was on.
func (s *Server) StopChaos() bool { return s.svc.StopChaos() }

// SaveState writes the server's state document to w: every account's
// contexts with all their versions, its webhooks with their secrets, and
// the pending webhook deliveries with their attempts and due times (the
// guide docs/mockserver.md, "State that survives a restart", describes
// the document). The event log, finished deliveries, faults, idempotency
// keys and rate-limit buckets are not part of it. It holds webhook
// secrets: keep it private.
//
// The copy is one whole state: a load or a reset happens wholly before it
// or wholly after. It is taken a little at a time (the deliveries, then
// each account under its own lock), so requests are held up only while
// pointers are copied; the text is written after. GET /_mock/state serves
// the same document.
func (s *Server) SaveState(w io.Writer) error { return s.svc.SaveState(w) }

// LoadState replaces the server's state with the document read from r, as
// [Server.SaveState] writes it: contexts, webhooks and pending deliveries
// become the document's, the event log and finished deliveries are
// emptied (running attempts are canceled and forgotten), and so are the
// idempotency keys, whose answers named the old contexts; the cursor salt
// becomes the document's, so its cursors keep working. Keys, faults,
// rate-limit buckets, options and the clock stay.
//
// Every field is held to the API's rules (names, content, tags, webhook
// urls and secrets, ids, times) and references must resolve; the first
// fault found is returned as a [*StateError] (wrapping [ErrInvalidState],
// and [ErrStateTooNew] for a newer format) and nothing is changed. An error
// reading r is returned as it is. Every account of the document must be
// one of the server's (a key's, or one its state file held when it
// started). PUT /_mock/state does the same over HTTP. The document is
// installed as one change: a copy of the state ([Server.SaveState]), a
// [Server.Reset] or another load happens wholly before it or wholly
// after.
func (s *Server) LoadState(r io.Reader) error { return s.svc.LoadState(r) }

// ContractFindings returns the validating proxy's kept findings, oldest
// first (nil without [WithUpstream]). An exchange is checked as its
// answer's last bytes go out: [Server.WaitIdle] waits for the checks
// under way.
func (s *Server) ContractFindings() []ContractFinding {
	if s.proxy == nil {
		return nil
	}
	return s.proxy.Log().All()
}

// ContractCounts returns what the validating proxy saw of each operation
// since the start (or the last [Server.Reset]), by operation id, "off
// the API" last (nil without [WithUpstream]); [Server.WaitIdle] waits
// for the checks under way.
func (s *Server) ContractCounts() []ContractCount {
	if s.proxy == nil {
		return nil
	}
	return s.proxy.Log().Counts()
}
