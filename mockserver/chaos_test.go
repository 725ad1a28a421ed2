package mockserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery/deliverytest"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// chaosKey is an unlimited key: the chaos tests' 429s are chaos's alone.
var chaosKey = Key{Token: "sk_chaos", Plan: PlanUnlimited, Account: "chaos"}

// serveStatus sends one /v1 request to s without a network and returns
// its answer.
func serveStatus(s *Server, method, path, body string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptestRequest(method, path, body, s.DefaultKey().Token))
	return w
}

// TestChaosAPIErrors: under api-error, /v1 requests fail at about the
// rate, with the four statuses the contract allows and the error body of
// each type, marked in the request's log line; the same seed fails the
// same requests with the same statuses; a fault placed by hand takes its
// request first; a reset starts the ordinals over.
func TestChaosAPIErrors(t *testing.T) {
	t.Parallel()
	var logs deliverytest.LogBuffer
	run := func(opts ...Option) []int {
		s := New(append([]Option{WithKey(chaosKey), WithChaos(Chaos{Seed: 7, APIError: 0.3})}, opts...)...)
		defer s.Close(context.Background())
		statuses := make([]int, 200)
		for i := range statuses {
			w := serveStatus(s, "GET", "/v1/contexts", "")
			statuses[i] = w.Code
			if w.Code == http.StatusOK {
				continue
			}
			var e struct {
				Error struct{ Type, Message, RequestID string }
			}
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil {
				t.Fatalf("request %d: %d %s", i+1, w.Code, w.Body)
			}
			want := map[int]string{429: "rate_limited", 500: "internal", 502: "internal", 503: "unavailable"}[w.Code]
			if e.Error.Type != want || !strings.HasPrefix(e.Error.Message, fmt.Sprintf("chaos: request %d failed with %d", i+1, w.Code)) ||
				e.Error.RequestID != w.Header().Get("X-Request-Id") {
				t.Errorf("request %d: %d %s", i+1, w.Code, w.Body)
			}
			if ra := w.Header().Get("Retry-After"); (w.Code == 429) != (ra == "1") {
				t.Errorf("request %d: %d with Retry-After %q", i+1, w.Code, ra)
			}
		}
		rep := s.Chaos()
		failed := 0
		for _, st := range statuses {
			if st != 200 {
				failed++
			}
		}
		if rep.Requests != 200 || rep.APIErrors != uint64(failed) || len(rep.Decisions) != min(failed, MaxChaosDecisions) ||
			rep.Decisions[0].Action != ChaosAPIError || rep.Decisions[0].Path != "/v1/contexts" || rep.Decisions[0].Method != "GET" {
			t.Errorf("after %d failures the report says %+v", failed, rep)
		}
		return statuses
	}
	first := run(WithLogger(slog.New(slog.NewTextHandler(&logs, nil))), WithRequestLog(true))
	counts := map[int]int{}
	for _, st := range first {
		counts[st]++
	}
	if f := 200 - counts[200]; f < 40 || f > 80 || counts[429] == 0 || counts[500] == 0 || counts[502] == 0 || counts[503] == 0 {
		t.Errorf("200 requests at api-error=0.3 got %v", counts)
	}
	if again := run(); !slices.Equal(first, again) {
		t.Errorf("the same seed failed other requests:\n%v\n%v", first, again)
	}
	marked := strings.Count(logs.String(), "chaos=api-error")
	if marked != 200-counts[200] || !strings.Contains(logs.String(), `msg="chaos mode on`) {
		t.Errorf("%d request lines marked chaos=api-error, want %d:\n%s", marked, 200-counts[200], logs.String())
	}

	// A fault takes its requests first; the ordinals go on counting them.
	s := New(WithKey(chaosKey), WithChaos(Chaos{Seed: 7, APIError: 0.3}))
	defer s.Close(context.Background())
	if err := s.AddFault(Fault{Status: http.StatusNotFound, Times: 10}); err != nil {
		t.Fatal(err)
	}
	for i, want := range first {
		if i < 10 {
			want = http.StatusNotFound
		}
		if got := serveStatus(s, "GET", "/v1/contexts", "").Code; got != want {
			t.Fatalf("request %d beside a fault: %d, want %d", i+1, got, want)
		}
	}
	// A reset starts over: request 1 is request 1 again.
	s.Reset()
	for i, want := range first[:20] {
		if got := serveStatus(s, "GET", "/v1/contexts", "").Code; got != want {
			t.Fatalf("request %d after a reset: %d, want %d", i+1, got, want)
		}
	}
	// A request that is not the API's counts for nothing; one the API
	// refuses for its key counts, whatever it is answered.
	s.Reset()
	serveStatus(s, "GET", "/v1/nowhere", "")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, httptestRequest("GET", "/v1/contexts", "", "sk_wrong"))
	if w.Code != http.StatusUnauthorized || s.Chaos().Requests != 1 {
		t.Errorf("a request without a valid key: %d, %d counted", w.Code, s.Chaos().Requests)
	}
	// Stopped, it fails nothing.
	if !s.StopChaos() {
		t.Error("StopChaos: it was not on")
	}
	for range 50 {
		if got := serveStatus(s, "GET", "/v1/contexts", "").Code; got != 200 {
			t.Fatalf("chaos off: %d", got)
		}
	}
}

