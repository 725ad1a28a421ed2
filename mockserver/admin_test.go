package mockserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/adminapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery/deliverytest"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
)

// admin sends an admin request (no key) through the validator.
func admin(t *testing.T, ts *TestServer, method, path, body string) *response {
	t.Helper()
	return do(t, ts, call{method: method, path: path, body: body, key: "-"})
}

func TestAdminEvents(t *testing.T) {
	t.Parallel()
	ts, clock := newFakeTestServer(t)
	rc := deliverytest.NewReceiver(t, clock, "team-secret", func(w http.ResponseWriter, r *http.Request, h deliverytest.Hit) {})
	hook := registerHook(t, ts, rc.URL, "team-secret", contextsvc.EventTeamMemberAdded)
	c := create(t, ts, `{"name":"Doc"}`)

	r := admin(t, ts, "POST", "/_mock/events", `{"type":"team.member.added","data":{"teamId":"team_aaaaaaaaaaaaaaaaaaaa","userId":"user_bbbbbbbbbbbbbbbbbbbb","role":"editor"}}`)
	if r.Status != http.StatusCreated {
		t.Fatalf("emit: %d %s", r.Status, r.Body)
	}
	var ev Event
	r.json(t, &ev)
	var data contextsvc.TeamMemberAddedData
	if err := json.Unmarshal(ev.Data, &data); err != nil || ev.Type != contextsvc.EventTeamMemberAdded || ev.Account != ts.DefaultKey().Account ||
		data.Role != "editor" || !ev.Timestamp.Equal(dlvT0) {
		t.Errorf("emitted %s", r.Body)
	}
	idle(t, ts)
	hits := rc.Got()
	if len(hits) != 1 || !strings.Contains(string(hits[0].Body), ev.ID) {
		t.Fatalf("receiver got %d requests", len(hits))
	}
	if dls := ts.Deliveries(DeliveryFilter{WebhookID: hook, EventID: ev.ID}); len(dls) != 1 || dls[0].State != DeliverySucceeded {
		t.Errorf("deliveries %+v", dls)
	}

	r = admin(t, ts, "POST", "/_mock/contexts/"+c.ID+"/publish", "")
	if r.Status != http.StatusCreated || !strings.Contains(string(r.Body), `"type":"context.published"`) {
		t.Errorf("publish: %d %s", r.Status, r.Body)
	}
	if r := admin(t, ts, "POST", "/_mock/contexts/ctx_missing/publish", ""); r.Status != 404 {
		t.Errorf("publish missing: %d", r.Status)
	}

	var list struct{ Data []json.RawMessage }
	admin(t, ts, "GET", "/_mock/events", "").json(t, &list)
	if len(list.Data) != 4 { // created, version.created, team.member.added, published
		t.Errorf("%d events", len(list.Data))
	}
	admin(t, ts, "GET", "/_mock/events?type=context.published", "").json(t, &list)
	if len(list.Data) != 1 {
		t.Errorf("%d published events", len(list.Data))
	}
	admin(t, ts, "GET", "/_mock/events?type=nothing.like.this", "").json(t, &list)
	if list.Data == nil || len(list.Data) != 0 {
		t.Errorf("filtered list %v", list.Data)
	}
	checkEvents(t, ts.Server)

	for _, tc := range []struct {
		name, body, param string
		status            int
	}{
		{"no type", `{"data":{}}`, "type", 400},
		{"no data", `{"type":"x.y"}`, "data", 400},
		{"data not object", `{"type":"x.y","data":[1]}`, "data", 400},
		{"data string", `{"type":"x.y","data":"{}"}`, "data", 400},
		{"type not string", `{"type":7,"data":{}}`, "type", 400},
		{"type with space", `{"type":"a b","data":{}}`, "type", 400},
		{"empty type", `{"type":"","data":{}}`, "type", 400},
		{"unknown account", `{"type":"x.y","data":{},"account":"acct_nobody"}`, "account", 400},
		{"unknown field", `{"type":"x.y","data":{},"dta":{}}`, "dta", 400},
		{"null data", `{"type":"x.y","data":null}`, "data", 400},
		{"invalid UTF-8 in data", "{\"type\":\"x.y\",\"data\":{\"s\":\"\xff\"}}", "data", 400},
		{"lone surrogate in data", `{"type":"x.y","data":{"s":["\udc00"]}}`, "data", 400},
		{"not json", `{"type":`, "", 400},
	} {
		r := do(t, ts, call{method: "POST", path: "/_mock/events", body: tc.body, key: "-"})
		if typ, param := r.errorOf(t); r.Status != tc.status || typ != "invalid_request" || param != tc.param {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Body)
		}
	}
	// An unknown type is recorded (no webhook can subscribe to it).
	if r := admin(t, ts, "POST", "/_mock/events", `{"type":"context.archived","data":{"contextId":"x"},"account":"`+ts.DefaultKey().Account+`"}`); r.Status != 201 {
		t.Errorf("unknown type: %d %s", r.Status, r.Body)
	}
	big := `{"type":"x.y","data":{"s":"` + strings.Repeat("a", httpapi.MaxBody) + `"}}`
	if r := do(t, ts, call{method: "POST", path: "/_mock/events", body: big, key: "-"}); r.Status != 413 {
		t.Errorf("big body: %d", r.Status)
	}
}

