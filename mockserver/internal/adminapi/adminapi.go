// Package adminapi is the mock server's admin API, every path under
// /_mock/: the events, deliveries, webhooks, faults, clock and state as a
// test or the dashboard reads and changes them, the dashboard's page
// (served from the dashboard package) and its stream of changes
// (GET /_mock/stream). Its [Handler] admits a request (the access
// package's Host, cross-site and credentials checks), routes it and
// answers it.
//
// It owns the admin API's routes, its answers' shapes and bounds, and the
// stream's subscribers' connections. It reads the server's parts
// directly (the store, the event log, the delivery engine, the faults,
// the change hub), and asks the server ([Backend]) for every action that
// spans parts (an event fired, a webhook changed, a reset, a state
// loaded), so that one is done one way whether a Go method or a request
// asks. It never imports mockserver, and keeps no state of the server's.
package adminapi

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/internal/mockrules"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/access"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/clock"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/dashboard"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/events"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/faults"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/proxy"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/rules"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/store"
)

// Backend is what the admin API asks of the server for the actions that
// span its parts. Each is the mockserver.Server method of the same name,
// with the internal packages' types.
type Backend interface {
	// ValidEventType checks an event type as EmitEvent does.
	ValidEventType(typ string) error
	// EmitEvent records an event for an account ("" is the default
	// key's) and delivers it; its error wraps Errors.UnknownAccount for
	// an account no key belongs to.
	EmitEvent(ctx context.Context, account string, typ contextsvc.EventType, data json.RawMessage) (events.Event, error)
	// Publish fires context.published for a context of any account; its
	// error means there is no such context.
	Publish(ctx context.Context, id string) (events.Event, error)
	// UpdateWebhook changes a webhook in place; its error is the answer.
	UpdateWebhook(id string, u WebhookUpdate) (store.Info, *httpapi.Error)
	// DeleteWebhook removes a webhook; its error is the answer.
	DeleteWebhook(id string) *httpapi.Error
	// AddFault adds a fault; its error wraps Errors.TooManyFaults when
	// the list is full, and says what is wrong with the fault otherwise.
	AddFault(f faults.Fault) error
	// Reset empties the server as if it were new.
	Reset()
	// SaveState writes the state document to w.
	SaveState(w io.Writer) error
	// LoadState replaces the state with the document read from r; a
	// document it refuses is a *state.Error, and an error reading r is
	// returned as it is.
	LoadState(r io.Reader) error
}

// WebhookUpdate is a change to a webhook, as mockserver.WebhookUpdate
// (which converts to it): each field set replaces the webhook's.
type WebhookUpdate struct {
	URL    *string
	Events []contextsvc.EventType
	Active *bool
	Secret *string
}

// Errors are the errors of the server's actions that the admin API
// answers with a status of their own.
type Errors struct {
	// UnknownAccount is wrapped by EmitEvent's error for an account no
	// key belongs to (a 400 about account).
	UnknownAccount error
	// TooManyFaults is wrapped by AddFault's error when the list is full
	// (a 409).
	TooManyFaults error
	// Delivery are the delivery engine's (404, 409 and 503).
	Delivery delivery.Errors
}

// Advancer is a clock the admin API can move, in the steps of an
// advance, so that it can look at what is due between them: a fake
// clock's engine (clock.Fake), or a test's clock adapted.
type Advancer interface {
	// TakeTurn waits for the advances before this one to end, or for
	// ctx to end (its error is returned, the clock unmoved).
	TakeTurn(ctx context.Context) error
	// GiveTurn lets the next advance run.
	GiveTurn()
	// RunDue runs what is due at the clock's time now.
	RunDue()
	// RunTo moves the clock to target, running what is due on the way;
	// when ctx ends it stops at a due time and returns ctx's error.
	RunTo(ctx context.Context, target time.Time) error
}

