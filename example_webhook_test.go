package contextsvc_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// A receiver checks a delivery's X-Service-Signature header against its
// secret. Sign makes the header, for tests.
func ExampleVerifySignature() {
	payload := []byte(`{"id":"evt_1","type":"context.created","timestamp":"2026-11-21T20:51:00.123Z","data":{}}`)
	header := contextsvc.Sign(payload, "whsec_example")

	fmt.Println(contextsvc.VerifySignature(payload, header, "whsec_example"))

	// During a rotation, accept the new and the old secret.
	fmt.Println(contextsvc.VerifySignature(payload, header, "whsec_new", "whsec_example"))

	err := contextsvc.VerifySignature(payload, header, "whsec_wrong")
	fmt.Println(errors.Is(err, contextsvc.ErrInvalidSignature), errors.Is(err, contextsvc.ErrSignatureMismatch))
	// Output:
	// <nil>
	// <nil>
	// true true
}

// Sign gives the header for GitHub's published test vector, which uses
// the same "sha256=" HMAC-SHA256 construction.
func ExampleSign() {
	fmt.Println(contextsvc.Sign([]byte("Hello, World!"), "It's a Secret to Everybody"))
	// Output: sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17
}

// ConstructEvent verifies, then parses, then checks the event's age
// against the replay window; the typed data of an event comes from a type
// switch on Go types.
func ExampleConstructEvent() {
	payload := fmt.Appendf(nil, `{"id":"evt_2","type":"context.updated","timestamp":%q,`+
		`"data":{"contextId":"ctx_1","name":"Runbook","version":3,"updatedBy":"user_1",`+
		`"changes":{"sections_modified":["Rollback"],"word_count_delta":42}}}`, time.Now().UTC().Format(time.RFC3339Nano))
	header := contextsvc.Sign(payload, "whsec_example") // in a receiver: r.Header.Get("X-Service-Signature")

	ev, err := contextsvc.ConstructEvent(payload, header, "whsec_example")
	if err != nil {
		log.Fatal(err)
	}
	data, err := ev.ParseData()
	if err != nil {
		log.Fatal(err)
	}
	switch d := data.(type) {
	case *contextsvc.ContextUpdatedData:
		fmt.Println(ev.ID, d.ContextID, "v", d.Version, d.Changes.SectionsModified, d.Changes.WordCountDelta)
	case *contextsvc.ContextDeletedData:
		fmt.Println("deleted", d.ContextID)
	default:
		fmt.Println("not handled:", ev.Type)
	}
	// Output: evt_2 ctx_1 v 3 [Rollback] 42
}

// A validly signed event older than the replay window (27 h) is refused:
// a captured delivery sent again. ConstructEventWithOptions changes the
// window, or the clock it is measured on (a mock server's fake clock, say).
func ExampleConstructEventWithOptions() {
	payload := []byte(`{"id":"evt_5","type":"context.deleted","timestamp":"2026-11-19T12:00:00Z",` +
		`"data":{"contextId":"ctx_1","name":"Old","deletedBy":"user_1"}}`)
	header := contextsvc.Sign(payload, "whsec_example")
	secrets := []string{"whsec_example"}
	now := func() time.Time { return time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC) } // 48 h after the event

	_, err := contextsvc.ConstructEventWithOptions(payload, header, secrets, contextsvc.WithEventClock(now))
	fmt.Println(errors.Is(err, contextsvc.ErrOutsideReplayWindow))

	ev, err := contextsvc.ConstructEventWithOptions(payload, header, secrets, contextsvc.WithEventClock(now),
		contextsvc.WithEventReplayWindow(72*time.Hour, contextsvc.DefaultFutureSkew))
	fmt.Println(ev.ID, err)
	// Output:
	// true
	// evt_5 <nil>
}

// A typed accessor reads one type's data and refuses other types.
func ExampleEvent_ContextUpdated() {
	ev := &contextsvc.Event{ID: "evt_3", Type: contextsvc.EventContextDeleted}
	_, err := ev.ContextUpdated()
	fmt.Println(errors.Is(err, contextsvc.ErrEventTypeMismatch))
	// Output: true
}

