package mockserver

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery/deliverytest"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// These tests run deliveries through a whole Server: webhooks registered
// with POST /v1/webhooks, events fired by /v1 requests or the admin API,
// the schedule driven by the server's fake clock.

// newFakeTestServer starts a test server on a fake clock at dlvT0.
func newFakeTestServer(t *testing.T, opts ...Option) (*TestServer, *FakeClock) {
	t.Helper()
	clock := NewFakeClock(dlvT0)
	return NewTestServer(t, append([]Option{WithClock(clock)}, opts...)...), clock
}

// registerHook registers a webhook with POST /v1/webhooks and returns its id.
func registerHook(t *testing.T, ts *TestServer, url, secret string, events ...contextsvc.EventType) string {
	t.Helper()
	b, _ := json.Marshal(map[string]any{"url": url, "events": events, "secret": secret})
	r := do(t, ts, call{method: "POST", path: "/v1/webhooks", body: string(b)})
	if r.Status != http.StatusCreated {
		t.Fatalf("register webhook: %d %s", r.Status, r.Body)
	}
	var wh model.WebhookJSON
	r.json(t, &wh)
	return wh.ID
}

// idle waits for the server's deliveries to be idle, however long the
// machine takes (go test's -timeout ends a hung engine).
func idle(t *testing.T, ts *TestServer) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := ts.WaitIdle(ctx); err != nil {
		t.Fatalf("WaitIdle: %v", err)
	}
}