// Config is what the admin API serves from.
type Config struct {
	// The server's parts, which the admin API reads (and the faults it
	// clears).
	Store      *store.Store
	Events     *events.Log
	Deliveries *delivery.Engine
	Faults     *faults.Set
	Changes    *changes.Hub
	Cursors    *httpapi.Cursors
	// Backend does the actions that span the parts.
	Backend Backend
	Errors  Errors

	// Clock is the server's clock. Advancer moves it: nil when it cannot
	// be advanced (the real clock). ClockTellsChanges says the clock
	// tells the change hub of each time it reaches (a FakeClock the
	// server watches); otherwise an advance does.
	Clock             clock.Clock
	Advancer          Advancer
	ClockTellsChanges bool

	// Keys are the server's keys, in the order given (their tokens are
	// masked here; the Plan of each is the contract's).
	Keys []Key
	// OpenAPI is the document GET /_mock/openapi.yaml serves.
	OpenAPI []byte
	// HTTPSOnly refuses webhook urls that are not https, as registration
	// does.
	HTTPSOnly bool
	// Hosts are the names the routes answer to besides IP addresses and
	// localhost; Auth, when set, checks the credentials.
	Hosts access.Hosts
	Auth  *access.Auth
	// Proxy is the validating proxy whose findings GET /_mock/contract…
	// lists; nil when the server is no proxy.
	Proxy *proxy.Proxy
	// KeepAlive is how often an idle stream says so; zero is
	// StreamKeepAlive.
	KeepAlive time.Duration
	Logger    *slog.Logger
}

// Handler serves the admin API. It is safe for concurrent use.
type Handler struct {
	c   Config
	mux *http.ServeMux
}

// New returns the admin API over cfg's parts.
func New(cfg Config) *Handler {
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = StreamKeepAlive
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	keys := make([]Key, len(cfg.Keys))
	for i, k := range cfg.Keys {
		k.Token = mockrules.MaskToken(k.Token)
		keys[i] = k
	}
	cfg.Keys = keys
	h := &Handler{c: cfg, mux: http.NewServeMux()}
	h.routes()
	h.mux.HandleFunc("/", httpapi.NoSuchPath)
	return h
}

// IsPath reports whether p is under /_mock/, the admin API's.
func IsPath(p string) bool { return p == "/_mock" || strings.HasPrefix(p, "/_mock/") }

// ServeHTTP serves a request under /_mock/. Every answer under the
// dashboard's path carries its security headers, its errors too (a 404,
// 405, 403 or 400). Then come the Host (access.Hosts), where a browser
// sent the request from (access.CheckCrossSite) and the credentials
// (access.Auth): the cheap checks first, and no bcrypt check for a
// request that could not be served anyway.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if dashboard.IsPath(r.URL.Path) {
		dashboard.SetHeaders(w.Header())
	}
	if httpapi.UncleanPath(r.URL.Path) {
		httpapi.NoSuchPath(w, r)
		return
	}
	if e := h.c.Hosts.Check(r); e != nil {
		httpapi.WriteError(w, e)
		return
	}
	if e := access.CheckCrossSite(r); e != nil {
		httpapi.WriteError(w, e)
		return
	}
	if h.c.Auth != nil && !h.c.Auth.Check(w, r) {
		return
	}
	h.mux.ServeHTTP(w, r)
}