func TestAdminDeliveries(t *testing.T) {
	t.Parallel()
	ts, clock := newFakeTestServer(t)
	rc := deliverytest.NewReceiver(t, clock, "k", failing(1))
	hook := registerHook(t, ts, rc.URL, "k", contextsvc.EventContextCreated)
	create(t, ts, `{"name":"Doc"}`)
	idle(t, ts)

	var list struct{ Data []Delivery }
	admin(t, ts, "GET", "/_mock/deliveries", "").json(t, &list)
	if len(list.Data) != 1 {
		t.Fatalf("%d deliveries", len(list.Data))
	}
	dl := list.Data[0]
	if dl.State != DeliveryPending || dl.WebhookID != hook || !dl.NextAttemptAt.Equal(dlvT0.Add(time.Minute)) || len(dl.Attempts) != 1 {
		t.Fatalf("delivery %+v", dl)
	}
	// What the wire says is what the Go API says.
	if diff := cmp.Diff(ts.Deliveries(DeliveryFilter{}), list.Data); diff != "" {
		t.Errorf("admin list vs Go (-go +admin):\n%s", diff)
	}
	for _, tc := range []struct {
		query string
		n     int
	}{
		{"?state=pending", 1}, {"?state=failed", 0}, {"?webhookId=" + hook, 1}, {"?webhookId=wh_other", 0},
		{"?eventId=" + dl.EventID, 1}, {"?eventId=evt_other&state=pending", 0},
	} {
		admin(t, ts, "GET", "/_mock/deliveries"+tc.query, "").json(t, &list)
		if len(list.Data) != tc.n || list.Data == nil {
			t.Errorf("%s: %d deliveries", tc.query, len(list.Data))
		}
	}
	r := do(t, ts, call{method: "GET", path: "/_mock/deliveries?state=done", key: "-"})
	if typ, param := r.errorOf(t); r.Status != 400 || typ != "invalid_request" || param != "state" {
		t.Errorf("bad state: %d %s", r.Status, r.Body)
	}
	var one Delivery
	admin(t, ts, "GET", "/_mock/deliveries/"+dl.ID, "").json(t, &one)
	if diff := cmp.Diff(dl, one); diff != "" {
		t.Errorf("get (-list +get):\n%s", diff)
	}
	if r := admin(t, ts, "GET", "/_mock/deliveries/dlv_missing", ""); r.Status != 404 {
		t.Errorf("missing: %d", r.Status)
	}
	if r := admin(t, ts, "POST", "/_mock/deliveries/dlv_missing/redeliver", ""); r.Status != 404 {
		t.Errorf("redeliver missing: %d", r.Status)
	}
	// A pending retry redelivered by hand runs now, not in a minute.
	if r := admin(t, ts, "POST", "/_mock/deliveries/"+dl.ID+"/redeliver", ""); r.Status != 200 {
		t.Fatalf("redeliver: %d %s", r.Status, r.Body)
	}
	idle(t, ts)
	if got, _ := ts.Delivery(dl.ID); got.State != DeliverySucceeded || len(got.Attempts) != 2 {
		t.Errorf("after redeliver %+v", got)
	}
	// After Close there are no new attempts: 503.
	if err := ts.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := ts.Redeliver(dl.ID); err == nil {
		t.Error("Redeliver after Close succeeded")
	}
	r = admin(t, ts, "POST", "/_mock/deliveries/"+dl.ID+"/redeliver", "")
	if typ, _ := r.errorOf(t); r.Status != 503 || typ != "unavailable" {
		t.Errorf("redeliver after close: %d %s", r.Status, r.Body)
	}
}

