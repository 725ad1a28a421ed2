package mockserver

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/events"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/faults"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/rules"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/store"
)

// openAPIDocument is the OpenAPI 3.0.3 description of every endpoint of
// the mock server, the contract in machine-readable form.
//
//go:embed openapi.yaml
var openAPIDocument []byte

// OpenAPI returns the embedded OpenAPI document (a copy).
func OpenAPI() []byte { return append([]byte(nil), openAPIDocument...) }

// adminRoutes registers the /_mock/ endpoints. They need no bearer key:
// the mock runs on loopback for its user alone, and WithAdmin(false) (the
// command's -admin=false) turns them off. Each one is a thin layer over a
// method of *Server.
func (s *Server) adminRoutes() {
	admin := s.handleAdmin
	admin("/_mock/openapi.yaml", route{http.MethodGet: func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Content-Type"] = []string{"application/yaml"}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(openAPIDocument)
	}})
	admin("/_mock/events", route{http.MethodGet: s.adminListEvents, http.MethodPost: s.adminEmitEvent})
	admin("/_mock/deliveries", route{http.MethodGet: s.adminListDeliveries})
	admin("/_mock/deliveries/{id}", route{http.MethodGet: s.adminGetDelivery})
	admin("/_mock/deliveries/{id}/redeliver", route{http.MethodPost: s.adminRedeliver})
	admin("/_mock/webhooks", route{http.MethodGet: s.adminListWebhooks})
	admin("/_mock/webhooks/{id}", route{http.MethodGet: s.adminGetWebhook, http.MethodPatch: s.adminUpdateWebhook, http.MethodDelete: s.adminDeleteWebhook})
	admin("/_mock/contexts/{id}/publish", route{http.MethodPost: s.adminPublish})
	admin("/_mock/clock", route{http.MethodGet: s.adminGetClock})
	admin("/_mock/clock/advance", route{http.MethodPost: s.adminAdvanceClock})
	admin("/_mock/reset", route{http.MethodPost: s.adminReset})
	admin("/_mock/faults", route{http.MethodGet: s.adminListFaults, http.MethodPost: s.adminAddFault, http.MethodDelete: s.adminClearFaults})
	admin("/_mock/state", route{http.MethodGet: s.adminGetState, http.MethodPut: s.adminPutState})
	s.dashboardRoutes()
}

// handleAdmin registers an admin route. Every admin handler first refuses
// a malformed query string (400); the Host, cross-site and credentials
// checks come before routing (serve), for every /_mock/ path.
func (s *Server) handleAdmin(pattern string, rt route) {
	for m, h := range rt {
		rt[m] = func(w http.ResponseWriter, r *http.Request) {
			if e := httpapi.CheckQuery(r); e != nil {
				httpapi.WriteError(w, e)
				return
			}
			h(w, r)
		}
	}
	s.mux.Handle(pattern, rt)
}

// readAdminObject caps the body at the API's limit and decodes it as
// readObject does (a JSON object with only the allowed fields).
func readAdminObject(w http.ResponseWriter, r *http.Request, allowed ...string) (map[string]json.RawMessage, *httpapi.Error) {
	if r.ContentLength > httpapi.MaxBody {
		return nil, httpapi.TooLarge()
	}
	r.Body = http.MaxBytesReader(w, r.Body, httpapi.MaxBody)
	return httpapi.ReadObject(r, allowed...)
}

// filterParam reads an optional filter of an admin list: absent is "", and
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

// accountFilter reads the optional ?account= of an admin list: one valid
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

// typeFilter reads the optional ?type= of an admin list: an event type as
// POST /_mock/events takes it.
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

// adminListEvents pages through the kept events, oldest first, like the
// /v1 lists (limit, cursor), optionally of one type.
func (s *Server) adminListEvents(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	typ, e := typeFilter(q)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	account, e := accountFilter(q)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	scope := httpapi.ListScope(string(typ), account)
	limit, start, scope, e := s.cursors.ListParams(q, httpapi.CursorEvents, scope)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	recs, next := s.events.Page(start, limit, typ, account)
	items := make([]events.Event, len(recs))
	for i, rec := range recs {
		items[i] = rec.Event
	}
	httpapi.WritePage(w, s.cursors, httpapi.CursorEvents, scope, items, next)
}

