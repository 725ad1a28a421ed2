// Package v1api is the mock server's /v1 API, the service's own endpoints
// as the contract states them: contexts, their versions and exports, and
// webhook registration. Its [Handler] routes a request, admits it (the
// bearer key, the key's rate limit, an injected fault or the chaos mode's
// failure, the query, the write scope, the body limit, the idempotency key
// of a POST) and answers it.
//
// It owns the /v1 routes, the order of the checks and the answers' shapes.
// What it reads and changes is the service's (the store, the keys, the
// faults, the chaos mode, the idempotency keys), and the events it fires
// go through service.Service.Emit, as every event does. It imports
// service, the parts it reads, and what the APIs share (httpapi, rules,
// jsonwire); nothing imports it but mockserver.
package v1api

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/chaos"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/faults"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/keys"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/service"
)

// Handler serves the /v1 API. It is safe for concurrent use.
type Handler struct {
	svc *service.Service
	// readBodyTimeout is how long a client has to send a body, armed
	// again after an injected latency.
	readBodyTimeout time.Duration
}

// New returns the /v1 API over svc; readBodyTimeout is the server's (see
// mockserver.WithReadBodyTimeout).
func New(svc *service.Service, readBodyTimeout time.Duration) *Handler {
	return &Handler{svc: svc, readBodyTimeout: readBodyTimeout}
}

// IsPath reports whether p is under /v1, which the API (or a validating
// proxy) serves.
func IsPath(p string) bool { return p == "/v1" || strings.HasPrefix(p, "/v1/") }

// operation is an authenticated /v1 request's handler; id is the context
// of its path, if its path names one.
type operation func(h *Handler, w http.ResponseWriter, r *http.Request, k *keys.Key, id string)

// A route is one path of the API, with its operations by method.
type route struct {
	// pattern is the route's template, the request's Pattern once routed,
	// which names its span.
	pattern string
	// allow lists the methods, for a 405's Allow header.
	allow                  string
	get, post, put, delete operation
}

// The routes of the /v1 API.
var (
	contextsRoute = route{pattern: "/v1/contexts", allow: "GET, POST",
		get: (*Handler).listContexts, post: (*Handler).createContext}
	contextRoute = route{pattern: "/v1/contexts/{id}", allow: "GET, PUT, DELETE",
		get: (*Handler).getContext, put: (*Handler).updateContext, delete: (*Handler).deleteContext}
	versionsRoute = route{pattern: "/v1/contexts/{id}/versions", allow: "GET", get: (*Handler).listVersions}
	exportRoute   = route{pattern: "/v1/contexts/{id}/export", allow: "GET", get: (*Handler).exportContext}
	webhooksRoute = route{pattern: "/v1/webhooks", allow: "POST", post: (*Handler).registerWebhook}
)

// operation returns the route's operation for method, and whether it
// writes (every method but GET); nil when the route has none.
func (rt *route) operation(method string) (op operation, write bool) {
	switch method {
	case http.MethodGet:
		return rt.get, false
	case http.MethodPost:
		return rt.post, true
	case http.MethodPut:
		return rt.put, true
	case http.MethodDelete:
		return rt.delete, true
	}
	return nil, false
}

// match finds the route of r's path and the context id it names. It
// matches as http.ServeMux matches such patterns, segment by segment,
// each unescaped ("/v1/contexts/a%2Fb" names the context "a/b"), without
// its cost: a /v1 request is routed without allocating.
func match(r *http.Request) (*route, string, bool) {
	p := r.URL.Path
	escaped := r.URL.RawPath != ""
	if escaped {
		// Only an escaped slash (or another character the default
		// encoding would not escape) sets RawPath: split the path as
		// sent, then unescape each segment.
		p = r.URL.EscapedPath()
	}
	seg := func(s string) string {
		if escaped {
			u, err := url.PathUnescape(s)
			if err != nil {
				return "\x00" // no route's
			}
			return u
		}
		return s
	}
	rest, ok := strings.CutPrefix(p, "/v1/")
	if !ok {
		return nil, "", false
	}
	first, rest, more := strings.Cut(rest, "/")
	switch first = seg(first); {
	case !more && first == "contexts":
		return &contextsRoute, "", true
	case !more && first == "webhooks":
		return &webhooksRoute, "", true
	case !more || first != "contexts":
		return nil, "", false
	}
	id, rest, more := strings.Cut(rest, "/")
	if id = seg(id); id == "" {
		return nil, "", false
	}
	if !more {
		return &contextRoute, id, true
	}
	if strings.Contains(rest, "/") {
		return nil, "", false
	}
	switch seg(rest) {
	case "versions":
		return &versionsRoute, id, true
	case "export":
		return &exportRoute, id, true
	}
	return nil, "", false
}