func TestAdminRedeliverInFlight(t *testing.T) {
	t.Parallel()
	ts, clock := newFakeTestServer(t)
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	rc := deliverytest.NewReceiver(t, clock, "k", func(w http.ResponseWriter, r *http.Request, h deliverytest.Hit) {
		started <- struct{}{}
		<-release
	})
	registerHook(t, ts, rc.URL, "k", contextsvc.EventContextCreated)
	create(t, ts, `{"name":"Doc"}`)
	<-started
	dl := ts.Deliveries(DeliveryFilter{})[0]
	r := admin(t, ts, "POST", "/_mock/deliveries/"+dl.ID+"/redeliver", "")
	if typ, _ := r.errorOf(t); r.Status != 409 || typ != "conflict" {
		t.Errorf("redeliver in flight: %d %s", r.Status, r.Body)
	}
	close(release)
	idle(t, ts)
}

func TestAdminClock(t *testing.T) {
	t.Parallel()
	ts, clock := newFakeTestServer(t)
	var c clockJSON
	admin(t, ts, "GET", "/_mock/clock", "").json(t, &c)
	if c != (clockJSON{Now: "2026-11-21T12:00:00.000Z", Fake: true}) {
		t.Errorf("clock %+v", c)
	}
	admin(t, ts, "POST", "/_mock/clock/advance", `{"duration":"90s"}`).json(t, &c)
	if c.Now != "2026-11-21T12:01:30.000Z" || !clock.Now().Equal(dlvT0.Add(90*time.Second)) {
		t.Errorf("after 90s: %+v", c)
	}
	admin(t, ts, "POST", "/_mock/clock/advance", `{"seconds":0.5}`).json(t, &c)
	if c.Now != "2026-11-21T12:01:30.500Z" {
		t.Errorf("after 0.5 s: %+v", c)
	}
	for _, tc := range []struct{ name, body, param string }{
		{"both", `{"duration":"1s","seconds":1}`, ""},
		{"neither", `{}`, ""},
		{"bad duration", `{"duration":"soon"}`, "duration"},
		{"negative duration", `{"duration":"-1m"}`, "duration"},
		{"negative hours", `{"duration":"-1h"}`, "duration"},
		{"negative seconds", `{"seconds":-3}`, "seconds"},
		{"seconds string", `{"seconds":"3"}`, "seconds"},
		{"huge seconds", `{"seconds":1e300}`, "seconds"},
		{"duration number", `{"duration":5}`, "duration"},
		{"unknown field", `{"minutes":5}`, "minutes"},
		{"seconds given twice", `{"seconds":1,"seconds":2}`, "seconds"},
		{"empty duration", `{"duration":""}`, "duration"},
		{"a unit twice", `{"duration":"1h1h"}`, "duration"},
		{"units out of order", `{"duration":"5s1m"}`, "duration"},
		{"seven digits of hours", `{"duration":"1000000h"}`, "duration"},
		{"duration with a newline", `{"duration":"1m\n"}`, "duration"},
		{"seconds past 100 years", `{"seconds":3153600001}`, "seconds"},
	} {
		r := do(t, ts, call{method: "POST", path: "/_mock/clock/advance", body: tc.body, key: "-"})
		if typ, param := r.errorOf(t); r.Status != 400 || typ != "invalid_request" || param != tc.param {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Body)
		}
		// A negative duration is told so, not that it is malformed.
		if negative := strings.Contains(tc.body, `"-`); negative != strings.Contains(string(r.Body), "must be positive") ||
			negative && strings.Contains(string(r.Body), "is not a duration") {
			t.Errorf("%s: %s", tc.name, r.Body)
		}
	}
	if !clock.Now().Equal(dlvT0.Add(90*time.Second + 500*time.Millisecond)) {
		t.Errorf("a refused advance moved the clock to %s", clock.Now())
	}

	// The largest advances the document allows are accepted.
	far, farClock := newFakeTestServer(t)
	for _, body := range []string{
		`{"duration":"0"}`, `{"duration":"1.5h"}`, `{"duration":"2h45m30.5s"}`, `{"duration":"7µs"}`, `{"duration":"7μs"}`, `{"duration":"7us999ns"}`,
		`{"duration":"999999.999999999h9999999.999999999m999999999.999999999s999999999999.999999999ms999999999999999.999999999us999999999999999999ns"}`,
		`{"seconds":3153600000}`, `{"seconds":1e2}`, `{"seconds":0}`,
	} {
		if r := admin(t, far, "POST", "/_mock/clock/advance", body); r.Status != 200 {
			t.Errorf("%s: %d %s", body, r.Status, r.Body)
		}
	}
	if year := farClock.Now().Year(); year < dlvT0.Year()+350 {
		t.Errorf("the clock moved to %d", year)
	}

	// Advancing through the admin API runs the due retries.
	rc := deliverytest.NewReceiver(t, clock, "k", failing(1))
	registerHook(t, ts, rc.URL, "k", contextsvc.EventContextCreated)
	create(t, ts, `{"name":"Doc"}`)
	idle(t, ts)
	admin(t, ts, "POST", "/_mock/clock/advance", `{"duration":"1m"}`)
	idle(t, ts)
	if n := len(rc.Got()); n != 2 {
		t.Errorf("%d attempts after advancing a minute", n)
	}

	real := NewTestServer(t)
	admin(t, real, "GET", "/_mock/clock", "").json(t, &c)
	if c.Fake {
		t.Error("real clock reported fake")
	}
	r := admin(t, real, "POST", "/_mock/clock/advance", `{"duration":"1m"}`)
	if typ, _ := r.errorOf(t); r.Status != 409 || typ != "conflict" || !strings.Contains(string(r.Body), "fake clock") {
		t.Errorf("advance real clock: %d %s", r.Status, r.Body)
	}
}