func (s *Server) adminEmitEvent(w http.ResponseWriter, r *http.Request) {
	f, e := readAdminObject(w, r, "type", "data", "account")
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	raw, ok := f["type"]
	if !ok {
		httpapi.WriteError(w, httpapi.BadRequest("type", "type is required"))
		return
	}
	typ, e := httpapi.DecodeString("type", raw)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	var account string
	if raw, ok := f["account"]; ok {
		if account, e = httpapi.DecodeString("account", raw); e != nil {
			httpapi.WriteError(w, e)
			return
		}
	}
	data, ok := f["data"]
	if !ok {
		httpapi.WriteError(w, httpapi.BadRequest("data", "data is required (a JSON object)"))
		return
	}
	if err := validEventType(typ); err != nil {
		httpapi.WriteError(w, httpapi.BadRequest("type", err.Error()))
		return
	}
	ev, err := s.EmitEvent(r.Context(), account, contextsvc.EventType(typ), data)
	switch {
	case errors.Is(err, ErrUnknownAccount):
		httpapi.WriteError(w, httpapi.BadRequest("account", fmt.Sprintf("no key belongs to account %q", account)))
		return
	case err != nil:
		httpapi.WriteError(w, httpapi.BadRequest("data", err.Error()))
		return
	}
	httpapi.WriteValue(w, http.StatusCreated, ev)
}

// adminListDeliveries pages through the kept deliveries in creation order,
// like the /v1 lists (limit, cursor), optionally filtered.
func (s *Server) adminListDeliveries(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var f DeliveryFilter
	var state string
	var e *httpapi.Error
	for _, p := range []struct {
		name string
		v    *string
	}{{"eventId", &f.EventID}, {"webhookId", &f.WebhookID}, {"state", &state}} {
		if *p.v, e = filterParam(q, p.name); e != nil {
			httpapi.WriteError(w, e)
			return
		}
	}
	f.State = DeliveryState(state)
	switch f.State {
	case "", DeliveryPending, DeliverySucceeded, DeliveryFailed:
	default:
		httpapi.WriteError(w, httpapi.BadRequest("state", fmt.Sprintf("state must be pending, succeeded or failed, got %q", f.State)))
		return
	}
	if f.Account, e = accountFilter(q); e != nil {
		httpapi.WriteError(w, e)
		return
	}
	if f.EventType, e = typeFilter(q); e != nil {
		httpapi.WriteError(w, e)
		return
	}
	scope := httpapi.ListScope(f.EventID, f.WebhookID, state, f.Account, string(f.EventType))
	limit, start, scope, e := s.cursors.ListParams(q, httpapi.CursorDeliveries, scope)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	items, next := s.deliveries.Page(start, limit, f.engine())
	httpapi.WritePage(w, s.cursors, httpapi.CursorDeliveries, scope, items, next)
}

func (s *Server) adminGetDelivery(w http.ResponseWriter, r *http.Request) {
	d, ok := s.Delivery(r.PathValue("id"))
	if !ok {
		httpapi.WriteError(w, httpapi.NotFound("no delivery with id "+r.PathValue("id")))
		return
	}
	httpapi.WriteValue(w, http.StatusOK, d)
}

func (s *Server) adminRedeliver(w http.ResponseWriter, r *http.Request) {
	d, err := s.Redeliver(r.PathValue("id"))
	switch {
	case errors.Is(err, ErrDeliveryNotFound):
		httpapi.WriteError(w, httpapi.NotFound("no delivery with id "+r.PathValue("id")))
	case errors.Is(err, ErrDeliveryInFlight):
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusConflict, Type: httpapi.TypeConflict,
			Message: "an attempt of this delivery is running; redeliver it once it has finished"})
	case errors.Is(err, ErrWebhookInactive):
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusConflict, Type: httpapi.TypeConflict,
			Message: strings.TrimPrefix(err.Error(), "mockserver: ") +
				" (an inactive webhook takes deliveries again once reactivated: PATCH /_mock/webhooks/{id} {\"active\":true})"})
	case errors.Is(err, ErrDeliveriesClosed):
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusServiceUnavailable, Type: httpapi.TypeUnavailable,
			Message: "the mock server is shutting down and makes no new delivery attempts"})
	case err != nil:
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusInternalServerError, Type: httpapi.TypeInternal, Message: err.Error()})
	default:
		httpapi.WriteValue(w, http.StatusOK, d)
	}
}

