package mockserver_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// serve sends one /v1 request to srv without a network.
func serve(srv *mockserver.Server, method, path, body string) int {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+srv.DefaultKey().Token)
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	return rec.Code
}

// An advance of the fake clock runs every attempt that falls due within
// it, each at its due time, the retries those schedule included: one
// advance of 27 hours takes a delivery to a receiver that always fails
// through its whole schedule. Nothing sleeps.
func ExampleFakeClock_Advance() {
	start := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	clock := mockserver.NewFakeClock(start)
	srv := mockserver.New(mockserver.WithClock(clock))
	defer srv.Close(context.Background())
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusServiceUnavailable) // always down
	}))
	defer receiver.Close()
	serve(srv, "POST", "/v1/webhooks", `{"url":"`+receiver.URL+`","events":["context.created"],"secret":"whsec_example"}`)
	serve(srv, "POST", "/v1/contexts", `{"name":"Runbook"}`)

	clock.Advance(27 * time.Hour) // returns once every attempt due has run
	dl := srv.Deliveries(mockserver.DeliveryFilter{})[0]
	for _, a := range dl.Attempts {
		fmt.Println(a.Number, "at", a.StartedAt.Sub(start), a.StatusCode)
	}
	fmt.Println(dl.State)
	// Output:
	// 1 at 0s 503
	// 2 at 1m0s 503
	// 3 at 6m0s 503
	// 4 at 36m0s 503
	// 5 at 2h36m0s 503
	// 6 at 26h36m0s 503
	// failed
}

