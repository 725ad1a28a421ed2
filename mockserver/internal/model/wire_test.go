package model

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/shapetest"
)

// TestAdminShapesFollowTheWire: what the admin API shows of a webhook and
// of an event is the contract's object with the account (and the event's
// chaos ordinal) added, and a delivery and its attempts are written under
// the names their public types decode, so a field added to or renamed in
// a definition fails here until the shapes that show it follow.
func TestAdminShapesFollowTheWire(t *testing.T) {
	t.Parallel()
	account := shapetest.Field{Name: "account", Type: "string"}
	for _, tc := range []struct {
		name      string
		got, want []shapetest.Field
	}{
		{"webhook", shapetest.Fields[webhookJSON](), shapetest.Insert(shapetest.Fields[WebhookJSON](), "id", account)},
		{"event", shapetest.Fields[eventJSON](), shapetest.Insert(shapetest.Insert(shapetest.Fields[EventJSON](), "timestamp", account),
			"data", shapetest.Field{Name: "chaosOrdinal", Type: "uint64"})},
	} {
		if diff := cmp.Diff(tc.want, tc.got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	// Written with their times formatted, read back by the public types'
	// own tags.
	for _, tc := range []struct {
		name      string
		got, want []string
	}{
		{"delivery", shapetest.Names(shapetest.Fields[deliveryJSON]()), shapetest.Names(shapetest.Fields[Delivery]())},
		{"attempt", shapetest.Names(shapetest.Fields[attemptJSON]()), shapetest.Names(shapetest.Fields[DeliveryAttempt]())},
	} {
		if diff := cmp.Diff(tc.want, tc.got); diff != "" {
			t.Errorf("%s (-decoded +written):\n%s", tc.name, diff)
		}
	}
}

// TestAdminJSONReadsBack: a webhook, an event and a delivery, every field
// set, are what the default decoding makes of their JSON (the times cut
// to milliseconds): no field is written under a name it is not read by.
func TestAdminJSONReadsBack(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 21, 20, 51, 0, 123_000_000, time.UTC)
	wh := Webhook{ID: "wh_1", Account: "acme", URL: "https://example.com/in", Events: []contextsvc.EventType{contextsvc.EventContextCreated},
		CreatedAt: at, Active: true}
	ev := Event{ID: "evt_1", Type: contextsvc.EventContextDeleted, Timestamp: at, Account: "acme", Data: json.RawMessage(`{"contextId":"ctx_1"}`),
		ChaosOrdinal: 3}
	dl := Delivery{ID: "dlv_1", EventID: "evt_1", EventType: contextsvc.EventContextCreated, WebhookID: "wh_1", Account: "acme",
		URL: "https://example.com/in", State: DeliveryFailed, FailureReason: "webhook deleted", NextAttemptAt: at.Add(time.Second), CreatedAt: at,
		Attempts: []DeliveryAttempt{{Number: 1, ScheduledAt: at, StartedAt: at.Add(time.Millisecond), Duration: time.Second, StatusCode: 503,
			Error: "receiver answered 503", ResponseSnippet: "busy", TraceID: "4bf92f3577b34da6a3ce929d0e0e4736",
			Chaos: ChaosEffect{Action: ChaosHeld, Delay: time.Minute}}}}
	check := func(name string, v, back any, want any) {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, back); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(want, back); diff != "" {
			t.Errorf("%s read back from %s (-want +got):\n%s", name, b, diff)
		}
	}
	check("webhook", wh, new(Webhook), &wh)
	// An event's Body is the envelope a delivery signs, not shown.
	check("event", ev, new(Event), &ev)
	check("delivery", dl, new(Delivery), &dl)
}