// chaosReceiver is a receiver built on the SDK's handler with the memory
// deduper, on the mock's clock: it records each event it handles, in
// order.
type chaosReceiver struct {
	*httptest.Server
	mu      sync.Mutex
	handled []*contextsvc.Event
}

func newChaosReceiver(t *testing.T, clock *FakeClock, secret string) *chaosReceiver {
	t.Helper()
	rc := &chaosReceiver{}
	dedupe, err := contextsvc.NewMemoryDeduper(10_000, contextsvc.WithDeduperClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	h, err := contextsvc.NewWebhookHandler(secret, func(_ context.Context, ev *contextsvc.Event) error {
		rc.mu.Lock()
		rc.handled = append(rc.handled, ev)
		rc.mu.Unlock()
		return nil
	}, contextsvc.WithDeduper(dedupe), contextsvc.WithWebhookClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	rc.Server = httptest.NewServer(h)
	t.Cleanup(rc.Close)
	return rc
}

// settle runs every delivery attempt: those due now, then, moving the
// fake clock to each, the held ones, the duplicates and the retries.
func settle(t *testing.T, s *Server, clock *FakeClock) {
	t.Helper()
	for {
		if err := s.WaitIdle(t.Context()); err != nil {
			t.Fatal(err)
		}
		at, ok := s.NextAttemptAt()
		if !ok {
			return
		}
		clock.Set(at)
	}
}

// TestChaosReceiverHandlesEachEventOnce: a receiver built on
// NewWebhookHandler with the memory deduper, under duplicate=0.5 and
// reorder=0.5, handles each event exactly once, loses none, and sees
// some of a context's events out of the order they were fired; the
// duplicates reach it (and its deduper answers them) and the mock's
// metrics count the attempts chaos made apart.
func TestChaosReceiverHandlesEachEventOnce(t *testing.T) {
	t.Parallel()
	rig := newOtelRig(t)
	clock := NewFakeClock(dlvT0)
	ts := NewTestServer(t, WithClock(clock), WithKey(chaosKey), WithChaos(Chaos{Seed: 42, Duplicate: 0.5, Reorder: 0.5}),
		WithMeterProvider(rig.mp))
	rc := newChaosReceiver(t, clock, "whsec_chaos")
	registerHook(t, ts, rc.URL, "whsec_chaos", contextsvc.EventContextCreated, contextsvc.EventContextUpdated,
		contextsvc.EventContextVersionCreated, contextsvc.EventContextDeleted)
	contexts := map[string]string{} // event id: context id
	for i := range 10 {
		c := create(t, ts, fmt.Sprintf(`{"name":"Runbook %d"}`, i))
		for v := range 3 {
			apiCall(t, ts, "", "PUT", "/v1/contexts/"+c.ID, fmt.Sprintf(`{"content":"# Step %d"}`, v))
		}
		apiCall(t, ts, "", "DELETE", "/v1/contexts/"+c.ID, "")
	}
	settle(t, ts.Server, clock)

	events := ts.Events()
	ordinal := map[string]uint64{}
	for _, ev := range events {
		var d struct{ ContextID string }
		_ = json.Unmarshal(ev.Data, &d)
		contexts[ev.ID], ordinal[ev.ID] = d.ContextID, ev.ChaosOrdinal
	}
	if len(events) != 90 || ordinal[events[89].ID] != 90 {
		t.Fatalf("%d events, the last counted %d", len(events), ordinal[events[len(events)-1].ID])
	}
	rc.mu.Lock()
	handled := slices.Clone(rc.handled)
	rc.mu.Unlock()
	times := map[string]int{}
	for _, ev := range handled {
		times[ev.ID]++
	}
	for _, ev := range events {
		if times[ev.ID] != 1 {
			t.Errorf("event %d (%s) handled %d times", ev.ChaosOrdinal, ev.Type, times[ev.ID])
		}
	}
	// Out of order: an event handled after a later event of its context.
	outOfOrder := 0
	last := map[string]uint64{}
	for _, ev := range handled {
		c := contexts[ev.ID]
		if ordinal[ev.ID] < last[c] {
			outOfOrder++
		}
		last[c] = max(last[c], ordinal[ev.ID])
	}
	var held, dups int
	for _, dl := range ts.Deliveries(DeliveryFilter{}) {
		if dl.State != DeliverySucceeded {
			t.Errorf("delivery of event %d: %s", ordinal[dl.EventID], dl.State)
		}
		for _, a := range dl.Attempts {
			switch a.Chaos.Action {
			case ChaosHeld:
				held++
			case ChaosDuplicate:
				dups++
				if a.StatusCode != http.StatusOK {
					t.Errorf("the receiver answered a duplicate %d: %s", a.StatusCode, a.ResponseSnippet)
				}
			}
		}
	}
	rep := ts.Chaos()
	t.Logf("90 events: %d held, %d duplicated, %d handled out of their context's order", held, dups, outOfOrder)
	if held < 20 || dups < 20 || outOfOrder == 0 || uint64(held) != rep.Held || uint64(dups) != rep.Duplicates || rep.Events != 90 {
		t.Errorf("held %d, duplicated %d, out of order %d; the report: %+v", held, dups, outOfOrder, rep)
	}
	if got := chaosAttempts(t, rig); got["held"] != held || got["duplicate"] != dups || got[""] != 90-held {
		t.Errorf("the attempts' metric by contextsvc.mock.chaos: %v, want %d held, %d duplicate, %d neither", got, held, dups, 90-held)
	}
}

// chaosAttempts counts the delivery attempts the metrics recorded, by
// their contextsvc.mock.chaos.
func chaosAttempts(t *testing.T, rig *otelRig) map[string]int {
	t.Helper()
	got := map[string]int{}
	for _, p := range histogramPoints(t, rig, "http.client.request.duration") {
		c, _ := p.Attributes.Value("contextsvc.mock.chaos")
		got[c.AsString()] += int(p.Count)
	}
	return got
}

// chaosScenario is what a run of chaosDecisions did.
type chaosScenario struct {
	// Statuses are the /v1 answers, in the order the requests were sent.
	Statuses []int
	// Deliveries say, by event ordinal and webhook (in registration
	// order), what chaos did to each attempt.
	Deliveries map[string][]string
}

// chaosDecisions runs one scenario against a server with seed: a client
// that sends its requests one after another (each again until it gets a
// 2xx), three webhooks, events of several contexts; then every delivery.
func chaosDecisions(t *testing.T, seed uint64, workers int) chaosScenario {
	t.Helper()
	clock := NewFakeClock(dlvT0)
	s := New(WithClock(clock), WithKey(chaosKey), WithDeliveryWorkers(workers),
		WithChaos(Chaos{Seed: seed, Duplicate: 0.3, Reorder: 0.5, Delay: 3 * time.Second, APIError: 0.2}))
	defer s.Close(context.Background())
	var sc chaosScenario
	send := func(method, path, body string) []byte {
		for {
			w := serveStatus(s, method, path, body)
			sc.Statuses = append(sc.Statuses, w.Code)
			if w.Code/100 == 2 {
				return w.Body.Bytes()
			}
		}
	}
	hooks := map[string]int{}
	for i := range 3 {
		rc := deliverytest.NewReceiver(t, clock, "whsec_same", func(http.ResponseWriter, *http.Request, deliverytest.Hit) {})
		var wh model.WebhookJSON
		_ = json.Unmarshal(send("POST", "/v1/webhooks", `{"url":"`+rc.URL+`","events":["context.created","context.updated"],"secret":"whsec_same"}`), &wh)
		hooks[wh.ID] = i
	}
	for i := range 8 {
		var c model.ContextJSON
		_ = json.Unmarshal(send("POST", "/v1/contexts", fmt.Sprintf(`{"name":"Doc %d"}`, i)), &c)
		send("GET", "/v1/contexts/"+c.ID, "")
		send("PUT", "/v1/contexts/"+c.ID, `{"content":"changed"}`)
	}
	settle(t, s, clock)
	ordinal := map[string]uint64{}
	for _, ev := range s.Events() {
		ordinal[ev.ID] = ev.ChaosOrdinal
	}
	sc.Deliveries = map[string][]string{}
	for _, dl := range s.Deliveries(DeliveryFilter{}) {
		var attempts []string
		for _, a := range dl.Attempts {
			attempts = append(attempts, fmt.Sprintf("#%d %d %s %v", a.Number, a.StatusCode, a.Chaos.Action, a.Chaos.Delay))
		}
		sc.Deliveries[fmt.Sprintf("event %d webhook %d", ordinal[dl.EventID], hooks[dl.WebhookID])] = attempts
	}
	return sc
}

// TestChaosSameSeedSameDecisions: two runs with the same seed and the same
// sequence of requests make the same decisions, though one server sends
// its deliveries one at a time and the other eight at once; another seed
// makes others.
func TestChaosSameSeedSameDecisions(t *testing.T) {
	t.Parallel()
	one := chaosDecisions(t, 42, 1)
	eight := chaosDecisions(t, 42, 8)
	if diff := cmp.Diff(one, eight); diff != "" {
		t.Errorf("the same seed and requests made other decisions (-one sender +eight):\n%s", diff)
	}
	var held, dups, failed int
	for _, attempts := range one.Deliveries {
		for _, a := range attempts {
			held += strings.Count(a, " held ")
			dups += strings.Count(a, " duplicate ")
		}
	}
	for _, st := range one.Statuses {
		if st/100 != 2 {
			failed++
		}
	}
	if len(one.Deliveries) != 48 || held == 0 || dups == 0 || failed == 0 {
		t.Errorf("%d deliveries, %d held, %d duplicated, %d requests failed: the scenario tries too little", len(one.Deliveries), held, dups, failed)
	}
	if other := chaosDecisions(t, 43, 8); cmp.Equal(one, other) {
		t.Error("seeds 42 and 43 made the same decisions")
	}
}

// TestChaosAdmin: the admin route reads the chaos mode, sets it from a SPEC
// or from fields (its seed chosen when none is given), refuses what it
// cannot use naming the field, and stops it; the summary and the events
// show it.
func TestChaosAdmin(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	type chaosJSON struct {
		On         bool
		Spec       string
		Seed       uint64
		SeedChosen bool
		Duplicate  float64
		Reorder    float64
		DelayMs    int64
		APIError   float64
		Requests   uint64
		Events     uint64
		Decisions  []map[string]any
	}
	get := func() chaosJSON {
		t.Helper()
		r := admin(t, ts, "GET", "/_mock/chaos", "")
		var c chaosJSON
		r.json(t, &c)
		return c
	}
	if c := get(); c.On || c.Spec != "" || c.Decisions == nil {
		t.Errorf("off: %+v", c)
	}
	r := admin(t, ts, "PUT", "/_mock/chaos", `{"spec":"seed=42,duplicate=0.2,reorder=0.3,delay=2s,api-error=0.1"}`)
	var c chaosJSON
	r.json(t, &c)
	if r.Status != 200 || !c.On || c.Seed != 42 || c.SeedChosen || c.Duplicate != 0.2 || c.Reorder != 0.3 || c.DelayMs != 2000 ||
		c.APIError != 0.1 || c.Spec != "seed=42,duplicate=0.2,reorder=0.3,delay=2s,api-error=0.1" {
		t.Errorf("set from a SPEC: %d %s", r.Status, r.Body)
	}
	if got := ts.Chaos().Chaos; got != (Chaos{Seed: 42, Duplicate: 0.2, Reorder: 0.3, Delay: 2 * time.Second, APIError: 0.1}) {
		t.Errorf("Server.Chaos after PUT: %+v", got)
	}
	r = admin(t, ts, "PUT", "/_mock/chaos", `{"reorder":1,"delayMs":250}`)
	r.json(t, &c)
	if r.Status != 200 || !c.SeedChosen || c.Seed == 0 || c.Reorder != 1 || c.DelayMs != 250 || c.Spec != fmt.Sprintf("seed=%d,reorder=1,delay=250ms", c.Seed) {
		t.Errorf("set from fields: %d %s", r.Status, r.Body)
	}
	for _, tc := range []struct{ body, param, says string }{
		{`{"spec":"seed=0"}`, "spec", "0 is no seed"},
		{`{"spec":"reorder=2"}`, "spec", "reorder: 2 is not a probability"},
		{`{"spec":"api_error=0.1"}`, "spec", `unknown key`},
		{`{"spec":"seed=1","seed":1}`, "spec", "not both"},
		{`{"apiError":1.5}`, "apiError", "a probability"},
		{`{"apiError":"0.5"}`, "apiError", "a probability"},
		{`{"seed":0}`, "seed", "leave seed out"},
		{`{"delayMs":0}`, "delayMs", "from 1 to 300000"},
		{`{"delay":"2s"}`, "delay", "unknown field"},
	} {
		r := admin(t, ts, "PUT", "/_mock/chaos", tc.body)
		typ, param := r.errorOf(t)
		if r.Status != 400 || typ != "invalid_request" || param != tc.param || !strings.Contains(string(r.Body), tc.says) {
			t.Errorf("PUT %s: %d %s", tc.body, r.Status, r.Body)
		}
	}
	if c := get(); c.Reorder != 1 || c.DelayMs != 250 {
		t.Errorf("a refused PUT changed the mode: %+v", c)
	}
	// The summary says it is on; an event says its ordinal.
	var sum struct{ Chaos struct{ On bool } }
	admin(t, ts, "GET", "/_mock/summary", "").json(t, &sum)
	created := create(t, ts, `{"name":"Counted"}`)
	var evs struct{ Data []map[string]any }
	admin(t, ts, "GET", "/_mock/events", "").json(t, &evs)
	if !sum.Chaos.On || len(evs.Data) != 2 || evs.Data[0]["chaosOrdinal"] != 1.0 || evs.Data[1]["chaosOrdinal"] != 2.0 {
		t.Errorf("summary %+v; events %v (of %s)", sum, evs.Data, created.ID)
	}
	if r := admin(t, ts, "DELETE", "/_mock/chaos", ""); r.Status != 204 {
		t.Errorf("DELETE: %d %s", r.Status, r.Body)
	}
	if c := get(); c.On {
		t.Errorf("after DELETE: %+v", c)
	}
	create(t, ts, `{"name":"Not counted"}`)
	if evs := ts.Events(); evs[len(evs)-1].ChaosOrdinal != 0 {
		t.Errorf("an event fired with chaos off counted %d", evs[len(evs)-1].ChaosOrdinal)
	}
}

// TestChaosOptions: settings that cannot be used are refused by Open, by
// SetChaos and on a validating proxy, and leave a server's mode as it
// was.
func TestChaosOptions(t *testing.T) {
	t.Parallel()
	for _, opts := range [][]Option{
		{WithChaos(Chaos{Reorder: 2})},
		{WithChaos(Chaos{Delay: time.Hour})},
		{WithChaos(Chaos{Seed: MaxChaosSeed + 1})},
		{WithChaos(Chaos{APIError: 0.1}), WithUpstream("http://127.0.0.1:1/v1")},
	} {
		_, err := Open(opts...)
		if !errors.Is(err, ErrInvalidOption) || !errors.Is(err, ErrInvalidChaos) || !strings.Contains(err.Error(), "WithChaos") {
			t.Errorf("Open: %v", err)
		}
	}
	s := New(WithChaos(Chaos{Seed: 5, APIError: 0.5}))
	defer s.Close(context.Background())
	_, err := s.SetChaos(Chaos{Duplicate: -1})
	var ce *ChaosError
	if !errors.As(err, &ce) || ce.Key != "duplicate" || s.Chaos().Chaos.APIError != 0.5 {
		t.Errorf("SetChaos refused: %v; the mode: %+v", err, s.Chaos())
	}
	rep, err := s.SetChaos(Chaos{Duplicate: 1})
	if err != nil || !rep.On || !rep.SeedChosen || rep.Chaos.Seed == 0 || rep.Chaos.Delay != DefaultChaosDelay {
		t.Errorf("SetChaos: %+v, %v", rep, err)
	}
	if c, err := ParseChaos(rep.Chaos.String()); err != nil || c != rep.Chaos {
		t.Errorf("ParseChaos(%q) = %+v, %v", rep.Chaos.String(), c, err)
	}

	up := NewTestServer(t)
	proxy := NewTestServer(t, WithUpstream(up.URL))
	if _, err := proxy.SetChaos(Chaos{APIError: 1}); !errors.Is(err, ErrInvalidChaos) {
		t.Errorf("SetChaos on a proxy: %v", err)
	}
	if r := admin(t, proxy, "PUT", "/_mock/chaos", `{"spec":"api-error=1"}`); r.Status != http.StatusConflict {
		t.Errorf("PUT /_mock/chaos on a proxy: %d %s", r.Status, r.Body)
	}
}

// histogramPoints are the points of the mock's histogram name.
func histogramPoints(t *testing.T, rig *otelRig, name string) []metricdata.HistogramDataPoint[float64] {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := rig.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var out []metricdata.HistogramDataPoint[float64]
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if h, ok := m.Data.(metricdata.Histogram[float64]); ok && m.Name == name && sm.Scope.Name == telemetryScope {
				out = append(out, h.DataPoints...)
			}
		}
	}
	return out
}

