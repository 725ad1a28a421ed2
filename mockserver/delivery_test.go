package mockserver

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery"
)

// TestDeliveryJSON checks the admin API's field names.
func TestDeliveryJSON(t *testing.T) {
	t.Parallel()
	dl := Delivery{
		ID: "dlv_1", EventID: "evt_1", EventType: contextsvc.EventContextCreated, WebhookID: "wh_1", Account: "acme",
		URL: "https://example.com/hook", State: DeliveryPending, CreatedAt: dlvT0, NextAttemptAt: dlvT0.Add(time.Minute),
		Attempts: []DeliveryAttempt{{Number: 1, ScheduledAt: dlvT0, StartedAt: dlvT0, Duration: time.Millisecond,
			StatusCode: 500, Error: "receiver answered 500 Internal Server Error", ResponseSnippet: "oops",
			TraceID: "4bf92f3577b34da6a3ce929d0e0e4736"}},
	}
	b, err := json.Marshal(dl)
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"id": "dlv_1", "eventId": "evt_1", "eventType": "context.created", "webhookId": "wh_1", "account": "acme",
		"url": "https://example.com/hook", "state": "pending", "createdAt": "2026-11-21T12:00:00.000Z",
		"nextAttemptAt": "2026-11-21T12:01:00.000Z",
		"attempts": []any{map[string]any{"number": 1.0, "scheduledAt": "2026-11-21T12:00:00.000Z", "startedAt": "2026-11-21T12:00:00.000Z",
			"durationNs": 1e6, "statusCode": 500.0, "error": "receiver answered 500 Internal Server Error", "responseSnippet": "oops",
			"traceId": "4bf92f3577b34da6a3ce929d0e0e4736"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JSON (-want +got):\n%s", diff)
	}
	// Times are cut to milliseconds, in UTC, as everywhere in the API.
	at := time.Date(2026, 11, 21, 13, 0, 0, 123456789, time.FixedZone("CET", 3600))
	b, _ = json.Marshal(Delivery{CreatedAt: at, Attempts: []DeliveryAttempt{{Number: 1, ScheduledAt: at, StartedAt: at}}})
	if s := string(b); strings.Count(s, `"2026-11-21T12:00:00.123Z"`) != 3 {
		t.Errorf("times in %s", s)
	}
	var back Delivery
	if err := json.Unmarshal(b, &back); err != nil || !back.CreatedAt.Equal(at.Truncate(time.Millisecond)) {
		t.Errorf("decoded back: %v %v", back.CreatedAt, err)
	}
	// The trace id decodes back too.
	b, _ = json.Marshal(dl)
	if err := json.Unmarshal(b, &back); err != nil || back.Attempts[0].TraceID != dl.Attempts[0].TraceID {
		t.Errorf("decoded back: %+v %v", back.Attempts, err)
	}
	// A finished delivery has no nextAttemptAt and an empty attempts list.
	b, _ = json.Marshal(Delivery{State: DeliverySucceeded})
	if s := string(b); strings.Contains(s, "nextAttemptAt") || !strings.Contains(s, `"attempts":[]`) {
		t.Errorf("JSON %s", s)
	}
}

// ExampleDefaultRetrySchedule shows when the six attempts of a delivery
// whose receiver keeps failing are made, counted from the event.
func ExampleDefaultRetrySchedule() {
	var at time.Duration
	fmt.Println("attempt 1 at +0s")
	for i, delay := range DefaultRetrySchedule() {
		at += delay // each delay counts from the failed attempt before it
		fmt.Printf("attempt %d at +%v\n", i+2, at)
	}
	// Output:
	// attempt 1 at +0s
	// attempt 2 at +1m0s
	// attempt 3 at +6m0s
	// attempt 4 at +36m0s
	// attempt 5 at +2h36m0s
	// attempt 6 at +26h36m0s
}

// TestHistoryDefaultIsTheEngines: the documented history limit is the one
// the delivery engine keeps finished deliveries to when given none (the
// other delivery defaults are the engine's own constants, re-exported).
func TestHistoryDefaultIsTheEngines(t *testing.T) {
	t.Parallel()
	if DefaultHistoryLimit != delivery.DefaultHistory {
		t.Errorf("DefaultHistoryLimit is %d, the engine's default %d", DefaultHistoryLimit, delivery.DefaultHistory)
	}
}