// Attempts that are due now (an event's first) run without an advance:
// WaitIdle waits for them. An advance runs those due on the way.
func ExampleServer_WaitIdle() {
	start := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	clock := mockserver.NewFakeClock(start)
	srv := mockserver.New(mockserver.WithClock(clock))
	defer srv.Close(context.Background())

	var calls atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if _, err := contextsvc.ConstructEventWithOptions(body, r.Header.Get("X-Service-Signature"), []string{"whsec_example"},
			contextsvc.WithEventClock(clock.Now)); err != nil { // the replay window on the mock's clock
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if calls.Add(1) < 3 { // fail twice, then accept
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer receiver.Close()

	serve(srv, "POST", "/v1/webhooks", `{"url":"`+receiver.URL+`","events":["context.created"],"secret":"whsec_example"}`)
	serve(srv, "POST", "/v1/contexts", `{"name":"Runbook"}`)

	_ = srv.WaitIdle(context.Background()) // the first attempt, at +0
	clock.Advance(time.Hour)               // the retries at +1m and +6m
	dl := srv.Deliveries(mockserver.DeliveryFilter{})[0]
	fmt.Println(dl.State)
	for _, a := range dl.Attempts {
		fmt.Println(a.Number, a.ScheduledAt.Sub(start), a.StatusCode)
	}
	// Output:
	// succeeded
	// 1 0s 503
	// 2 1m0s 503
	// 3 6m0s 200
}

// A fault makes the next matching requests fail, to test a client's retries.
func ExampleServer_AddFault() {
	srv := mockserver.New()
	defer srv.Close(context.Background())
	_ = srv.AddFault(mockserver.Fault{Method: "GET", Path: "/v1/contexts", Status: 503, RetryAfter: 2 * time.Second, Times: 2})
	for range 3 {
		fmt.Println(serve(srv, "GET", "/v1/contexts", ""))
	}
	// Output:
	// 503
	// 503
	// 200
}

// EmitEvent fires the events no public endpoint fires.
func ExampleServer_EmitEvent() {
	srv := mockserver.New()
	defer srv.Close(context.Background())
	ev, err := srv.EmitEvent(context.Background(), "", contextsvc.EventTeamMemberAdded,
		[]byte(`{"teamId":"team_1","userId":"user_1","role":"editor"}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(ev.Type, string(ev.Data))
	// Output: team.member.added {"teamId":"team_1","userId":"user_1","role":"editor"}
}

// WaitForDelivery blocks until a delivery matches, here the first one to
// succeed: no polling, no sleep.
func ExampleServer_WaitForDelivery() {
	srv := mockserver.New()
	defer srv.Close(context.Background())
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ev, err := contextsvc.ConstructEvent(body, r.Header.Get("X-Service-Signature"), "whsec_wait")
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		fmt.Println("received", ev.Type)
	}))
	defer receiver.Close()
	serve(srv, "POST", "/v1/webhooks", `{"url":"`+receiver.URL+`","events":["context.created"],"secret":"whsec_wait"}`)
	serve(srv, "POST", "/v1/contexts", `{"name":"Runbook"}`)

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	succeeded := mockserver.DeliveryFilter{State: mockserver.DeliverySucceeded}
	dl, err := srv.WaitForDelivery(ctx, succeeded.Match)
	if err != nil {
		panic(err)
	}
	fmt.Println(dl.EventType, dl.State, len(dl.Attempts))
	// Output:
	// received context.created
	// context.created succeeded 1
}

// A delivery whose attempts all failed is kept as failed and can be sent
// again by hand; its attempt numbers go on.
func ExampleServer_Redeliver() {
	clock := mockserver.NewFakeClock(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
	// No retries: one failed attempt makes the delivery failed.
	srv := mockserver.New(mockserver.WithClock(clock), mockserver.WithRetrySchedule([]time.Duration{}))
	defer srv.Close(context.Background())
	var calls atomic.Int32
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer receiver.Close()
	serve(srv, "POST", "/v1/webhooks", `{"url":"`+receiver.URL+`","events":["context.created"],"secret":"whsec_re"}`)
	serve(srv, "POST", "/v1/contexts", `{"name":"Runbook"}`)

	ctx := context.Background()
	_ = srv.WaitIdle(ctx)
	failed := srv.Deliveries(mockserver.DeliveryFilter{State: mockserver.DeliveryFailed})[0]
	fmt.Println(failed.State, failed.Attempts[0].StatusCode)

	if _, err := srv.Redeliver(failed.ID); err != nil {
		panic(err)
	}
	_ = srv.WaitIdle(ctx)
	dl, _ := srv.Delivery(failed.ID)
	for _, a := range dl.Attempts {
		fmt.Println(a.Number, a.StatusCode)
	}
	fmt.Println(dl.State)
	// Output:
	// failed 500
	// 1 500
	// 2 200
	// succeeded
}

// A receiver in the same test as a server on a fake clock reads the
// server's clock (contextsvc.WithWebhookClock(clock.Now)), so its replay
// window follows the fake time. Once the clock is a day ahead of real
// time, a receiver on the real clock refuses every delivery as "in the
// future" (400).
func ExampleFakeClock_receiver() {
	clock := mockserver.NewFakeClock(time.Now())
	srv := mockserver.New(mockserver.WithClock(clock), mockserver.WithRetrySchedule([]time.Duration{}))
	defer srv.Close(context.Background())

	handle := func(context.Context, *contextsvc.Event) error { return nil }
	receivers := map[string]string{}
	for name, opts := range map[string][]contextsvc.WebhookOption{
		"on the server's clock": {contextsvc.WithWebhookClock(clock.Now)},
		"on the real clock":     nil,
	} {
		h, err := contextsvc.NewWebhookHandler("whsec_clock", handle, opts...)
		if err != nil {
			panic(err)
		}
		rs := httptest.NewServer(h)
		defer rs.Close()
		receivers[rs.URL] = name
		serve(srv, "POST", "/v1/webhooks", `{"url":"`+rs.URL+`","events":["context.created"],"secret":"whsec_clock"}`)
	}

	clock.Advance(24 * time.Hour) // the events are stamped a day ahead
	serve(srv, "POST", "/v1/contexts", `{"name":"Tomorrow"}`)
	_ = srv.WaitIdle(context.Background())

	var lines []string
	for _, d := range srv.Deliveries(mockserver.DeliveryFilter{}) {
		lines = append(lines, fmt.Sprintf("receiver %s: %s %d", receivers[d.URL], d.State, d.Attempts[0].StatusCode))
	}
	slices.Sort(lines)
	fmt.Println(strings.Join(lines, "\n"))
	// Output:
	// receiver on the real clock: failed 400
	// receiver on the server's clock: succeeded 200
}

// A webhook's secret is rotated in place: the receiver accepts the new
// secret and the old one while the webhook changes over, so no attempt is
// refused, and there is still one webhook, so no event arrives twice.
func ExampleServer_UpdateWebhook() {
	srv := mockserver.New()
	defer srv.Close(context.Background())
	ctx := context.Background()
	oldSecret, newSecret := "whsec_old", "whsec_new"

	var handled atomic.Int32
	handle := func(context.Context, *contextsvc.Event) error { handled.Add(1); return nil }
	// Step 1: the receiver verifies with the new secret and, for now, the old one.
	receiver, err := contextsvc.NewWebhookHandler(newSecret, handle, contextsvc.WithWebhookSecrets(oldSecret))
	if err != nil {
		panic(err)
	}
	rs := httptest.NewServer(receiver)
	defer rs.Close()
	serve(srv, "POST", "/v1/webhooks", `{"url":"`+rs.URL+`","events":["context.created"],"secret":"`+oldSecret+`"}`)
	hookID := srv.Webhooks()[0].ID
	serve(srv, "POST", "/v1/contexts", `{"name":"Before"}`) // signed with the old secret
	_ = srv.WaitIdle(ctx)

	// Step 2: the webhook's secret changes in place (PATCH /_mock/webhooks/{id}).
	_, err = srv.UpdateWebhook(hookID, mockserver.WebhookUpdate{Secret: &newSecret})
	if err != nil {
		panic(err)
	}
	serve(srv, "POST", "/v1/contexts", `{"name":"After"}`) // signed with the new secret
	_ = srv.WaitIdle(ctx)

	for _, d := range srv.Deliveries(mockserver.DeliveryFilter{}) {
		fmt.Println(d.State, d.Attempts[0].StatusCode)
	}
	fmt.Println(len(srv.Webhooks()), "webhook,", handled.Load(), "events handled")
	// Step 3, once no attempt signed with the old secret can arrive: the
	// receiver drops it, NewWebhookHandler(newSecret, handle).

	// Output:
	// succeeded 200
	// succeeded 200
	// 1 webhook, 2 events handled
}