func TestAdminReset(t *testing.T) {
	t.Parallel()
	clock := NewFakeClock(dlvT0)
	free := Key{Token: "sk_free", Plan: PlanFree}
	ts := NewTestServer(t, WithClock(clock), WithKey(Key{Token: "sk_main", Plan: PlanBusiness}), WithKey(free))
	rc := deliverytest.NewReceiver(t, clock, "k", failing(100))
	registerHook(t, ts, rc.URL, "k", contextsvc.EventContextCreated)
	create(t, ts, `{"name":"Doc"}`)
	idle(t, ts)
	if err := ts.AddFault(Fault{Path: "/v1/nothing", Status: 500}); err != nil {
		t.Fatal(err)
	}
	for range 10 { // the free plan's burst
		do(t, ts, call{method: "GET", path: "/v1/contexts", key: free.Token})
	}
	if r := do(t, ts, call{method: "GET", path: "/v1/contexts", key: free.Token}); r.Status != 429 {
		t.Fatalf("free key not limited: %d", r.Status)
	}

	if r := admin(t, ts, "POST", "/_mock/reset", ""); r.Status != 204 || len(r.Body) != 0 {
		t.Fatalf("reset: %d %s", r.Status, r.Body)
	}
	var page struct{ Data []any }
	do(t, ts, call{method: "GET", path: "/v1/contexts"}).json(t, &page)
	if len(page.Data) != 0 {
		t.Errorf("%d contexts after reset", len(page.Data))
	}
	if snap := ts.Snapshot(); len(snap.Contexts)+len(snap.Webhooks) != 0 {
		t.Errorf("snapshot after reset %+v", snap)
	}
	if len(ts.Events()) != 0 || len(ts.Deliveries(DeliveryFilter{})) != 0 || len(ts.Faults()) != 0 {
		t.Errorf("after reset: %d events, %d deliveries, %d faults", len(ts.Events()), len(ts.Deliveries(DeliveryFilter{})), len(ts.Faults()))
	}
	if r := do(t, ts, call{method: "GET", path: "/v1/contexts", key: free.Token}); r.Status != 200 || r.Header.Get("X-RateLimit-Remaining") != "9" {
		t.Errorf("free key after reset: %d remaining %s", r.Status, r.Header.Get("X-RateLimit-Remaining"))
	}
	// The waiting retry is gone: advancing sends nothing.
	before := len(rc.Got())
	clock.Advance(48 * time.Hour)
	idle(t, ts)
	if len(rc.Got()) != before {
		t.Errorf("a retry ran after reset")
	}
	// The server works as before.
	create(t, ts, `{"name":"Again"}`)
	if len(ts.Events()) != 2 {
		t.Errorf("%d events after a create", len(ts.Events()))
	}
}

