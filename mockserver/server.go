package mockserver

import (
	"cmp"
	"context"
	"crypto/sha256"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/adminapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/clock"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/events"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/faults"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/idempotency"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/ids"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/proxy"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/statefile"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/store"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/telemetry"
)

// Server is the in-memory Context Management Service. It is an
// http.Handler serving the /v1 API (and, unless turned off, /_mock/); use
// [New] to make one or [NewTestServer] to run one in a test. It is safe for
// concurrent use.
type Server struct {
	clock Clock
	// clk is clock as the server's parts read it (engineClock).
	clk        clock.Clock
	logger     *slog.Logger
	httpsOnly  bool
	requestLog bool
	// admin serves every path under /_mock/ (admin.go); nil when the
	// admin routes are off.
	admin *adminapi.Handler

	keys       []*apiKey
	defaultKey Key

	readHeaderTimeout time.Duration
	readBodyTimeout   time.Duration
	idleTimeout       time.Duration

	// store holds every account's contexts and webhooks. Its accounts are
	// fixed after Open (accounts come from keys, and from a state file
	// loaded at the start).
	store *store.Store

	// cursors makes the lists' cursors opaque and lets the server reject
	// forged or corrupted ones.
	cursors *httpapi.Cursors

	// events is the event history (the last historyLimit events).
	events *events.Log

	// onEvent, when set (by the delivery engine), is called after each
	// event is recorded, with the account's active webhooks subscribed to
	// its type and the context of the request (or Go call) that fired it.
	// It is called without any store lock held.
	onEvent func(ctx context.Context, ev events.Event, targets []*store.Webhook)

	// deliveries is the webhook delivery engine, fed by onEvent.
	deliveries *delivery.Engine

	// faults are the faults injected into /v1 requests.
	faults *faults.Set

	// idem holds the POSTs' idempotency keys.
	idem idempotency.Store

	// stateMu makes the changes of the whole state (LoadState and PUT
	// /_mock/state, the state file's load, Reset) and the copies of it
	// (SaveState, GET /_mock/state, the state file's saves) exclude one
	// another: each copy is one whole state, and a load is never mixed
	// with a reset or another load. Copies share it. It comes before
	// every other lock, and only those take it: requests and deliveries
	// change the state under the finer locks alone.
	stateMu sync.RWMutex

	// persist writes the state file (statefile.go); nil without one.
	// persistDeliveries is set once the file is loaded: from then on
	// every change of a delivery is a change of the state.
	persist           *statefile.Keeper
	persistDeliveries atomic.Bool

	// changes fans the server's changes out to the dashboard's streams.
	changes changes.Hub

	// tel traces and measures requests, events and delivery attempts
	// (WithTracerProvider, WithMeterProvider); nil when neither is given.
	tel *telemetry.Telemetry

	// proxy, with WithUpstream, forwards the /v1 requests instead of
	// mux (proxy.go).
	proxy *proxy.Proxy

	mux *http.ServeMux
	// handler serves every request: serve, or (in this package's tests
	// only) serve wrapped by testHandler.
	handler http.Handler
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
// creates one key (plan business, scope write), see [Server.DefaultKey].
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
	s := &Server{
		clock: cf.clock, clk: engineClock(cf.clock), logger: cf.logger, httpsOnly: cf.httpsOnly,
		requestLog:        cf.requestLog,
		store:             store.New(),
		events:            events.NewLog(cf.historyLimit, MaxEventHistoryBytes),
		readHeaderTimeout: orDefault(cf.readHeaderTimeout, DefaultReadHeaderTimeout),
		readBodyTimeout:   orDefault(cf.readBodyTimeout, DefaultReadBodyTimeout),
		idleTimeout:       orDefault(cf.idleTimeout, DefaultIdleTimeout),
	}
	s.faults = faults.NewSet(&s.changes)
	tel, err := telemetry.New(telemetry.Config{TracerProvider: cf.tracerProvider, MeterProvider: cf.meterProvider,
		Propagator: cf.propagator})
	if err != nil {
		return nil, invalidOption("WithMeterProvider: %v", err)
	}
	s.tel = tel
	s.deliveries = delivery.New(delivery.Config{
		Clock:      s.clk,
		Schedule:   cf.retrySchedule,
		Timeout:    cf.deliveryTimeout,
		Workers:    cf.deliveryWorkers,
		Logger:     cf.logger,
		History:    cf.historyLimit,
		MaxBacklog: cf.deliveryBacklog,
		RetryLimit: cf.retryLimit,
		HTTPClient: cf.deliveryClient,
		Errors:     deliveryErrors,
		OnChange:   s.deliveryChanged,
		Telemetry:  s.tel,
	})
	s.onEvent = func(ctx context.Context, ev events.Event, targets []*store.Webhook) {
		for _, w := range targets {
			// The event's Body is never changed, so the deliveries share
			// it with the event log instead of copying it.
			s.deliveries.Enqueue(ctx, ev.ID, ev.Type, ev.Body, w)
		}
	}
	s.cursors = httpapi.NewCursors()
	if len(cf.keys) == 0 {
		cf.keys = []Key{{Token: "sk_test_" + strings.TrimPrefix(ids.New("k_"), "k_"), Plan: PlanBusiness, Scope: ScopeWrite}}
	}
	tokens := make(map[string]int, len(cf.keys))
	for i, k := range cf.keys {
		if first, ok := tokens[k.Token]; ok && k.Token != "" {
			return nil, invalidOption("WithKey #%d: the same token as key #%d", i+1, first)
		}
		tokens[k.Token] = i + 1
		if k.Plan == "" {
			k.Plan = PlanPro
		}
		if k.Scope == "" {
			k.Scope = ScopeWrite
		}
		if k.Account == "" {
			k.Account = ids.New("acct_")
		}
		if k.User == "" {
			k.User = AccountUser(k.Account)
		}
		if err := k.validate(); err != nil {
			return nil, invalidOption("WithKey #%d: %s", i+1, strings.TrimPrefix(err.Error(), "mockserver: "))
		}
		ak := &apiKey{Key: k, hash: sha256.Sum256([]byte(k.Token))}
		if pm, b, limited := k.limits(); limited {
			ak.perMinute, ak.burst = pm, b
			ak.limiter.Store(rate.NewLimiter(rate.Limit(float64(pm)/60), b))
			ak.limitHdr = []string{strconv.Itoa(pm)}
		}
		a := s.store.AddAccount(k.Account)
		a.AddUser(k.User)
		ak.acct = a
		s.keys = append(s.keys, ak)
		if i == 0 {
			s.defaultKey = k
		}
	}
	if cf.upstream != "" {
		p, err := s.newProxy(&cf)
		if err != nil {
			return nil, err
		}
		s.proxy = p
	}
	if cf.admin {
		s.admin = s.newAdmin(&cf)
	}
	s.routes()
	s.handler = http.HandlerFunc(s.serve)
	if testHandler != nil {
		s.handler = testHandler(s, s.handler)
	}
	if cf.stateFile != "" {
		s.persist = statefile.NewKeeper(statefile.Config{
			Path: cf.stateFile, Interval: orDefault(cf.stateInterval, DefaultStateInterval),
			Copy: func() statefile.Doc { return stateDoc{s.snapshotState()} }, Logger: s.logger, Hooks: cf.stateHooks,
		})
		if err := s.loadStateFile(cf.stateFile); err != nil {
			return nil, err
		}
		// Every change of a delivery is a change of the state; the store's
		// changes are noted where requests and Go methods make them.
		s.persistDeliveries.Store(true)
	}
	// Last, so that a server Open refuses is not left on its clock.
	if c, ok := cf.clock.(watchedClock); ok {
		c.watch(s)
	}
	return s, nil
}

