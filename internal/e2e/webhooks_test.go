package e2e_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// t0 is where the fake clocks of these tests start.
var t0 = time.Date(2026, 11, 21, 20, 0, 0, 0, time.UTC)

// countingReceiver is a receiver's business logic: it counts each call per
// event id and fails the first failFirst calls of every event.
type countingReceiver struct {
	failFirst int

	mu      sync.Mutex
	calls   map[string]int // every call of fn
	handled []string       // event ids whose call succeeded, in order
	types   map[string]contextsvc.EventType
}

func newCountingReceiver(failFirst int) *countingReceiver {
	return &countingReceiver{failFirst: failFirst, calls: map[string]int{}, types: map[string]contextsvc.EventType{}}
}

// fn is the function given to NewWebhookHandler.
func (r *countingReceiver) fn(_ context.Context, ev *contextsvc.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[ev.ID]++
	r.types[ev.ID] = ev.Type
	if r.calls[ev.ID] <= r.failFirst {
		return errors.New("receiver not ready yet")
	}
	r.handled = append(r.handled, ev.ID)
	return nil
}

func (r *countingReceiver) snapshot() (calls map[string]int, handled []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls = make(map[string]int, len(r.calls))
	for k, v := range r.calls {
		calls[k] = v
	}
	return calls, slices.Clone(r.handled)
}

// typeOf returns the type of an event fn was called with.
func (r *countingReceiver) typeOf(id string) contextsvc.EventType {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.types[id]
}