// routes registers the admin API's endpoints. They need no bearer key:
// the mock runs on loopback for its user alone, the access checks guard
// them, and mockserver.WithAdmin(false) (the command's -admin=false)
// turns them off.
func (h *Handler) routes() {
	type route = httpapi.Route
	h.handle("/_mock/openapi.yaml", route{http.MethodGet: h.getOpenAPI})
	h.handle("/_mock/events", route{http.MethodGet: h.listEvents, http.MethodPost: h.emitEvent})
	h.handle("/_mock/events/{id}", route{http.MethodGet: h.getEvent})
	h.handle("/_mock/deliveries", route{http.MethodGet: h.listDeliveries})
	h.handle("/_mock/deliveries/{id}", route{http.MethodGet: h.getDelivery})
	h.handle("/_mock/deliveries/{id}/redeliver", route{http.MethodPost: h.redeliver})
	h.handle("/_mock/webhooks", route{http.MethodGet: h.listWebhooks})
	h.handle("/_mock/webhooks/{id}", route{http.MethodGet: h.getWebhook, http.MethodPatch: h.updateWebhook, http.MethodDelete: h.deleteWebhook})
	h.handle("/_mock/accounts", route{http.MethodGet: h.listAccounts})
	h.handle("/_mock/contexts", route{http.MethodGet: h.listContexts})
	h.handle("/_mock/contexts/{id}", route{http.MethodGet: h.getContext})
	h.handle("/_mock/contexts/{id}/versions", route{http.MethodGet: h.listContextVersions})
	h.handle("/_mock/contexts/{id}/diff", route{http.MethodGet: h.diffContext})
	h.handle("/_mock/contexts/{id}/publish", route{http.MethodPost: h.publish})
	h.handle("/_mock/clock", route{http.MethodGet: h.getClock})
	h.handle("/_mock/clock/advance", route{http.MethodPost: h.advanceClock})
	h.handle("/_mock/reset", route{http.MethodPost: h.reset})
	h.handle("/_mock/faults", route{http.MethodGet: h.listFaults, http.MethodPost: h.addFault, http.MethodDelete: h.clearFaults})
	h.handle("/_mock/state", route{http.MethodGet: h.getState, http.MethodPut: h.putState})
	h.handle("/_mock/summary", route{http.MethodGet: h.summary})
	h.handle("/_mock/contract", route{http.MethodGet: h.getContract})
	h.handle("/_mock/contract/mismatches", route{http.MethodGet: h.listMismatches})
	h.handle("/_mock/contract/mismatches/{id}", route{http.MethodGet: h.getMismatch})
	h.handle("/_mock/stream", route{http.MethodGet: h.stream})
	// The dashboard's page and files.
	h.handle("/_mock/ui/{$}", route{http.MethodGet: func(w http.ResponseWriter, r *http.Request) { dashboard.Serve(w, r, "index.html") }})
	h.handle("/_mock/ui", route{http.MethodGet: func(w http.ResponseWriter, r *http.Request) {
		// The page's links are relative to /_mock/ui/.
		w.Header()["Location"] = []string{"/_mock/ui/"}
		w.WriteHeader(http.StatusMovedPermanently)
	}})
	h.handle("/_mock/ui/{asset}", route{http.MethodGet: func(w http.ResponseWriter, r *http.Request) {
		dashboard.Serve(w, r, r.PathValue("asset"))
	}})
}

// handle registers a route. Every handler first refuses a malformed query
// string (400).
func (h *Handler) handle(pattern string, rt httpapi.Route) {
	for m, f := range rt {
		rt[m] = func(w http.ResponseWriter, r *http.Request) {
			if e := httpapi.CheckQuery(r); e != nil {
				httpapi.WriteError(w, e)
				return
			}
			f(w, r)
		}
	}
	h.mux.Handle(pattern, rt)
}

func (h *Handler) getOpenAPI(w http.ResponseWriter, r *http.Request) {
	w.Header()["Content-Type"] = []string{"application/yaml"}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(h.c.OpenAPI)
}

// readObject caps the body at the API's limit and decodes it as
// httpapi.ReadObject does (a JSON object with only the allowed fields).
func readObject(w http.ResponseWriter, r *http.Request, allowed ...string) (map[string]json.RawMessage, *httpapi.Error) {
	if r.ContentLength > httpapi.MaxBody {
		return nil, httpapi.TooLarge()
	}
	r.Body = http.MaxBytesReader(w, r.Body, httpapi.MaxBody)
	return httpapi.ReadObject(r, allowed...)
}

// filterParam reads an optional filter of a list: absent is "", and
// present it must be one non-empty value.
func filterParam(q url.Values, name string) (string, *httpapi.Error) {
	vs, ok := q[name]
	if !ok {
		return "", nil
	}
	if len(vs) > 1 || vs[0] == "" {
		return "", httpapi.BadRequest(name, name+" must be one non-empty value")
	}
	return vs[0], nil
}

// accountFilter reads the optional ?account= of a list: one valid
// account name (an account the server does not have lists nothing).
func accountFilter(q url.Values) (string, *httpapi.Error) {
	account, e := filterParam(q, "account")
	if e != nil || account == "" {
		return "", e
	}
	if err := rules.Account(account); err != nil {
		return "", httpapi.BadRequest("account", err.Error())
	}
	return account, nil
}

// typeFilter reads the optional ?type= of a list: an event type as POST
// /_mock/events takes it.
func typeFilter(q url.Values) (contextsvc.EventType, *httpapi.Error) {
	typ, e := filterParam(q, "type")
	if e != nil || typ == "" {
		return "", e
	}
	if err := rules.EventType(typ); err != nil {
		return "", httpapi.BadRequest("type", err.Error())
	}
	return contextsvc.EventType(typ), nil
}