// adminListWebhooks pages through the webhooks in registration order, like
// the /v1 lists (limit, cursor), optionally of one account.
func (s *Server) adminListWebhooks(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	account, e := accountFilter(q)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	scope := httpapi.ListScope(account)
	limit, after, e := s.cursors.PageParams(q, httpapi.CursorWebhooks, scope)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	hooks, next := s.store.WebhookPage(after, limit, account)
	items := make([]store.Info, len(hooks))
	for i, h := range hooks {
		items[i] = h.Info()
	}
	httpapi.WritePage(w, s.cursors, httpapi.CursorWebhooks, scope, items, next)
}

func (s *Server) adminGetWebhook(w http.ResponseWriter, r *http.Request) {
	wh, ok := s.Webhook(r.PathValue("id"))
	if !ok {
		httpapi.WriteError(w, webhookNotFound(r.PathValue("id")))
		return
	}
	httpapi.WriteValue(w, http.StatusOK, wh)
}

// adminUpdateWebhook applies PATCH {url, events, active, secret}: the body
// is checked whole (as registration checks it) before the id is looked up.
func (s *Server) adminUpdateWebhook(w http.ResponseWriter, r *http.Request) {
	f, e := readAdminObject(w, r, "url", "events", "active", "secret")
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	if len(f) == 0 {
		httpapi.WriteError(w, httpapi.BadRequest("", "the body must carry at least one of url, events, active, secret"))
		return
	}
	var u WebhookUpdate
	if raw, ok := f["url"]; ok {
		v, e := s.decodeWebhookURL(raw)
		if e != nil {
			httpapi.WriteError(w, e)
			return
		}
		u.URL = &v
	}
	if raw, ok := f["events"]; ok {
		if u.Events, e = decodeWebhookEvents(raw); e != nil {
			httpapi.WriteError(w, e)
			return
		}
	}
	if raw, ok := f["active"]; ok {
		var v bool
		if s := string(raw); s != "true" && s != "false" {
			httpapi.WriteError(w, httpapi.BadRequest("active", "active must be true or false"))
			return
		}
		_ = json.Unmarshal(raw, &v)
		u.Active = &v
	}
	if raw, ok := f["secret"]; ok {
		v, e := decodeWebhookSecret(raw)
		if e != nil {
			httpapi.WriteError(w, e)
			return
		}
		u.Secret = &v
	}
	wh, e := s.updateWebhook(r.PathValue("id"), u)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	httpapi.WriteValue(w, http.StatusOK, wh)
}

// webhookDeleted is the answer to DELETE /_mock/webhooks/{id}, in the
// shape of the /v1 context deletion.
type webhookDeleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

func (s *Server) adminDeleteWebhook(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if e := s.deleteWebhook(id); e != nil {
		httpapi.WriteError(w, e)
		return
	}
	httpapi.WriteValue(w, http.StatusOK, webhookDeleted{ID: id, Deleted: true})
}

func (s *Server) adminPublish(w http.ResponseWriter, r *http.Request) {
	ev, err := s.Publish(r.Context(), r.PathValue("id"))
	if err != nil {
		httpapi.WriteError(w, httpapi.NotFound("no context with id "+r.PathValue("id")))
		return
	}
	httpapi.WriteValue(w, http.StatusCreated, ev)
}

// clockJSON is the admin API's view of the server's clock, with when the
// next delivery attempt is due.
type clockJSON struct {
	Now       string `json:"now"`
	Fake      bool   `json:"fake"`
	NextDueAt string `json:"nextDueAt,omitempty"`
}

// advancer is a clock the admin API can move: a *FakeClock, or a test's
// own clock with the same method.
type advancer interface{ Advance(time.Duration) }

func (s *Server) clockState() clockJSON {
	_, fake := s.clock.(advancer)
	c := clockJSON{Now: jsonwire.FormatTime(s.clock.Now()), Fake: fake}
	if at, ok := s.NextAttemptAt(); ok {
		c.NextDueAt = jsonwire.FormatTime(at)
	}
	return c
}