// startReceiver serves NewWebhookHandler(secret, fn, opts...) on a loopback
// port and returns its URL.
func startReceiver(t *testing.T, secret string, fn func(context.Context, *contextsvc.Event) error, opts ...contextsvc.WebhookOption) string {
	t.Helper()
	h, err := contextsvc.NewWebhookHandler(secret, fn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/webhooks"
}

// waitIdle waits until the server has no delivery attempt due or running,
// however long the machine takes (go test's -timeout ends a hang).
func waitIdle(t *testing.T, ts *mockserver.TestServer) {
	t.Helper()
	if err := ts.WaitIdle(t.Context()); err != nil {
		t.Fatalf("WaitIdle: %v (deliveries %+v)", err, ts.Deliveries(mockserver.DeliveryFilter{}))
	}
}

// eventIDs returns the ids of every event the server recorded, in order.
func eventIDs(s *mockserver.Server) []string {
	var ids []string
	for _, ev := range s.Events() {
		ids = append(ids, ev.ID)
	}
	return ids
}

// attemptStatuses lists the status of each attempt of d.
func attemptStatuses(d mockserver.Delivery) []int {
	var out []int
	for _, a := range d.Attempts {
		out = append(out, a.StatusCode)
	}
	return out
}

// TestWebhookRetriesUntilHandled drives a delivery through the service's
// retry schedule on a fake clock: the receiver's function fails twice
// (the SDK's handler answers 500), the third attempt succeeds, and from
// then on the function is never called again for that event, not even
// when the delivery is sent once more by hand.
func TestWebhookRetriesUntilHandled(t *testing.T) {
	t.Parallel()
	clock := mockserver.NewFakeClock(t0)
	ts := mockserver.NewTestServer(t, mockserver.WithClock(clock))
	client := newClient(t, ts, "")
	rcv := newCountingReceiver(2)
	// The handler's replay window must read the same (fake) time as the
	// server that stamps the events.
	url := startReceiver(t, "whsec_e2e", rcv.fn, contextsvc.WithWebhookClock(clock.Now))
	ctx := context.Background()

	wh, err := client.Webhooks.Register(ctx, &contextsvc.RegisterWebhookRequest{URL: url, Events: contextsvc.AllEventTypes(), Secret: "whsec_e2e"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Retried", Content: "# One\n\ntwo three\n"}); err != nil {
		t.Fatal(err)
	}
	events := eventIDs(ts.Server) // context.created and context.version.created
	if len(events) != 2 {
		t.Fatalf("%d events recorded, want 2", len(events))
	}

	// Each step of the schedule: advance to the next due time, wait until
	// the attempts it made due have finished, check every delivery.
	steps := []struct {
		advance  time.Duration
		statuses []int
		state    mockserver.DeliveryState
		next     time.Duration // next attempt due, from t0; 0: none
	}{
		{0, []int{500}, mockserver.DeliveryPending, time.Minute},
		{time.Minute, []int{500, 500}, mockserver.DeliveryPending, 6 * time.Minute},
		{5 * time.Minute, []int{500, 500, 200}, mockserver.DeliverySucceeded, 0},
	}
	for i, st := range steps {
		clock.Advance(st.advance)
		waitIdle(t, ts)
		ds := ts.Deliveries(mockserver.DeliveryFilter{WebhookID: wh.ID})
		if len(ds) != len(events) {
			t.Fatalf("step %d: %d deliveries, want one per event (%d)", i, len(ds), len(events))
		}
		for _, d := range ds {
			if diff := cmp.Diff(st.statuses, attemptStatuses(d)); diff != "" {
				t.Errorf("step %d: %s attempts (-want +got):\n%s", i, d.EventType, diff)
			}
			if d.State != st.state {
				t.Errorf("step %d: %s state %s, want %s", i, d.EventType, d.State, st.state)
			}
			var wantNext time.Time
			if st.next > 0 {
				wantNext = t0.Add(st.next)
			}
			if !d.NextAttemptAt.Equal(wantNext) {
				t.Errorf("step %d: %s next attempt at %v, want %v", i, d.EventType, d.NextAttemptAt, wantNext)
			}
		}
	}
	// The attempts were made at the schedule's times: +0, +1 min, +6 min.
	for _, d := range ts.Deliveries(mockserver.DeliveryFilter{}) {
		var got []time.Duration
		for _, a := range d.Attempts {
			got = append(got, a.ScheduledAt.Sub(t0))
		}
		if diff := cmp.Diff([]time.Duration{0, time.Minute, 6 * time.Minute}, got); diff != "" {
			t.Errorf("%s attempt times (-want +got):\n%s", d.EventType, diff)
		}
	}

	// fn ran three times per event (two failures, one success) and
	// handled each event exactly once.
	calls, handled := rcv.snapshot()
	wantCalls := map[string]int{events[0]: 3, events[1]: 3}
	if diff := cmp.Diff(wantCalls, calls); diff != "" {
		t.Errorf("calls of fn per event (-want +got):\n%s", diff)
	}
	slices.Sort(handled)
	want := slices.Sorted(slices.Values(events))
	if diff := cmp.Diff(want, handled); diff != "" {
		t.Errorf("handled events (-want +got):\n%s", diff)
	}

	// A manual redelivery of a handled event is acknowledged (200) without
	// calling fn: the handler deduplicates by event id.
	d := ts.Deliveries(mockserver.DeliveryFilter{EventID: events[0]})[0]
	redeliver := func(wantStatuses []int) {
		t.Helper()
		if _, err := ts.Redeliver(d.ID); err != nil {
			t.Fatalf("Redeliver: %v", err)
		}
		waitIdle(t, ts)
		got, _ := ts.Delivery(d.ID)
		if diff := cmp.Diff(wantStatuses, attemptStatuses(got)); diff != "" {
			t.Errorf("attempts after the redelivery (-want +got):\n%s", diff)
		}
		if calls, _ := rcv.snapshot(); calls[events[0]] != 3 {
			t.Errorf("fn called %d times for %s after its redelivery, want still 3", calls[events[0]], events[0])
		}
	}
	redeliver([]int{500, 500, 200, 200})

	// Nothing is left to send, however long one waits.
	clock.Advance(48 * time.Hour)
	waitIdle(t, ts)
	for _, d := range ts.Deliveries(mockserver.DeliveryFilter{}) {
		if d.State != mockserver.DeliverySucceeded || !d.NextAttemptAt.IsZero() {
			t.Errorf("%s after 48 h: state %s, next attempt %v", d.EventType, d.State, d.NextAttemptAt)
		}
	}
	// Sent again now, the event is older than the handler's replay window
	// (27 h): refused with 400, and fn is not called either.
	redeliver([]int{500, 500, 200, 200, 400})
}

// TestWebhookSecretRotation registers two webhooks whose deliveries are
// signed with the old secret: the receiver that lists both the new and the
// old secret verifies them; the one that already lists only the new secret
// answers 401, and the service retries later, with the new secret once the
// webhook's secret has been changed in place.
func TestWebhookSecretRotation(t *testing.T) {
	t.Parallel()
	const oldSecret, newSecret = "whsec_old_e2e", "whsec_new_e2e"
	clock := mockserver.NewFakeClock(t0)
	ts := mockserver.NewTestServer(t, mockserver.WithClock(clock))
	client := newClient(t, ts, "")
	ctx := context.Background()

	rotating := newCountingReceiver(0)
	rotated := newCountingReceiver(0)
	urls := map[string]string{
		"both secrets": startReceiver(t, newSecret, rotating.fn,
			contextsvc.WithWebhookSecrets(oldSecret), contextsvc.WithWebhookClock(clock.Now)),
		"new secret only": startReceiver(t, newSecret, rotated.fn, contextsvc.WithWebhookClock(clock.Now)),
	}
	hooks := map[string]string{} // name → webhook id
	for name, url := range urls {
		wh, err := client.Webhooks.Register(ctx, &contextsvc.RegisterWebhookRequest{
			URL: url, Events: []contextsvc.EventType{contextsvc.EventContextCreated}, Secret: oldSecret,
		})
		if err != nil {
			t.Fatal(err)
		}
		hooks[name] = wh.ID
	}
	if _, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Rotation"}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, ts)

	tests := []struct {
		name     string
		rcv      *countingReceiver
		statuses []int
		state    mockserver.DeliveryState
		handled  int
	}{
		{"both secrets", rotating, []int{http.StatusOK}, mockserver.DeliverySucceeded, 1},
		{"new secret only", rotated, []int{http.StatusUnauthorized}, mockserver.DeliveryPending, 0},
	}
	for _, tc := range tests {
		ds := ts.Deliveries(mockserver.DeliveryFilter{WebhookID: hooks[tc.name]})
		if len(ds) != 1 {
			t.Fatalf("%s: %d deliveries, want 1", tc.name, len(ds))
		}
		if diff := cmp.Diff(tc.statuses, attemptStatuses(ds[0])); diff != "" {
			t.Errorf("%s: attempts (-want +got):\n%s", tc.name, diff)
		}
		if ds[0].State != tc.state {
			t.Errorf("%s: state %s, want %s", tc.name, ds[0].State, tc.state)
		}
		calls, handled := tc.rcv.snapshot()
		if len(handled) != tc.handled || len(calls) != tc.handled {
			t.Errorf("%s: fn calls %v, handled %v; want %d", tc.name, calls, handled, tc.handled)
		}
		if tc.handled == 1 {
			if typ := tc.rcv.typeOf(handled[0]); typ != contextsvc.EventContextCreated {
				t.Errorf("%s: handled a %s event, want context.created", tc.name, typ)
			}
		}
	}

	// Once the webhook's secret is changed in place, its waiting retry is
	// signed with the new secret, and the receiver that lists only the new
	// secret verifies it: the same delivery, its second attempt.
	newS := newSecret
	if _, err := ts.UpdateWebhook(hooks["new secret only"], mockserver.WebhookUpdate{Secret: &newS}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	waitIdle(t, ts)
	ds := ts.Deliveries(mockserver.DeliveryFilter{WebhookID: hooks["new secret only"]})
	if len(ds) != 1 || ds[0].State != mockserver.DeliverySucceeded {
		t.Fatalf("the retry after the secret changed: %+v, want one delivery, succeeded", ds)
	}
	if diff := cmp.Diff([]int{http.StatusUnauthorized, http.StatusOK}, attemptStatuses(ds[0])); diff != "" {
		t.Errorf("attempts (-want +got):\n%s", diff)
	}
	// Later events are signed with the new secret too.
	if _, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "After the rotation"}); err != nil {
		t.Fatal(err)
	}
	waitIdle(t, ts)
	if calls, handled := rotated.snapshot(); len(handled) != 2 || len(calls) != 2 {
		t.Errorf("the new-secret receiver: calls %v, handled %v; want both creations, once each", calls, handled)
	}
	if n := len(ts.Webhooks()); n != 2 {
		t.Errorf("%d webhooks, want the two registered: a rotation registers none", n)
	}
}