// Mounting the handler: every delivery is verified, checked against the
// replay window and deduplicated before the function sees it.
func ExampleNewWebhookHandler() {
	handle := func(ctx context.Context, ev *contextsvc.Event) error {
		fmt.Println("handling", ev.Type, ev.ID)
		return nil // an error answers 500, so the service retries
	}
	h, err := contextsvc.NewWebhookHandler("whsec_example", handle)
	if err != nil {
		log.Fatal(err) // an empty secret (an unset variable) or a bad option
	}
	mux := http.NewServeMux()
	mux.Handle("/webhooks/contextsvc", h)
	srv := httptest.NewServer(mux) // in production: an http.Server with time-outs (next example)
	defer srv.Close()

	body := fmt.Sprintf(`{"id":"evt_4","type":"context.deleted","timestamp":%q,"data":{"contextId":"ctx_1","name":"Old","deletedBy":"user_1"}}`,
		time.Now().UTC().Format(time.RFC3339Nano))
	for range 2 { // the second delivery of the same event is acknowledged, not handled
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/webhooks/contextsvc", strings.NewReader(body))
		req.Header.Set("X-Service-Signature", contextsvc.Sign([]byte(body), "whsec_example"))
		resp, err := srv.Client().Do(req)
		if err != nil {
			log.Fatal(err)
		}
		resp.Body.Close()
		fmt.Println(resp.StatusCode)
	}
	// Output:
	// handling context.deleted evt_4
	// 200
	// 200
}

// In a program, the handler is mounted on an http.Server with time-outs:
// it listens to the whole internet, and http.ListenAndServe sets none. The
// handler bounds its body's size and time itself; the server bounds the
// headers, the answer and idle connections. (It listens on a port, so it
// has no output to check.)
func ExampleNewWebhookHandler_server() {
	handle := func(ctx context.Context, ev *contextsvc.Event) error {
		log.Printf("handling %s %s", ev.Type, ev.ID)
		return nil // an error answers 500, so the service retries
	}
	secret := os.Getenv("CONTEXTSVC_WEBHOOK_SECRET")
	h, err := contextsvc.NewWebhookHandler(secret, handle)
	if err != nil {
		log.Fatal(err) // no secret, or a bad option
	}
	mux := http.NewServeMux()
	mux.Handle("/webhooks/contextsvc", h)
	srv := &http.Server{
		Addr:              ":8080",
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,  // the request's headers
		ReadTimeout:       15 * time.Second, // headers and body
		WriteTimeout:      30 * time.Second, // from the headers to the end of the answer, handle included
		IdleTimeout:       time.Minute,      // a kept-alive connection between deliveries
	}
	log.Fatal(srv.ListenAndServe())
}

// A Deduper's claim belongs to the attempt that made it: Commit and
// Release take the token Claim returned, and another attempt's token
// changes nothing. The handler does this for you; a receiver that
// deduplicates by hand follows the same steps.
func ExampleMemoryDeduper() {
	ctx := context.Background()
	d, err := contextsvc.NewMemoryDeduper(contextsvc.DefaultMemoryDeduperSize)
	if err != nil {
		log.Fatal(err)
	}

	res, token, _ := d.Claim(ctx, "evt_1", 10*time.Minute)
	fmt.Println("first attempt:", res)
	res, _, _ = d.Claim(ctx, "evt_1", 10*time.Minute)
	fmt.Println("a copy meanwhile:", res)

	// A stale attempt's token neither releases nor commits the claim.
	fmt.Println("stale commit:", d.Commit(ctx, "evt_1", "stale-token", 27*time.Hour))

	// The first attempt handled the event: remember it for the window.
	_ = d.Commit(ctx, "evt_1", token, 27*time.Hour)
	res, _, _ = d.Claim(ctx, "evt_1", 10*time.Minute)
	fmt.Println("a retry later:", res)
	// Output:
	// first attempt: acquired
	// a copy meanwhile: busy
	// stale commit: contextsvc: the claim's lease lapsed and another attempt holds the event id: evt_1
	// a retry later: duplicate
}