func (s *Server) adminGetClock(w http.ResponseWriter, r *http.Request) {
	httpapi.WriteValue(w, http.StatusOK, s.clockState())
}

// maxAdvanceSeconds bounds the seconds of an advance to 100 years, well
// within time.Duration (about 292 years).
const maxAdvanceSeconds = 100 * 365 * 24 * 3600

// durationPattern is the grammar of an advance's duration, the same text as
// the document's pattern (TestDocumentPatternsAreTheServers): 0, or Go
// duration units in the order h, m, s, ms, us (or µs, μs), ns, each at most once and
// with a bounded number of digits, so that every duration it admits is
// one time.ParseDuration reads without overflow (at most about 260 years)
// and none is negative.
const durationPattern = `^(?:0|(?:[0-9]{1,6}(?:\.[0-9]{0,9})?h)?(?:[0-9]{1,7}(?:\.[0-9]{0,9})?m)?` +
	`(?:[0-9]{1,9}(?:\.[0-9]{0,9})?s)?(?:[0-9]{1,12}(?:\.[0-9]{0,9})?ms)?` +
	`(?:[0-9]{1,15}(?:\.[0-9]{0,9})?(?:us|µs|μs))?(?:[0-9]{1,18}ns)?)$`

var durationRegexp = regexp.MustCompile(durationPattern)

func (s *Server) adminAdvanceClock(w http.ResponseWriter, r *http.Request) {
	f, e := readAdminObject(w, r, "duration", "seconds", "toNextDue")
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	var d time.Duration
	rawD, hasD := f["duration"]
	rawS, hasS := f["seconds"]
	rawN, hasN := f["toNextDue"]
	given := 0
	for _, has := range []bool{hasD, hasS, hasN} {
		if has {
			given++
		}
	}
	switch {
	case given != 1:
		httpapi.WriteError(w, httpapi.BadRequest("", `give exactly one of "duration" (a Go duration such as "90s" or "1h30m"), "seconds" (a number) and "toNextDue" (true)`))
		return
	case hasN:
		if string(rawN) != "true" {
			httpapi.WriteError(w, httpapi.BadRequest("toNextDue", "toNextDue must be true"))
			return
		}
	case hasD:
		str, e := httpapi.DecodeString("duration", rawD)
		if e != nil {
			httpapi.WriteError(w, e)
			return
		}
		if strings.HasPrefix(str, "-") {
			httpapi.WriteError(w, httpapi.BadRequest("duration", fmt.Sprintf("duration %q must be positive: the clock only moves forward", str)))
			return
		}
		var err error
		if !durationRegexp.MatchString(str) {
			err = errors.New("no match")
		} else {
			d, err = time.ParseDuration(str)
		}
		if err != nil || str == "" {
			httpapi.WriteError(w, httpapi.BadRequest("duration", fmt.Sprintf("duration %q is not a duration such as \"90s\" or \"1h30m\": "+
				"units in the order h, m, s, ms, us, ns, each at most once, with at most 6, 7, 9, 12, 15 and 18 digits", str)))
			return
		}
	default:
		var secs float64
		if err := json.Unmarshal(rawS, &secs); err != nil || math.IsNaN(secs) {
			httpapi.WriteError(w, httpapi.BadRequest("seconds", "seconds must be a number"))
			return
		}
		if secs < 0 {
			httpapi.WriteError(w, httpapi.BadRequest("seconds", "the clock only moves forward: give zero seconds or more"))
			return
		}
		if secs > maxAdvanceSeconds {
			httpapi.WriteError(w, httpapi.BadRequest("seconds", fmt.Sprintf("seconds must be at most %d (100 years)", maxAdvanceSeconds)))
			return
		}
		d = time.Duration(secs * float64(time.Second))
	}
	res, e, err := s.advanceClock(r.Context(), d, hasN)
	switch {
	case e != nil:
		httpapi.WriteError(w, e)
	case err != nil:
		// The client went away: the advance stopped at a due time, and
		// there is no one to answer.
		s.logger.Info("clock advance stopped: its request ended", "now", jsonwire.FormatTime(s.clock.Now()), "attempts", res.Attempts)
	default:
		httpapi.WriteValue(w, http.StatusOK, res)
	}
}

// clockAdvanceJSON is the answer of an advance: the clock after it, and
// how many delivery attempts ran while it advanced.
type clockAdvanceJSON struct {
	clockJSON
	Attempts int `json:"attempts"`
}

