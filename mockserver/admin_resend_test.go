package mockserver

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery/deliverytest"
)

// TestAdminResendEvent: POST /_mock/events/{id}/resend makes a new
// delivery of a kept event, with its body as first sent and signed with
// the webhook's secret, to a webhook registered after the event too; a
// webhook that cannot take it is a 409 naming why, an unknown event or
// webhook a 404.
func TestAdminResendEvent(t *testing.T) {
	t.Parallel()
	ts, clock := newFakeTestServer(t, WithKey(Key{Token: "sk_test_main_account", Account: "main"}), WithKey(Key{Token: "sk_test_other_account", Account: "other"}))
	old := deliverytest.NewReceiver(t, clock, "old-secret", func(w http.ResponseWriter, r *http.Request, h deliverytest.Hit) {})
	oldHook := registerHook(t, ts, old.URL, "old-secret", contextsvc.EventContextCreated)
	c := create(t, ts, `{"name":"Doc"}`)
	idle(t, ts)
	evs := ts.Events()
	var ev Event
	for _, e := range evs {
		if e.Type == contextsvc.EventContextCreated {
			ev = e
		}
	}
	if ev.ID == "" || len(old.Got()) != 1 {
		t.Fatalf("events %+v, hits %d", evs, len(old.Got()))
	}

	// A webhook registered after the event: the event goes to it, as it
	// was first sent, signed with its own secret.
	fresh := deliverytest.NewReceiver(t, clock, "new-secret", func(w http.ResponseWriter, r *http.Request, h deliverytest.Hit) {})
	freshHook := registerHook(t, ts, fresh.URL, "new-secret", contextsvc.EventContextCreated, contextsvc.EventContextDeleted)
	r := admin(t, ts, "POST", "/_mock/events/"+ev.ID+"/resend", `{"webhookId":"`+freshHook+`"}`)
	var res struct{ Deliveries []Delivery }
	if r.Status != http.StatusCreated {
		t.Fatalf("resend: %d %s", r.Status, r.Body)
	}
	r.json(t, &res)
	if len(res.Deliveries) != 1 || res.Deliveries[0].WebhookID != freshHook || res.Deliveries[0].EventID != ev.ID || res.Deliveries[0].State != DeliveryPending {
		t.Fatalf("resend answered %+v", res.Deliveries)
	}
	idle(t, ts)
	if got := fresh.Got(); len(got) != 1 || !bytes.Equal(got[0].Body, ev.Body) || got[0].Header.Get("X-Service-Delivery") != res.Deliveries[0].ID ||
		got[0].Header.Get("X-Service-Delivery-Attempt") != "1" {
		t.Errorf("the new webhook got %d deliveries", len(got))
	}
	if len(old.Got()) != 1 {
		t.Errorf("the webhook not named got %d deliveries", len(old.Got()))
	}

	// Without webhookId (and without a body): every active webhook that
	// receives the type.
	r = admin(t, ts, "POST", "/_mock/events/"+ev.ID+"/resend", "")
	if r.Status != http.StatusCreated {
		t.Fatalf("resend to every webhook: %d %s", r.Status, r.Body)
	}
	r.json(t, &res)
	if len(res.Deliveries) != 2 {
		t.Errorf("resend to every webhook made %d deliveries", len(res.Deliveries))
	}
	idle(t, ts)
	if len(old.Got()) != 2 || len(fresh.Got()) != 2 {
		t.Errorf("hits: %d and %d", len(old.Got()), len(fresh.Got()))
	}

	// What cannot be sent.
	r = do(t, ts, call{method: "POST", path: "/v1/webhooks", key: "sk_test_other_account",
		body: `{"url":"` + old.URL + `","events":["context.created"],"secret":"s"}`})
	var other struct{ ID string }
	r.json(t, &other)
	otherHook := other.ID
	if r := do(t, ts, call{method: "DELETE", path: "/v1/contexts/" + c.ID}); r.Status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	deletedEvent := ""
	for _, e := range ts.Events() {
		if e.Type == contextsvc.EventContextDeleted {
			deletedEvent = e.ID
		}
	}
	inactive := false
	if _, err := ts.UpdateWebhook(oldHook, WebhookUpdate{Active: &inactive}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		event, body string
		status      int
		param, msg  string
	}{
		{"evt_missing", "", 404, "", "no kept event"},
		{ev.ID, `{"webhookId":"wh_missing"}`, 404, "", "wh_missing"},
		{ev.ID, `{"webhookId":"` + otherHook + `"}`, 409, "", `is of account \"other\", the event of account \"main\"`},
		{ev.ID, `{"webhookId":"` + oldHook + `"}`, 409, "", "is inactive"},
		{deletedEvent, `{"webhookId":"` + oldHook + `"}`, 409, "", "is inactive"},
		{ev.ID, `{"webhookId":""}`, 400, "webhookId", "webhookId must be a webhook's id"},
		{ev.ID, `{"webhook":"x"}`, 400, "webhook", ""},
		{ev.ID, `[]`, 400, "", "JSON object"},
	} {
		r := admin(t, ts, "POST", "/_mock/events/"+tt.event+"/resend", tt.body)
		typ, param := r.errorOf(t)
		if r.Status != tt.status || param != tt.param || !strings.Contains(string(r.Body), tt.msg) || (tt.status == 409 && typ != "conflict") {
			t.Errorf("resend %s %s: %d %s", tt.event, tt.body, r.Status, r.Body)
		}
	}
	// A webhook that does not receive the type; none at all that does.
	if r := admin(t, ts, "POST", "/_mock/events/"+deletedEvent+"/resend", ""); r.Status != 201 {
		t.Errorf("context.deleted to the webhook that receives it: %d %s", r.Status, r.Body)
	}
	onlyCreated := registerHook(t, ts, old.URL, "s", contextsvc.EventContextCreated)
	if r := admin(t, ts, "POST", "/_mock/events/"+deletedEvent+"/resend", `{"webhookId":"`+onlyCreated+`"}`); r.Status != 409 || !strings.Contains(string(r.Body), "does not receive context.deleted") {
		t.Errorf("to a webhook without the type: %d %s", r.Status, r.Body)
	}
	emitted := admin(t, ts, "POST", "/_mock/events", `{"type":"team.member.added","data":{"teamId":"team_x","userId":"user_x","role":"editor"}}`)
	var team Event
	emitted.json(t, &team)
	if r := admin(t, ts, "POST", "/_mock/events/"+team.ID+"/resend", ""); r.Status != 409 || !strings.Contains(string(r.Body), `no active webhook of account \"main\" receives team.member.added`) {
		t.Errorf("no webhook to send to: %d %s", r.Status, r.Body)
	}
}