// deliveryChanged is told of every change of a delivery, under the
// deliverer's lock: it notes a change of the state (with a state file) and
// tells the dashboard's streams. Neither blocks.
func (s *Server) deliveryChanged(c changes.Change) {
	if s.persistDeliveries.Load() {
		s.stateChanged()
	}
	s.changes.Publish(c)
}

// moved and settle make the server a watcher of its FakeClock
// (clockWatcher): the dashboards are told each time the clock reaches, and
// an advance waits at each due time until the delivery attempts due then
// have run.
func (s *Server) moved(now time.Time) {
	s.changes.Publish(changes.Change{Kind: changes.KindClock, Now: jsonwire.FormatTime(now)})
}

func (s *Server) settle() { s.deliveries.Settle() }

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
func (s *Server) CloseStreams() { s.changes.CloseAll() }

// armBodyDeadline gives the client readBodyTimeout from now to send r's
// body, if it has one: past it a read of the body fails, and the server
// answers and closes the connection instead of waiting for ever (see
// deadlineBody).
func (s *Server) armBodyDeadline(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.readBodyTimeout))
}

// deadlineBody lifts the body's read deadline once the body has been read
// to its end: net/http then starts a background read of the connection,
// and a deadline passing under it would cancel the request's context while
// the handler still runs (a long fault latency, a large export).
type deadlineBody struct {
	io.ReadCloser
	w      http.ResponseWriter
	lifted bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.lifted {
		b.lifted = true
		_ = http.NewResponseController(b.w).SetReadDeadline(time.Time{})
	}
	return n, err
}