// advanceClock moves the server's clock forward by d, or with toNextDue to
// the next waiting attempt's due time, running everything due on the way
// (FakeClock.AdvanceContext), and says how many attempts ran. On a
// FakeClock the next due time is read once the advance's turn has come
// and what was due already has run, and the attempts are counted within
// the turn, so a concurrent advance counts its own. A real clock is a 409, and so is toNextDue with nothing
// waiting; when ctx ends the advance stops at a due time and ctx's error
// is returned.
func (s *Server) advanceClock(ctx context.Context, d time.Duration, toNextDue bool) (clockAdvanceJSON, *httpapi.Error, error) {
	adv, ok := s.clock.(advancer)
	if !ok {
		return clockAdvanceJSON{}, &httpapi.Error{Status: http.StatusConflict, Type: httpapi.TypeConflict,
			Message: "the server runs on the real clock, which cannot be advanced; start it with a fake clock (the command's -fake-clock, or mockserver.WithClock(mockserver.NewFakeClock(t)))"}, nil
	}
	fc, _ := s.clock.(*FakeClock)
	if fc != nil {
		if err := fc.takeTurn(ctx); err != nil {
			return clockAdvanceJSON{}, nil, err
		}
		defer fc.giveTurn()
	}
	before := s.deliveries.AttemptsStarted()
	if fc != nil {
		// What is due now runs first: the next due time is the one after.
		fc.fireDue()
	}
	if toNextDue {
		at, waiting := s.NextAttemptAt()
		if !waiting {
			return clockAdvanceJSON{}, &httpapi.Error{Status: http.StatusConflict, Type: httpapi.TypeConflict,
				Message: "no delivery attempt is waiting, so there is no next due time to advance to"}, nil
		}
		d = max(at.Sub(s.clock.Now()), 0)
	}
	var err error
	if fc != nil {
		err = fc.runTo(ctx, fc.Now().Add(d))
	} else {
		adv.Advance(d)
	}
	if _, watched := s.clock.(watchedClock); !watched {
		// A FakeClock tells the dashboards itself, at each time it reaches.
		s.changes.Publish(changes.Change{Kind: changes.KindClock, Now: jsonwire.FormatTime(s.clock.Now())})
	}
	return clockAdvanceJSON{clockJSON: s.clockState(), Attempts: int(s.deliveries.AttemptsStarted() - before)}, nil, err
}

func (s *Server) adminReset(w http.ResponseWriter, r *http.Request) {
	s.Reset()
	w.WriteHeader(http.StatusNoContent)
}

// faultJSON is a Fault on the wire; latency in milliseconds, retryAfter
// in seconds.
type faultJSON struct {
	Method     string `json:"method,omitempty"`
	Path       string `json:"path,omitempty"`
	Status     int    `json:"status,omitempty"`
	RetryAfter int    `json:"retryAfter,omitempty"`
	LatencyMs  int64  `json:"latencyMs,omitempty"`
	Times      int    `json:"times"`
	Mode       string `json:"mode,omitempty"`
}

// MarshalJSON is the default encoding; it lets writePage encode faults.
func (f faultJSON) MarshalJSON() ([]byte, error) {
	type plain faultJSON
	return json.Marshal(plain(f))
}

func toFaultJSON(f faults.Fault) faultJSON {
	return faultJSON{Method: f.Method, Path: f.Path, Status: f.Status, RetryAfter: int(f.RetryAfter / time.Second),
		LatencyMs: f.Latency.Milliseconds(), Times: f.Times, Mode: string(f.Mode)}
}

// adminListFaults pages through the active faults, oldest first, like the
// /v1 lists (limit, cursor).
func (s *Server) adminListFaults(w http.ResponseWriter, r *http.Request) {
	limit, after, e := s.cursors.PageParams(r.URL.Query(), httpapi.CursorFaults, "")
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	fs, next := s.faults.Page(after, limit)
	items := make([]faultJSON, len(fs))
	for i, f := range fs {
		items[i] = toFaultJSON(f)
	}
	httpapi.WritePage(w, s.cursors, httpapi.CursorFaults, "", items, next)
}