// updateOnce creates a context and updates it, firing one context.updated
// event, and returns the context id.
func updateOnce(t *testing.T, ts *TestServer) string {
	t.Helper()
	c := create(t, ts, `{"name":"Runbook","content":"# Steps\none"}`)
	r := do(t, ts, call{method: "PUT", path: "/v1/contexts/" + c.ID, body: `{"content":"# Steps\none two"}`})
	if r.Status != http.StatusOK {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	return c.ID
}

// failing answers 500 to the first n requests, then 204.
func failing(n int) func(w http.ResponseWriter, r *http.Request, h deliverytest.Hit) {
	var mu sync.Mutex
	count := 0
	return func(w http.ResponseWriter, r *http.Request, h deliverytest.Hit) {
		mu.Lock()
		count++
		fail := count <= n
		mu.Unlock()
		if fail {
			http.Error(w, "not yet", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

// runSchedule advances the clock through the default schedule, waiting for
// the deliveries after each step.
func runSchedule(t *testing.T, ts *TestServer, clock *FakeClock) {
	t.Helper()
	idle(t, ts)
	for _, d := range DefaultRetrySchedule() {
		clock.Advance(d)
		idle(t, ts)
	}
}

func TestServerDeliveryWholeSchedule(t *testing.T) {
	t.Parallel()
	ts, clock := newFakeTestServer(t)
	rc := deliverytest.NewReceiver(t, clock, "whsec_schedule", failing(5))
	hook := registerHook(t, ts, rc.URL, "whsec_schedule", contextsvc.EventContextUpdated)
	updateOnce(t, ts)
	runSchedule(t, ts, clock)

	want := []time.Duration{0, time.Minute, 6 * time.Minute, 36 * time.Minute, 2*time.Hour + 36*time.Minute, 26*time.Hour + 36*time.Minute}
	hits := rc.Got()
	var at []time.Duration
	for i, h := range hits {
		at = append(at, h.At.Sub(dlvT0))
		if n := deliverytest.AttemptNumber(h); n != i+1 {
			t.Errorf("request %d carries attempt %d", i+1, n)
		}
		if et := h.Header.Get("X-Service-Event"); et != "context.updated" {
			t.Errorf("X-Service-Event %q", et)
		}
	}
	if diff := cmp.Diff(want, at); diff != "" {
		t.Fatalf("receive times from t0 (-want +got):\n%s", diff)
	}
	dls := ts.Deliveries(DeliveryFilter{WebhookID: hook})
	if len(dls) != 1 {
		t.Fatalf("%d deliveries", len(dls))
	}
	dl := dls[0]
	if dl.State != DeliverySucceeded || len(dl.Attempts) != 6 || !dl.NextAttemptAt.IsZero() {
		t.Fatalf("delivery %+v", dl)
	}
	for i, a := range dl.Attempts {
		if got := a.ScheduledAt.Sub(dlvT0); got != want[i] {
			t.Errorf("attempt %d scheduled at +%s, want +%s", a.Number, got, want[i])
		}
		if ok := a.Succeeded(); ok != (i == 5) {
			t.Errorf("attempt %d succeeded=%v", a.Number, ok)
		}
		if i < 5 && (a.StatusCode != 500 || !strings.Contains(a.ResponseSnippet, "not yet")) {
			t.Errorf("attempt %d: %d %q", a.Number, a.StatusCode, a.ResponseSnippet)
		}
	}
	// The delivery is the event's: same id in the log and in the body.
	var updated []Event
	for _, ev := range ts.Events() {
		if ev.Type == contextsvc.EventContextUpdated {
			updated = append(updated, ev)
		}
	}
	if len(updated) != 1 || dl.EventID != updated[0].ID || string(hits[0].Body) != string(updated[0].Body) {
		t.Errorf("delivered %s, context.updated events %+v", hits[0].Body, updated)
	}
	// And the admin API shows it with the contract's times.
	r := do(t, ts, call{method: "GET", path: "/_mock/deliveries/" + dl.ID, key: "-"})
	if !strings.Contains(string(r.Body), `"scheduledAt":"2026-11-22T14:36:00.000Z"`) {
		t.Errorf("admin delivery: %s", r.Body)
	}
}

func TestServerDeliveryFailsThenRedelivered(t *testing.T) {
	t.Parallel()
	for _, via := range []string{"go", "admin"} {
		t.Run(via, func(t *testing.T) {
			t.Parallel()
			ts, clock := newFakeTestServer(t)
			rc := deliverytest.NewReceiver(t, clock, "s3cret", failing(6))
			registerHook(t, ts, rc.URL, "s3cret", contextsvc.EventContextUpdated)
			updateOnce(t, ts)
			runSchedule(t, ts, clock)
			clock.Advance(1000 * time.Hour) // nothing more is scheduled
			idle(t, ts)
			failed := ts.Deliveries(DeliveryFilter{State: DeliveryFailed})
			if len(failed) != 1 || len(failed[0].Attempts) != 6 || len(rc.Got()) != 6 {
				t.Fatalf("failed deliveries %+v, %d requests", failed, len(rc.Got()))
			}
			if n := len(ts.Deliveries(DeliveryFilter{State: DeliveryPending})); n != 0 {
				t.Fatalf("%d pending", n)
			}
			id := failed[0].ID
			switch via {
			case "go":
				dl, err := ts.Redeliver(id)
				if err != nil || dl.State != DeliveryPending {
					t.Fatalf("Redeliver: %+v %v", dl, err)
				}
			case "admin":
				r := do(t, ts, call{method: "POST", path: "/_mock/deliveries/" + id + "/redeliver", key: "-"})
				var dl Delivery
				r.json(t, &dl)
				if r.Status != 200 || dl.State != DeliveryPending || dl.ID != id {
					t.Fatalf("redeliver: %d %s", r.Status, r.Body)
				}
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			dl, err := ts.WaitForDelivery(ctx, func(d Delivery) bool { return d.ID == id && d.State != DeliveryPending })
			if err != nil {
				t.Fatal(err)
			}
			if dl.State != DeliverySucceeded || len(dl.Attempts) != 7 || dl.Attempts[6].Number != 7 || !dl.Attempts[6].Succeeded() {
				t.Fatalf("after redeliver: %+v", dl)
			}
			if hits := rc.Got(); len(hits) != 7 || deliverytest.AttemptNumber(hits[6]) != 7 {
				t.Fatalf("%d requests", len(hits))
			}
		})
	}
}

func TestServerDeliveryTimeoutAndRedirect(t *testing.T) {
	t.Parallel()
	ts, clock := newFakeTestServer(t, WithDeliveryTimeout(300*time.Millisecond), WithRetrySchedule([]time.Duration{}))
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // runs before the receivers close
	hang := deliverytest.NewReceiver(t, clock, "k", func(w http.ResponseWriter, r *http.Request, h deliverytest.Hit) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	var followedMu sync.Mutex
	followed := false
	redirect := deliverytest.NewReceiver(t, clock, "k", func(w http.ResponseWriter, r *http.Request, h deliverytest.Hit) {
		if r.URL.Path == "/elsewhere" {
			followedMu.Lock()
			followed = true
			followedMu.Unlock()
			return
		}
		http.Redirect(w, r, "/elsewhere", http.StatusMovedPermanently)
	})
	hangHook := registerHook(t, ts, hang.URL, "k", contextsvc.EventContextUpdated)
	redirHook := registerHook(t, ts, redirect.URL+"/in", "k", contextsvc.EventContextUpdated)
	updateOnce(t, ts)
	idle(t, ts)

	h := ts.Deliveries(DeliveryFilter{WebhookID: hangHook})
	if len(h) != 1 || h[0].State != DeliveryFailed || len(h[0].Attempts) != 1 {
		t.Fatalf("hanging receiver: %+v", h)
	}
	if a := h[0].Attempts[0]; a.StatusCode != 0 || !strings.Contains(a.Error, "timed out") || a.Duration < 300*time.Millisecond {
		t.Errorf("hanging attempt %+v", a)
	}
	rd := ts.Deliveries(DeliveryFilter{WebhookID: redirHook})
	if len(rd) != 1 || rd[0].State != DeliveryFailed {
		t.Fatalf("redirecting receiver: %+v", rd)
	}
	if a := rd[0].Attempts[0]; a.StatusCode != http.StatusMovedPermanently || !strings.Contains(a.Error, "not followed") {
		t.Errorf("redirect attempt %+v", a)
	}
	followedMu.Lock()
	defer followedMu.Unlock()
	if followed || len(redirect.Got()) != 1 {
		t.Errorf("the redirect was followed (%d requests)", len(redirect.Got()))
	}
}

// TestServerDeliveryManyEventsExactlyOnce fires 1,000 events (100 with
// -short) at 3 healthy webhooks: each of the deliveries arrives once.
func TestServerDeliveryManyEventsExactlyOnce(t *testing.T) {
	t.Parallel()
	n := 1000
	if testing.Short() {
		n = 100
	}
	ts, clock := newFakeTestServer(t, WithKey(Key{Token: "sk_load", Plan: PlanUnlimited}))
	ok := func(w http.ResponseWriter, r *http.Request, h deliverytest.Hit) { w.WriteHeader(http.StatusOK) }
	var rcs []*deliverytest.Receiver
	for i := range 3 {
		secret := fmt.Sprintf("secret-%d", i)
		rc := deliverytest.NewReceiver(t, clock, secret, ok)
		registerHook(t, ts, rc.URL, secret, contextsvc.EventContextCreated)
		rcs = append(rcs, rc)
	}
	for i := range n {
		r := do(t, ts, call{method: "POST", path: "/v1/contexts", body: fmt.Sprintf(`{"name":"c%d"}`, i)})
		if r.Status != http.StatusCreated {
			t.Fatalf("create %d: %d", i, r.Status)
		}
	}
	idle(t, ts)
	created := map[string]bool{}
	for _, ev := range ts.Events() {
		if ev.Type == contextsvc.EventContextCreated {
			created[ev.ID] = true
		}
	}
	if len(created) != n {
		t.Fatalf("%d created events", len(created))
	}
	for i, rc := range rcs {
		seen := map[string]int{}
		for _, h := range rc.Got() {
			var env struct{ ID string }
			if err := json.Unmarshal(h.Body, &env); err != nil {
				t.Fatal(err)
			}
			seen[env.ID]++
		}
		for id := range created {
			if seen[id] != 1 {
				t.Errorf("webhook %d got event %s %d times", i, id, seen[id])
			}
		}
		if len(seen) != n {
			t.Errorf("webhook %d got %d distinct events, want %d", i, len(seen), n)
		}
	}
	if got := len(ts.Deliveries(DeliveryFilter{State: DeliverySucceeded})); got != 3*n {
		t.Errorf("%d succeeded deliveries, want %d", got, 3*n)
	}
}

// TestServerDeliveryRandomFailures has receivers fail at random half the
// time while the clock runs through the schedule: every delivery ends
// succeeded (its last attempt the only success) or failed after six
// attempts; none is lost, none attempted after it succeeded.
func TestServerDeliveryRandomFailures(t *testing.T) {
	t.Parallel()
	n := 200
	if testing.Short() {
		n = 30
	}
	ts, clock := newFakeTestServer(t)
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(5, 21))
	flaky := func(w http.ResponseWriter, r *http.Request, h deliverytest.Hit) {
		mu.Lock()
		fail := rng.IntN(2) == 0
		mu.Unlock()
		if fail {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}
	var rcs []*deliverytest.Receiver
	for i := range 3 {
		secret := fmt.Sprintf("flaky-%d", i)
		rc := deliverytest.NewReceiver(t, clock, secret, flaky)
		registerHook(t, ts, rc.URL, secret, contextsvc.EventTeamMemberAdded)
		rcs = append(rcs, rc)
	}
	for i := range n {
		data := fmt.Sprintf(`{"teamId":"team_aaaaaaaaaaaaaaaaaaaa","userId":"user_%020d","role":"editor"}`, i)
		if _, err := ts.EmitEvent(t.Context(), "", contextsvc.EventTeamMemberAdded, json.RawMessage(data)); err != nil {
			t.Fatal(err)
		}
	}
	runSchedule(t, ts, clock)

	requests := map[string]int{} // by delivery id
	for _, rc := range rcs {
		for _, h := range rc.Got() {
			requests[h.Header.Get("X-Service-Delivery")]++
		}
	}
	dls := ts.Deliveries(DeliveryFilter{})
	if len(dls) != 3*n {
		t.Fatalf("%d deliveries, want %d", len(dls), 3*n)
	}
	var succeeded, failed int
	for _, dl := range dls {
		if requests[dl.ID] != len(dl.Attempts) {
			t.Errorf("%s: %d requests, %d attempts recorded", dl.ID, requests[dl.ID], len(dl.Attempts))
		}
		for i, a := range dl.Attempts[:len(dl.Attempts)-1] {
			if a.Succeeded() {
				t.Errorf("%s: attempt %d succeeded but was not the last", dl.ID, i+1)
			}
		}
		last := dl.Attempts[len(dl.Attempts)-1]
		switch dl.State {
		case DeliverySucceeded:
			succeeded++
			if !last.Succeeded() {
				t.Errorf("%s: succeeded with a failed last attempt", dl.ID)
			}
		case DeliveryFailed:
			failed++
			if len(dl.Attempts) != 6 || last.Succeeded() {
				t.Errorf("%s: failed after %d attempts", dl.ID, len(dl.Attempts))
			}
		default:
			t.Errorf("%s: still %s", dl.ID, dl.State)
		}
	}
	if succeeded == 0 {
		t.Error("no delivery succeeded")
	}
	t.Logf("%d succeeded, %d failed", succeeded, failed)
}

// TestServerDeliveryRouting checks who gets an event: one delivery per
// webhook of the event's own account subscribed to its type, none to a
// webhook of another account or one not subscribed to the type.
func TestServerDeliveryRouting(t *testing.T) {
	t.Parallel()
	ts, clock := newFakeTestServer(t, WithKey(Key{Token: "sk_test_a", Account: "acct_a"}), WithKey(Key{Token: "sk_test_b", Account: "acct_b"}))
	ok := func(http.ResponseWriter, *http.Request, deliverytest.Hit) {}
	register := func(key, secret string, events ...contextsvc.EventType) string {
		t.Helper()
		rc := deliverytest.NewReceiver(t, clock, secret, ok)
		b, _ := json.Marshal(map[string]any{"url": rc.URL, "events": events, "secret": secret})
		r := do(t, ts, call{method: "POST", path: "/v1/webhooks", body: string(b), key: key})
		if r.Status != http.StatusCreated {
			t.Fatalf("register webhook: %d %s", r.Status, r.Body)
		}
		var wh model.WebhookJSON
		r.json(t, &wh)
		return wh.ID
	}
	aCreated := register("sk_test_a", "sa1", contextsvc.EventContextCreated)
	aBoth := register("sk_test_a", "sa2", contextsvc.EventContextCreated, contextsvc.EventContextVersionCreated)
	aDeleted := register("sk_test_a", "sa3", contextsvc.EventContextDeleted)
	bAll := register("sk_test_b", "sb", contextsvc.AllEventTypes()...)

	if r := do(t, ts, call{method: "POST", path: "/v1/contexts", body: `{"name":"A's"}`, key: "sk_test_a"}); r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	team, err := ts.EmitEvent(t.Context(), "acct_b", contextsvc.EventTeamMemberAdded, json.RawMessage(`{"teamId":"team_1","userId":"user_1","role":"viewer"}`))
	if err != nil {
		t.Fatal(err)
	}
	idle(t, ts)

	byType := map[contextsvc.EventType]string{}
	for _, ev := range ts.Events() {
		byType[ev.Type] = ev.ID
	}
	type route struct{ Event, Webhook string }
	want := []route{
		{byType[contextsvc.EventContextCreated], aCreated},
		{byType[contextsvc.EventContextCreated], aBoth},
		{byType[contextsvc.EventContextVersionCreated], aBoth},
		{team.ID, bAll},
	}
	var got []route
	for _, dl := range ts.Deliveries(DeliveryFilter{}) {
		got = append(got, route{dl.EventID, dl.WebhookID})
		if dl.State != DeliverySucceeded {
			t.Errorf("delivery %s of %s: %s", dl.ID, dl.EventType, dl.State)
		}
	}
	less := func(a, b route) bool { return a.Event+a.Webhook < b.Event+b.Webhook }
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(less)); diff != "" {
		t.Errorf("deliveries (-want +got):\n%s", diff)
	}
	if n := len(ts.Deliveries(DeliveryFilter{WebhookID: aDeleted})); n != 0 {
		t.Errorf("%d deliveries to the webhook subscribed to context.deleted only", n)
	}
}