// DefaultKey returns the first key (the one New created when given none),
// with its defaults filled in.
func (s *Server) DefaultKey() Key { return s.defaultKey }

// Keys returns every key the server accepts, in the order given, with
// defaults filled in.
func (s *Server) Keys() []Key {
	out := make([]Key, len(s.keys))
	for i, k := range s.keys {
		out[i] = k.Key
	}
	return out
}

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	api := func(pattern string, hs map[string]apiHandler) {
		rt := httpapi.Route{}
		for m, h := range hs {
			rt[m] = s.authenticated(m != http.MethodGet, h)
		}
		s.mux.Handle(pattern, rt)
	}
	type m = map[string]apiHandler
	api("/v1/contexts", m{http.MethodGet: s.listContexts, http.MethodPost: s.createContext})
	api("/v1/contexts/{id}", m{http.MethodGet: s.getContext, http.MethodPut: s.updateContext, http.MethodDelete: s.deleteContext})
	api("/v1/contexts/{id}/versions", m{http.MethodGet: s.listVersions})
	api("/v1/contexts/{id}/export", m{http.MethodGet: s.exportContext})
	api("/v1/webhooks", m{http.MethodPost: s.registerWebhook})
	s.mux.HandleFunc("/", httpapi.NoSuchPath)
}

// ServeHTTP gives every response a request id, turns a panic into the
// contract's 500 error, then routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rid := ids.New("req_")
	w.Header()["X-Request-Id"] = []string{rid}
	rw := &trackingWriter{ResponseWriter: w}
	if s.tel != nil {
		// The span ends last, after a panic is answered: r is the request
		// as routed (its Pattern names the span).
		var q *telemetry.Request
		r, q = s.tel.StartRequest(r, rid)
		defer func() { s.tel.End(q, r, rw.answered()) }()
	}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.logger.Error("mockserver: recovered panic", "requestId", rid, "method", r.Method, "path", r.URL.Path, "panic", v)
			if !rw.wrote {
				httpapi.WriteError(rw, &httpapi.Error{Status: http.StatusInternalServerError, Type: httpapi.TypeInternal, Message: "internal error"})
			}
		}
	}()
	if r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody {
		s.armBodyDeadline(rw, r)
		r.Body = &deadlineBody{ReadCloser: r.Body, w: rw}
	}
	switch {
	case s.admin != nil && adminapi.IsPath(r.URL.Path):
		// The admin API admits (its Host, site and credentials) and
		// answers every path under /_mock/ itself.
		s.admin.ServeHTTP(rw, r)
	case httpapi.UncleanPath(r.URL.Path):
		httpapi.NoSuchPath(rw, r)
	case s.proxy != nil && isAPIPath(r.URL.Path):
		// A validating proxy forwards /v1 to its upstream, whose request
		// id the answer carries: the log names that one.
		s.proxy.ServeHTTP(rw, r)
		rid = cmp.Or(w.Header().Get("X-Request-Id"), rid)
	default:
		s.mux.ServeHTTP(rw, r)
	}
	// Any request but a read may have changed the state (a fault in mode
	// after answers a 5xx for one that did): the state file is written
	// once its interval has passed. Go methods that change the state note
	// it themselves.
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		s.stateChanged()
	}
	// Only the method and path are logged: never a header (the
	// Authorization header carries the key) nor the query.
	level := slog.LevelDebug
	if s.requestLog {
		level = slog.LevelInfo
	}
	if s.logger.Enabled(r.Context(), level) {
		s.logger.LogAttrs(r.Context(), level, "request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", rw.answered()),
			slog.Duration("duration", time.Since(start)), slog.String("requestId", rid))
	}
}