// ServeHTTP routes a /v1 request: a path of no route is a 404, a method
// its route has not a 405 with Allow; the request is then counted by the
// chaos mode, when one is set, which draws its decision (its ordinal is
// its place among the requests routed, whatever its key, rate limit and
// faults make of it), and admitted and served (authenticated).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt, id, ok := match(r)
	if !ok {
		httpapi.NoSuchPath(w, r)
		return
	}
	r.Pattern = rt.pattern
	op, write := rt.operation(r.Method)
	if op == nil {
		httpapi.MethodNotAllowed(w, r, rt.allow)
		return
	}
	var draw chaos.RequestDraw
	if run := h.svc.Chaos.Current(); run != nil {
		draw = run.NextRequest()
	}
	h.authenticated(w, r, op, write, id, draw)
}

// authenticated admits a request: bearer authentication (401), the key's
// rate limit (429), then an injected fault, or else the chaos mode's
// failure when draw is one, then serveAuthenticated.
func (h *Handler) authenticated(w http.ResponseWriter, r *http.Request, op operation, write bool, id string, draw chaos.RequestDraw) {
	k := h.authenticate(r)
	if k == nil {
		w.Header()["Www-Authenticate"] = []string{"Bearer"}
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusUnauthorized, Type: httpapi.TypeUnauthorized,
			Message: "missing or invalid API key: send Authorization: Bearer <key>"})
		return
	}
	if !h.allow(w, k) {
		return
	}
	// Injected faults come after authentication and the rate limit, as
	// a real server's failures would: an unauthenticated request still
	// gets its 401, and a faulted request has used a token.
	f, done := h.injectFault(w, r)
	if done {
		return
	}
	// A request a fault matched is the fault's: the test placed it.
	if draw.Status != 0 && f == (faults.Fault{}) {
		h.injectChaos(w, r, draw)
		return
	}
	if faults.LosesAnswer(f) {
		h.serveLosingAnswer(w, r, f, func(w http.ResponseWriter) { h.serveAuthenticated(w, r, k, op, write, id) })
		return
	}
	h.serveAuthenticated(w, r, k, op, write, id)
}

// serveAuthenticated runs an authenticated request that passed its rate
// limit and faults: a malformed query (400), the write scope (403), the
// body limit (413), the idempotency key of a POST, then the operation.
func (h *Handler) serveAuthenticated(w http.ResponseWriter, r *http.Request, k *keys.Key, op operation, write bool, id string) {
	if e := httpapi.CheckQuery(r); e != nil {
		httpapi.WriteError(w, e)
		return
	}
	if write && k.Scope != model.ScopeWrite {
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
		// With an Idempotency-Key the store runs it once per account and
		// key (see idempotency.Store.Serve).
		h.svc.Idem.Serve(w, r, h.svc.Engine, k.Data.ID(), func(w http.ResponseWriter, r *http.Request) { op(h, w, r, k, id) })
		return
	}
	op(h, w, r, k, id)
}

// authenticate finds the key of r's bearer token, or nil.
func (h *Handler) authenticate(r *http.Request) *keys.Key {
	auth := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return nil
	}
	token = strings.TrimSpace(token)
	if token == "" {
		return nil
	}
	return h.svc.Keys.Lookup(token)
}
