// Package adminapi is the mock server's admin API, every path under
// /_mock/: the events, deliveries, webhooks, faults, chaos mode, clock and
// state as a test or the dashboard reads and changes them, the
// dashboard's page (served from the dashboard package) and its stream of
// changes (GET /_mock/stream). Its [Handler] admits a request (the access
// package's Host, cross-site and credentials checks), routes it and
// answers it.
//
// It owns the admin API's routes, its answers' shapes and bounds, and the
// stream's subscribers' connections. It reads the service's parts
// directly (the store, the event log, the delivery engine, the faults,
// the chaos mode, the change hub), and asks the service for every action that spans
// parts (an event fired, a webhook changed, a reset, a state loaded), so
// that one is done one way whether a Go method or a request asks. It
// answers the errors the service names (model's) with statuses of their
// own. It never imports mockserver, and keeps no state of the server's.
package adminapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/access"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/dashboard"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/rules"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/service"
)

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
	// Service is the service whose parts the admin API reads and whose
	// actions it asks for.
	Service *service.Service

	// Advancer moves the service's clock: nil when it cannot be advanced
	// (the real clock). ClockTellsChanges says the clock tells the change
	// hub of each time it reaches (a FakeClock the server watches);
	// otherwise an advance does.
	Advancer          Advancer
	ClockTellsChanges bool

	// OpenAPI is the document GET /_mock/openapi.yaml serves.
	OpenAPI []byte
	// Hosts are the names the routes answer to besides IP addresses and
	// localhost; Auth, when set, checks the credentials.
	Hosts access.Hosts
	Auth  *access.Auth
	// KeepAlive is how often an idle stream says so; zero is
	// StreamKeepAlive.
	KeepAlive time.Duration
}

// Handler serves the admin API. It is safe for concurrent use.
type Handler struct {
	c   Config
	svc *service.Service
	// keys are the service's keys as GET /_mock/accounts shows them, their
	// tokens masked.
	keys []keyJSON
	mux  *http.ServeMux
}

// New returns the admin API over cfg's service.
func New(cfg Config) *Handler {
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = StreamKeepAlive
	}
	h := &Handler{c: cfg, svc: cfg.Service, mux: http.NewServeMux()}
	for _, k := range cfg.Service.Keys.All() {
		h.keys = append(h.keys, newKeyJSON(k))
	}
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
	h.handle("/_mock/events/{id}/resend", route{http.MethodPost: h.resendEvent})
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
	h.handle("/_mock/chaos", route{http.MethodGet: h.getChaos, http.MethodPut: h.putChaos, http.MethodDelete: h.stopChaos})
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

// queryParams are the query parameters each route takes, as the OpenAPI
// document lists them (TestAdminQueryParams holds the two equal); a route
// missing here takes none.
var queryParams = map[string][]string{
	"GET /_mock/events":                 {"limit", "cursor", "order", "type", "account"},
	"GET /_mock/deliveries":             {"limit", "cursor", "eventId", "webhookId", "state", "account", "type", "order"},
	"GET /_mock/webhooks":               {"limit", "cursor", "account"},
	"GET /_mock/faults":                 {"limit", "cursor"},
	"GET /_mock/accounts":               {"limit", "cursor"},
	"GET /_mock/contexts":               {"limit", "cursor", "order", "account"},
	"GET /_mock/contexts/{id}/versions": {"limit", "cursor", "order"},
	"GET /_mock/contexts/{id}/diff":     {"from", "to"},
	"GET /_mock/contract/mismatches":    {"limit", "cursor", "order", "operation"},
}

// QueryParams returns the query parameters the route of method and
// pattern takes (for the test that holds them to the OpenAPI document).
func QueryParams(method, pattern string) []string { return queryParams[method+" "+pattern] }

// handle registers a route. Every handler first refuses a malformed query
// string and a parameter the route does not take (400); the dashboard's
// files, which a browser may ask for with a query of its own, take any.
func (h *Handler) handle(pattern string, rt httpapi.Route) {
	anyQuery := dashboard.IsPath(pattern)
	for m, f := range rt {
		allowed := queryParams[m+" "+pattern]
		rt[m] = func(w http.ResponseWriter, r *http.Request) {
			if e := httpapi.CheckQuery(r); e != nil {
				httpapi.WriteError(w, e)
				return
			}
			if !anyQuery {
				if e := httpapi.UnknownParam(r, allowed); e != nil {
					httpapi.WriteError(w, e)
					return
				}
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