func TestAdminOffAndMethods(t *testing.T) {
	t.Parallel()
	off := NewTestServer(t, WithAdmin(false))
	for _, p := range []string{"/_mock/events", "/_mock/deliveries", "/_mock/clock", "/_mock/faults"} {
		if r := admin(t, off, "GET", p, ""); r.Status != 404 {
			t.Errorf("admin off %s: %d", p, r.Status)
		}
	}
	for _, p := range []string{"/_mock/reset", "/_mock/clock/advance", "/_mock/events"} {
		if r := admin(t, off, "POST", p, "{}"); r.Status != 404 {
			t.Errorf("admin off POST %s: %d", p, r.Status)
		}
	}
	ts := NewTestServer(t)
	for _, tc := range []struct{ method, path, allow string }{
		{"DELETE", "/_mock/events", "GET, POST"},
		{"GET", "/_mock/reset", "POST"},
		{"PUT", "/_mock/faults", "GET, POST, DELETE"},
		{"GET", "/_mock/deliveries/dlv_x/redeliver", "POST"},
		{"POST", "/_mock/clock", "GET"},
	} {
		if r := admin(t, ts, tc.method, tc.path, ""); r.Status != 405 || r.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d Allow %q", tc.method, tc.path, r.Status, r.Header.Get("Allow"))
		}
	}
}