// telemetryScope is the mock's instrumentation scope.
const telemetryScope = "github.com/contextsvc/contextsvc-go/mockserver"

// TestChaosEffectsKeptInTheState: what chaos did to the attempts of a
// pending delivery is in the state document, and comes back with it.
func TestChaosEffectsKeptInTheState(t *testing.T) {
	t.Parallel()
	clock := NewFakeClock(dlvT0)
	ts := NewTestServer(t, WithClock(clock), WithKey(chaosKey), WithChaos(Chaos{Seed: 5, Reorder: 1}))
	down := deliverytest.NewReceiver(t, clock, "whsec_state", func(w http.ResponseWriter, _ *http.Request, _ deliverytest.Hit) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	registerHook(t, ts, down.URL, "whsec_state", contextsvc.EventContextCreated)
	create(t, ts, `{"name":"Held, then failed"}`)
	due, _ := ts.NextAttemptAt()
	clock.Set(due) // the held first attempt fails; its retry waits a minute
	before := ts.Deliveries(DeliveryFilter{})[0]
	if len(before.Attempts) != 1 || before.Attempts[0].Chaos.Action != ChaosHeld || before.State != DeliveryPending {
		t.Fatalf("before the save: %+v", before)
	}
	var doc strings.Builder
	if err := ts.SaveState(&doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(doc.String(), `"chaos":{"action":"held","delayNs":`) {
		t.Errorf("the state document lacks the attempt's chaos:\n%s", doc.String())
	}
	other := New(WithClock(NewFakeClock(dlvT0)), WithKey(chaosKey))
	defer other.Close(context.Background())
	if err := other.LoadState(strings.NewReader(doc.String())); err != nil {
		t.Fatal(err)
	}
	after := other.Deliveries(DeliveryFilter{})[0]
	if diff := cmp.Diff(before.Attempts, after.Attempts); diff != "" {
		t.Errorf("the attempts loaded (-saved +loaded):\n%s", diff)
	}
	for _, bad := range []string{`"chaos":{"action":"lost","delayNs":1}`, `"chaos":{"action":"held"}`, `"chaos":{"action":"held","delayNs":-1}`} {
		broken := strings.Replace(doc.String(), `"chaos":{"action":"held","delayNs":`+fmt.Sprint(int64(before.Attempts[0].Chaos.Delay))+`}`, bad, 1)
		if err := other.LoadState(strings.NewReader(broken)); !errors.Is(err, ErrInvalidState) || !strings.Contains(err.Error(), "chaos") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