func (s *Server) adminAddFault(w http.ResponseWriter, r *http.Request) {
	f, e := readAdminObject(w, r, "method", "path", "status", "retryAfter", "latencyMs", "times", "mode")
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	var ft Fault
	for _, name := range []string{"method", "path", "mode"} {
		raw, ok := f[name]
		if !ok {
			continue
		}
		v, e := httpapi.DecodeString(name, raw)
		if e != nil {
			httpapi.WriteError(w, e)
			return
		}
		switch name {
		case "method":
			ft.Method = v
		case "path":
			ft.Path = v
		default:
			ft.Mode = FaultMode(v)
		}
	}
	var latencyMs, retryAfter int
	for _, p := range []struct {
		name     string
		v        *int
		min, max int
	}{
		// A status given is one to answer: 0 would mean none, so it is
		// refused rather than ignored.
		{"status", &ft.Status, 400, 599},
		{"retryAfter", &retryAfter, 0, math.MaxInt32},
		{"latencyMs", &latencyMs, 0, int(faults.MaxLatency.Milliseconds())},
		{"times", &ft.Times, 0, math.MaxInt32},
	} {
		raw, ok := f[p.name]
		if !ok {
			continue
		}
		n, e := httpapi.DecodeInteger(p.name, raw, p.min, p.max)
		if e != nil {
			httpapi.WriteError(w, e)
			return
		}
		*p.v = n
	}
	ft.Latency = time.Duration(latencyMs) * time.Millisecond
	ft.RetryAfter = time.Duration(retryAfter) * time.Second
	if err := s.AddFault(ft); errors.Is(err, ErrTooManyFaults) {
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusConflict, Type: httpapi.TypeConflict, Message: err.Error()})
		return
	} else if err != nil {
		param, _ := ft.engine().Validate()
		httpapi.WriteError(w, httpapi.BadRequest(param, err.Error()))
		return
	}
	httpapi.WriteValue(w, http.StatusCreated, toFaultJSON(ft.engine().Normalized()))
}

func (s *Server) adminClearFaults(w http.ResponseWriter, r *http.Request) {
	s.ClearFaults()
	w.WriteHeader(http.StatusNoContent)
}

// maxStateBody bounds the body of PUT /_mock/state: a state document holds
// many contexts of up to 1,000,000 bytes each, so the API's 2 MiB would
// not do. A larger state goes through a state file (-state-file), which
// has no limit.
const maxStateBody = 256 << 20

// adminGetState sends the state document (SaveState), written as it is
// made.
func (s *Server) adminGetState(w http.ResponseWriter, r *http.Request) {
	w.Header()["Content-Type"] = []string{"application/json"}
	w.WriteHeader(http.StatusOK)
	// A write error means the client went away; there is no one to tell.
	_ = s.SaveState(w)
}

// adminPutState replaces the state with the document in the body
// (LoadState): a document that breaks a rule is a 400 whose param is the
// top-level field it is in and whose message says where, and changes
// nothing.
func (s *Server) adminPutState(w http.ResponseWriter, r *http.Request) {
	tooBig := &httpapi.Error{Status: http.StatusRequestEntityTooLarge, Type: httpapi.TypePayloadTooLarge,
		Message: "a state document may be at most 256 MiB here; load a larger one with a state file (-state-file)"}
	if r.ContentLength > maxStateBody {
		httpapi.WriteError(w, tooBig)
		return
	}
	err := s.LoadState(http.MaxBytesReader(w, r.Body, maxStateBody))
	var se *StateError
	var mbe *http.MaxBytesError
	var ne net.Error
	switch {
	case err == nil:
		w.WriteHeader(http.StatusNoContent)
	case errors.As(err, &se):
		msg := se.Message
		if se.Path != "" {
			msg = se.Path + ": " + msg
		}
		httpapi.WriteError(w, httpapi.BadRequest(se.field(), msg))
	case errors.As(err, &mbe):
		httpapi.WriteError(w, tooBig)
	case errors.As(err, &ne) && ne.Timeout():
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusBadRequest, Type: httpapi.TypeInvalidRequest, CloseConn: true,
			Message: "the request body did not arrive in time (the server's read-body time-out)"})
	default:
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusBadRequest, Type: httpapi.TypeInvalidRequest, CloseConn: true,
			Message: "could not read the request body"})
	}
}