// trackingWriter remembers whether the header was written, so the panic
// handler knows if it can still send an error.
type trackingWriter struct {
	http.ResponseWriter
	wrote  bool
	status int
}

func (t *trackingWriter) WriteHeader(code int) {
	if !t.wrote {
		t.wrote, t.status = true, code
	}
	t.ResponseWriter.WriteHeader(code)
}

func (t *trackingWriter) Write(b []byte) (int, error) {
	if !t.wrote {
		t.wrote, t.status = true, http.StatusOK
	}
	return t.ResponseWriter.Write(b)
}

// answered is the status the request was answered with (200 when the
// handler wrote nothing).
func (t *trackingWriter) answered() int {
	if !t.wrote {
		return http.StatusOK
	}
	return t.status
}

// Unwrap lets http.ResponseController reach the real writer.
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// apiHandler handles an authenticated /v1 request.
type apiHandler func(w http.ResponseWriter, r *http.Request, k *apiKey)

// authenticated wraps an API handler: bearer authentication (401), the
// key's rate limit (429), write scope (403) and the body limit (413).
func (s *Server) authenticated(write bool, h apiHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		k := s.authenticate(r)
		if k == nil {
			w.Header()["Www-Authenticate"] = []string{"Bearer"}
			httpapi.WriteError(w, &httpapi.Error{Status: http.StatusUnauthorized, Type: httpapi.TypeUnauthorized,
				Message: "missing or invalid API key: send Authorization: Bearer <key>"})
			return
		}
		if !s.allow(w, k) {
			return
		}
		// Injected faults come after authentication and the rate limit, as
		// a real server's failures would: an unauthenticated request still
		// gets its 401, and a faulted request has used a token.
		f, done := s.injectFault(w, r)
		if done {
			return
		}
		if f.LosesAnswer() {
			s.serveLosingAnswer(w, r, f, func(w http.ResponseWriter) { s.serveAuthenticated(w, r, k, write, h) })
			return
		}
		s.serveAuthenticated(w, r, k, write, h)
	}
}

// serveAuthenticated runs an authenticated request that passed its rate
// limit and faults: a malformed query (400), the write scope (403), the
// body limit (413), the idempotency key of a POST, then the operation.
func (s *Server) serveAuthenticated(w http.ResponseWriter, r *http.Request, k *apiKey, write bool, h apiHandler) {
	if e := httpapi.CheckQuery(r); e != nil {
		httpapi.WriteError(w, e)
		return
	}
	if write && k.Scope != ScopeWrite {
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusForbidden, Type: httpapi.TypeForbidden,
			Message: "this API key has read scope and cannot " + r.Method})
		return
	}
	if write {
		if r.ContentLength > httpapi.MaxBody {
			httpapi.WriteError(w, httpapi.TooLarge())
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, httpapi.MaxBody)
	}
	if r.Method == http.MethodPost {
		s.serveIdempotent(w, r, k, h)
		return
	}
	h(w, r, k)
}

func (s *Server) authenticate(r *http.Request) *apiKey {
	auth := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return nil
	}
	return s.lookupKey(token)
}