func TestEmitEventGo(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	ev, err := ts.EmitEvent(t.Context(), "", contextsvc.EventTeamMemberRemoved, json.RawMessage(` { "teamId" : "team_aaaaaaaaaaaaaaaaaaaa", "userId":"user_bbbbbbbbbbbbbbbbbbbb","role":"viewer" } `))
	if err != nil {
		t.Fatal(err)
	}
	if string(ev.Data) != `{"teamId":"team_aaaaaaaaaaaaaaaaaaaa","userId":"user_bbbbbbbbbbbbbbbbbbbb","role":"viewer"}` || ev.Account != ts.DefaultKey().Account {
		t.Errorf("event %s %s", ev.Account, ev.Data)
	}
	if !bytes.Contains(ev.Body, ev.Data) {
		t.Errorf("body %s lacks data %s", ev.Body, ev.Data)
	}
	checkEvents(t, ts.Server)
	for _, tc := range []struct {
		name    string
		account string
		typ     contextsvc.EventType
		data    string
		want    error
	}{
		{"empty type", "", "", `{}`, ErrInvalidEvent},
		{"control char", "", "a\nb", `{}`, ErrInvalidEvent},
		{"array", "", "x", `[]`, ErrInvalidEvent},
		{"broken", "", "x", `{"a":`, ErrInvalidEvent},
		{"empty", "", "x", ``, ErrInvalidEvent},
		{"account", "acct_nobody", "x", `{}`, ErrUnknownAccount},
	} {
		if _, err := ts.EmitEvent(t.Context(), tc.account, tc.typ, json.RawMessage(tc.data)); !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if n := len(ts.Events()); n != 1 {
		t.Errorf("%d events after refused emits", n)
	}
}

func TestEventsAreCopies(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	create(t, ts, `{"name":"Doc"}`)
	evs := ts.Events()
	body := string(evs[0].Body)
	evs[0].Body[0] = 'X'
	evs[0].Data[0] = 'X'
	if again := ts.Events(); string(again[0].Body) != body || again[0].Data[0] != '{' {
		t.Error("changing a returned event changed the log")
	}
}

func TestRequestLog(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(lockedWriter{&mu, &buf}, nil))
	ts := NewTestServer(t, WithLogger(logger), WithRequestLog(true))
	r := do(t, ts, call{method: "GET", path: "/v1/contexts?limit=5"})
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	var rec map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &rec); err != nil {
		t.Fatalf("log %q: %v", out, err)
	}
	if rec["msg"] != "request" || rec["method"] != "GET" || rec["path"] != "/v1/contexts" || rec["status"] != 200.0 ||
		rec["requestId"] != r.Header.Get("X-Request-Id") || rec["duration"] == nil {
		t.Errorf("log record %v", rec)
	}
	if strings.Contains(out, ts.APIKey) || strings.Contains(out, "Bearer") {
		t.Errorf("the key is in the log: %s", out)
	}
}

// TestAdminQueryParams: each admin route takes the query parameters the
// OpenAPI document lists for it, and refuses any other with a 400 naming
// it (a filter a list does not have, such as ?order=desc on the webhooks,
// is an error, not a list in another order than asked).
func TestAdminQueryParams(t *testing.T) {
	t.Parallel()
	doc, err := spec()
	if err != nil {
		t.Fatal(err)
	}
	ts := NewTestServer(t)
	for path, item := range doc.Paths.Map() {
		if !strings.HasPrefix(path, "/_mock/") || strings.HasPrefix(path, "/_mock/ui") {
			continue
		}
		for method, op := range item.Operations() {
			var documented []string
			for _, p := range append(item.Parameters, op.Parameters...) {
				if p.Value != nil && p.Value.In == "query" {
					documented = append(documented, p.Value.Name)
				}
			}
			took := adminapi.QueryParams(method, path)
			slices.Sort(documented)
			took = slices.Sorted(slices.Values(took))
			if !slices.Equal(took, documented) {
				t.Errorf("%s %s takes %v; the document lists %v", method, path, took, documented)
			}
			if method != http.MethodGet || strings.Contains(path, "{") || path == "/_mock/stream" {
				continue
			}
			resp, err := http.Get(ts.HTTP.URL + path + "?lmit=5")
			if err != nil {
				t.Fatal(err)
			}
			var body struct {
				Error struct{ Type, Param, Message string }
			}
			err = json.NewDecoder(resp.Body).Decode(&body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusBadRequest || body.Error.Param != "lmit" ||
				!strings.Contains(body.Error.Message, `"lmit" is not a query parameter of this route`) {
				t.Errorf("GET %s?lmit=5: %d %+v (%v), want a 400 naming lmit", path, resp.StatusCode, body.Error, err)
			}
		}
	}
	resp, err := http.Get(ts.HTTP.URL + "/_mock/webhooks?order=desc")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("GET /_mock/webhooks?order=desc: %d, want 400 (the webhooks are listed in one order)", resp.StatusCode)
	}
}
