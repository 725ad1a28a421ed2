package mockserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery/deliverytest"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// webhookPage is the admin list's body.
type webhookListPage struct {
	Data       []Webhook
	HasMore    bool
	NextCursor *string
}

// TestAdminWebhooks lists, reads, changes and deletes webhooks of two
// accounts through /_mock/webhooks, and holds every answer to what the Go
// methods say.
func TestAdminWebhooks(t *testing.T) {
	t.Parallel()
	ts, _ := newFakeTestServer(t, WithKey(Key{Token: "sk_acme", Account: "acme"}), WithKey(Key{Token: "sk_globex", Account: "globex"}))
	register := func(key, url, secret string, events ...string) string {
		t.Helper()
		b, _ := json.Marshal(map[string]any{"url": url, "events": events, "secret": secret})
		r := do(t, ts, call{method: "POST", path: "/v1/webhooks", body: string(b), key: key})
		if r.Status != http.StatusCreated {
			t.Fatalf("register: %d %s", r.Status, r.Body)
		}
		var wh model.WebhookJSON
		r.json(t, &wh)
		return wh.ID
	}
	var ids []string // in registration order
	for i := range 5 {
		key := "sk_acme"
		if i%2 == 1 {
			key = "sk_globex"
		}
		ids = append(ids, register(key, fmt.Sprintf("https://hooks.example.com/%d", i), fmt.Sprintf("whsec_secret_%d", i), "context.created"))
	}

	// Paged in registration order, across accounts; never a secret.
	var got []Webhook
	path := "/_mock/webhooks?limit=2"
	for pages := 0; ; pages++ {
		r := admin(t, ts, "GET", path, "")
		if r.Status != 200 || strings.Contains(string(r.Body), "whsec_") {
			t.Fatalf("list: %d %s", r.Status, r.Body)
		}
		var page webhookListPage
		r.json(t, &page)
		got = append(got, page.Data...)
		if !page.HasMore {
			if page.NextCursor != nil || pages != 2 {
				t.Errorf("last page %d: cursor %v", pages, page.NextCursor)
			}
			break
		}
		path = "/_mock/webhooks?limit=2&cursor=" + *page.NextCursor
	}
	var gotIDs []string
	for _, w := range got {
		gotIDs = append(gotIDs, w.ID)
		if want, _ := ts.Webhook(w.ID); !cmp.Equal(want, w) {
			t.Errorf("listed %+v, Webhook says %+v", w, want)
		}
	}
	if diff := cmp.Diff(ids, gotIDs); diff != "" {
		t.Errorf("listed ids (-registered +listed):\n%s", diff)
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"?account=globex", []string{ids[1], ids[3]}},
		{"?account=acme&limit=1&cursor=" + ts.svc.Cursors.Encode(httpapi.CursorWebhooks, webhookSeq(t, ts, ids[0]), httpapi.ListScope("acme")), []string{ids[2]}},
		{"?account=nobody", nil},
	} {
		var page webhookListPage
		admin(t, ts, "GET", "/_mock/webhooks"+tc.query, "").json(t, &page)
		var got []string
		for _, w := range page.Data {
			got = append(got, w.ID)
		}
		if !slices.Equal(got, tc.want) || page.Data == nil {
			t.Errorf("%s: %v, want %v", tc.query, got, tc.want)
		}
	}
	if diff := cmp.Diff([]string{ids[1], ids[3]}, idsOf(ts.AccountWebhooks("globex"))); diff != "" {
		t.Errorf("AccountWebhooks (-want +got):\n%s", diff)
	}
	for _, q := range []string{"?account=", "?account=a/b", "?account=acme&account=globex", "?cursor=" + ts.svc.Cursors.Encode(httpapi.CursorDeliveries, 1, httpapi.ListScope("")), "?account=globex&cursor=" + ts.svc.Cursors.Encode(httpapi.CursorWebhooks, 1, httpapi.ListScope("acme"))} {
		r := admin(t, ts, "GET", "/_mock/webhooks"+q, "")
		if typ, _ := r.errorOf(t); r.Status != 400 || typ != "invalid_request" {
			t.Errorf("%s: %d %s", q, r.Status, r.Body)
		}
	}

	// One webhook.
	var one Webhook
	admin(t, ts, "GET", "/_mock/webhooks/"+ids[0], "").json(t, &one)
	want := Webhook{ID: ids[0], Account: "acme", URL: "https://hooks.example.com/0", Events: []contextsvc.EventType{"context.created"}, CreatedAt: dlvT0, Active: true}
	if diff := cmp.Diff(want, one); diff != "" {
		t.Errorf("GET (-want +got):\n%s", diff)
	}
	if r := admin(t, ts, "GET", "/_mock/webhooks/wh_missing", ""); r.Status != 404 {
		t.Errorf("GET missing: %d", r.Status)
	}

	// PATCH changes what it names and keeps the rest.
	r := admin(t, ts, "PATCH", "/_mock/webhooks/"+ids[0], `{"url":"http://127.0.0.1:9/moved","events":["context.updated","context.deleted","context.updated"],"active":false,"secret":"whsec_rotated"}`)
	if r.Status != 200 || strings.Contains(string(r.Body), "whsec_") {
		t.Fatalf("PATCH: %d %s", r.Status, r.Body)
	}
	r.json(t, &one)
	want.URL, want.Events, want.Active = "http://127.0.0.1:9/moved", []contextsvc.EventType{"context.updated", "context.deleted"}, false
	if diff := cmp.Diff(want, one); diff != "" {
		t.Errorf("PATCH (-want +got):\n%s", diff)
	}
	if w, _ := ts.Webhook(ids[0]); !cmp.Equal(want, w) {
		t.Errorf("after PATCH Webhook says %+v", w)
	}
	hook, _ := ts.svc.Store.Webhook(ids[0])
	secret := hook.State().Secret
	if secret != "whsec_rotated" {
		t.Errorf("secret after PATCH: %q", secret)
	}
	admin(t, ts, "PATCH", "/_mock/webhooks/"+ids[0], `{"active":true}`).json(t, &one)
	if want.Active = true; !cmp.Equal(want, one) {
		t.Errorf("reactivated: %+v", one)
	}

	// Refused changes change nothing, and never repeat a secret.
	before := ts.Webhooks()
	for _, tc := range []struct {
		name, id, body, param string
		status                int
	}{
		{"empty object", ids[0], `{}`, "", 400},
		{"not an object", ids[0], `["active"]`, "", 400},
		{"unknown field", ids[0], `{"active":true,"name":"x"}`, "name", 400},
		{"null", ids[0], `{"url":null}`, "url", 400},
		{"http to a public host", ids[0], `{"url":"http://example.com/h"}`, "url", 400},
		{"no events", ids[0], `{"events":[]}`, "events", 400},
		{"unknown event", ids[0], `{"events":["context.archived"]}`, "events", 400},
		{"active not a boolean", ids[0], `{"active":"false"}`, "active", 400},
		{"empty secret", ids[0], `{"secret":""}`, "secret", 400},
		{"long secret", ids[0], `{"secret":"whsec_` + strings.Repeat("x", 251) + `"}`, "secret", 400},
		{"secret with a control character", ids[0], `{"secret":"whsec_bad\u0007"}`, "secret", 400},
		{"bad body for a missing id", "wh_missing", `{"active":"yes"}`, "active", 400},
		{"missing id", "wh_missing", `{"active":true}`, "", 404},
	} {
		r := admin(t, ts, "PATCH", "/_mock/webhooks/"+tc.id, tc.body)
		typ, param := r.errorOf(t)
		if r.Status != tc.status || param != tc.param || (tc.status == 400 && typ != "invalid_request") {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Body)
		}
		if strings.Contains(string(r.Body), "whsec_") {
			t.Errorf("%s: the answer shows the secret: %s", tc.name, r.Body)
		}
	}
	if diff := cmp.Diff(before, ts.Webhooks()); diff != "" {
		t.Errorf("refused changes changed the webhooks (-before +after):\n%s", diff)
	}

	// DELETE, then the id is gone everywhere.
	r = admin(t, ts, "DELETE", "/_mock/webhooks/"+ids[1], "")
	if r.Status != 200 || string(r.Body) != `{"id":"`+ids[1]+`","deleted":true}` {
		t.Fatalf("DELETE: %d %s", r.Status, r.Body)
	}
	for _, c := range []struct{ method, body string }{{"GET", ""}, {"PATCH", `{"active":true}`}, {"DELETE", ""}} {
		if r := admin(t, ts, c.method, "/_mock/webhooks/"+ids[1], c.body); r.Status != 404 {
			t.Errorf("%s after DELETE: %d", c.method, r.Status)
		}
	}
	if diff := cmp.Diff([]string{ids[0], ids[2], ids[4], ids[3]}, idsOf(ts.Webhooks())); diff != "" { // by account, then registration
		t.Errorf("after DELETE (-want +got):\n%s", diff)
	}
	if _, ok := ts.Webhook(ids[1]); ok || !errors.Is(ts.DeleteWebhook(ids[1]), ErrWebhookNotFound) {
		t.Error("the deleted webhook is still there for the Go methods")
	}

	for _, tc := range []struct{ method, path, allow string }{
		{"PUT", "/_mock/webhooks/" + ids[0], "GET, PATCH, DELETE"},
		{"POST", "/_mock/webhooks", "GET"},
	} {
		if r := admin(t, ts, tc.method, tc.path, ""); r.Status != 405 || r.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d Allow %q", tc.method, tc.path, r.Status, r.Header.Get("Allow"))
		}
	}
}

// webhookSeq returns the registration position of a webhook, for a cursor
// a test mints.
func webhookSeq(t *testing.T, ts *TestServer, id string) uint64 {
	t.Helper()
	w, _ := ts.svc.Store.Webhook(id)
	return w.Seq()
}

func idsOf(ws []Webhook) []string {
	var out []string
	for _, w := range ws {
		out = append(out, w.ID)
	}
	return out
}

// TestUpdateWebhookGo: the Go methods check what the admin API checks, with
// errors.Is-able errors that never show a secret, and a WebhookUpdate
// prints no secret either.
func TestUpdateWebhookGo(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var logs bytes.Buffer
	ts := NewTestServer(t, WithLogger(slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))))
	id := registerHook(t, ts, "https://hooks.example.com/in", "whsec_go", contextsvc.EventContextCreated)
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name string
		id   string
		u    WebhookUpdate
		want error
	}{
		{"nothing", id, WebhookUpdate{}, ErrInvalidWebhook},
		{"bad url", id, WebhookUpdate{URL: str("ftp://x")}, ErrInvalidWebhook},
		{"no events", id, WebhookUpdate{Events: []contextsvc.EventType{}}, ErrInvalidWebhook},
		{"unknown event", id, WebhookUpdate{Events: []contextsvc.EventType{"x"}}, ErrInvalidWebhook},
		{"secret too long", id, WebhookUpdate{Secret: str("whsec_" + strings.Repeat("s", 251))}, ErrInvalidWebhook},
		{"secret not UTF-8", id, WebhookUpdate{Secret: str("whsec_\xff")}, ErrInvalidWebhook},
		{"secret with a newline", id, WebhookUpdate{Secret: str("whsec_a\n")}, ErrInvalidWebhook},
		{"missing", "wh_missing", WebhookUpdate{Secret: str("whsec_ok")}, ErrWebhookNotFound},
	} {
		_, err := ts.UpdateWebhook(tc.id, tc.u)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "whsec_") {
			t.Errorf("%s: the error shows the secret: %v", tc.name, err)
		}
	}
	off := false
	w, err := ts.UpdateWebhook(id, WebhookUpdate{Secret: str("whsec_new"), Active: &off, Events: []contextsvc.EventType{"context.deleted"}})
	if err != nil || w.Active || !slices.Equal(w.Events, []contextsvc.EventType{"context.deleted"}) || w.URL != "https://hooks.example.com/in" {
		t.Errorf("UpdateWebhook: %+v %v", w, err)
	}
	if _, err := ts.UpdateWebhook(id, WebhookUpdate{URL: str("https://u:pass@hooks.example.com/x")}); err != nil {
		t.Fatal(err)
	}
	if err := ts.DeleteWebhook(id); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	log := logs.String()
	mu.Unlock()
	if !strings.Contains(log, `msg="webhook changed" webhook=`+id) || !strings.Contains(log, `msg="webhook deleted"`) ||
		strings.Contains(log, "whsec_") || strings.Contains(log, "pass@") {
		t.Errorf("log:\n%s", log)
	}
	u := WebhookUpdate{URL: str("https://u:pass@hooks.example.com/x"), Secret: str("whsec_printed?"), Active: &off}
	for _, s := range []string{u.String(), fmt.Sprint(u), fmt.Sprintf("%+v %#v", u, u)} {
		if strings.Contains(s, "whsec_") || strings.Contains(s, "pass") || !strings.Contains(s, "Secret:[redacted]") {
			t.Errorf("WebhookUpdate printed as %q", s)
		}
	}
}

// TestWebhookLimitPerAccount: an account holds at most
// MaxWebhooksPerAccount webhooks; past it a registration is a 400 without
// param, other accounts are not affected, and deleting one makes room.
func TestWebhookLimitPerAccount(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t, WithKey(Key{Token: "sk_full", Account: "full", Plan: PlanUnlimited}), WithKey(Key{Token: "sk_other", Account: "other", Plan: PlanUnlimited}))
	body := `{"url":"https://hooks.example.com/in","events":["context.created"],"secret":"s"}`
	var last string
	for range MaxWebhooksPerAccount {
		r := do(t, ts, call{method: "POST", path: "/v1/webhooks", body: body, key: "sk_full"})
		if r.Status != 201 {
			t.Fatalf("register: %d %s", r.Status, r.Body)
		}
		var wh model.WebhookJSON
		r.json(t, &wh)
		last = wh.ID
	}
	r := do(t, ts, call{method: "POST", path: "/v1/webhooks", body: body, key: "sk_full"})
	if typ, param := r.errorOf(t); r.Status != 400 || typ != "invalid_request" || param != "" || !strings.Contains(string(r.Body), "already has 100 webhooks") {
		t.Fatalf("registration past the limit: %d %s", r.Status, r.Body)
	}
	if n := len(ts.AccountWebhooks("full")); n != MaxWebhooksPerAccount {
		t.Errorf("%d webhooks stored", n)
	}
	if r := do(t, ts, call{method: "POST", path: "/v1/webhooks", body: body, key: "sk_other"}); r.Status != 201 {
		t.Errorf("another account: %d %s", r.Status, r.Body)
	}
	if err := ts.DeleteWebhook(last); err != nil {
		t.Fatal(err)
	}
	if r := do(t, ts, call{method: "POST", path: "/v1/webhooks", body: body, key: "sk_full"}); r.Status != 201 {
		t.Errorf("after a deletion: %d %s", r.Status, r.Body)
	}
}

// TestWebhookDeactivateAndDelete walks a webhook whose receiver is down
// through deactivation, reactivation and deletion on a fake clock: its
// waiting retry ends failed at once saying why, it gets no new delivery
// while inactive, a redelivery is refused, and the other webhook of the
// account is not affected.
func TestWebhookDeactivateAndDelete(t *testing.T) {
	t.Parallel()
	ts, clock := newFakeTestServer(t)
	down := deliverytest.NewReceiver(t, clock, "k", failing(1000))
	up := deliverytest.NewReceiver(t, clock, "k", failing(0))
	hook := registerHook(t, ts, down.URL, "k", contextsvc.EventContextCreated)
	other := registerHook(t, ts, up.URL, "k", contextsvc.EventContextCreated)
	create(t, ts, `{"name":"One"}`)
	idle(t, ts)
	first := ts.Deliveries(DeliveryFilter{WebhookID: hook})[0]
	if first.State != DeliveryPending || first.NextAttemptAt.IsZero() {
		t.Fatalf("before: %+v", first)
	}

	r := admin(t, ts, "PATCH", "/_mock/webhooks/"+hook, `{"active":false}`)
	if r.Status != 200 {
		t.Fatalf("deactivate: %d %s", r.Status, r.Body)
	}
	var wire Delivery
	admin(t, ts, "GET", "/_mock/deliveries/"+first.ID, "").json(t, &wire)
	wantReason := "webhook " + hook + " was deactivated: no further attempt is made"
	if wire.State != DeliveryFailed || wire.FailureReason != wantReason || !wire.NextAttemptAt.IsZero() || len(wire.Attempts) != 1 {
		t.Errorf("after deactivating: %+v", wire)
	}
	// The retry's time passes: nothing is sent.
	clock.Advance(48 * time.Hour)
	idle(t, ts)
	if n := len(down.Got()); n != 1 {
		t.Errorf("the receiver got %d attempts, want the first only", n)
	}
	// A new event goes to the active webhook only.
	create(t, ts, `{"name":"Two"}`)
	idle(t, ts)
	if n := len(ts.Deliveries(DeliveryFilter{WebhookID: hook})); n != 1 {
		t.Errorf("%d deliveries to the inactive webhook, want the first only", n)
	}
	if n := len(ts.Deliveries(DeliveryFilter{WebhookID: other, State: DeliverySucceeded})); n != 2 {
		t.Errorf("%d deliveries to the active webhook, want 2", n)
	}
	// A redelivery is refused while it is inactive.
	r = admin(t, ts, "POST", "/_mock/deliveries/"+first.ID+"/redeliver", "")
	if typ, _ := r.errorOf(t); r.Status != 409 || typ != "conflict" || !strings.Contains(string(r.Body), "deactivated") {
		t.Errorf("redeliver to an inactive webhook: %d %s", r.Status, r.Body)
	}
	if _, err := ts.Redeliver(first.ID); !errors.Is(err, ErrWebhookInactive) {
		t.Errorf("Redeliver: %v", err)
	}

	// Active again: new events are delivered, and the failed one can be
	// redelivered by hand (its reason is gone while it is pending).
	on := true
	if _, err := ts.UpdateWebhook(hook, WebhookUpdate{Active: &on}); err != nil {
		t.Fatal(err)
	}
	create(t, ts, `{"name":"Three"}`)
	if d, err := ts.Redeliver(first.ID); err != nil || d.State != DeliveryPending || d.FailureReason != "" {
		t.Fatalf("Redeliver after reactivation: %+v %v", d, err)
	}
	idle(t, ts)
	pending := ts.Deliveries(DeliveryFilter{WebhookID: hook, State: DeliveryPending})
	if len(pending) != 2 {
		t.Fatalf("%d pending deliveries to the reactivated webhook, want 2", len(pending))
	}

	// Deleted: both waiting retries end at once; the deliveries stay.
	if r := admin(t, ts, "DELETE", "/_mock/webhooks/"+hook, ""); r.Status != 200 {
		t.Fatalf("DELETE: %d %s", r.Status, r.Body)
	}
	var page struct{ Data []Delivery }
	admin(t, ts, "GET", "/_mock/deliveries?webhookId="+hook, "").json(t, &page)
	if len(page.Data) != 2 {
		t.Fatalf("%d deliveries kept for the deleted webhook, want 2", len(page.Data))
	}
	for _, d := range page.Data {
		if d.State != DeliveryFailed || d.FailureReason != "webhook "+hook+" was deleted: no further attempt is made" {
			t.Errorf("after DELETE: %+v", d)
		}
	}
	if _, err := ts.Redeliver(first.ID); !errors.Is(err, ErrWebhookInactive) {
		t.Errorf("Redeliver to a deleted webhook: %v", err)
	}
	before := len(down.Got())
	clock.Advance(48 * time.Hour)
	create(t, ts, `{"name":"Four"}`)
	idle(t, ts)
	if n := len(down.Got()); n != before {
		t.Errorf("the deleted webhook got %d more attempts", n-before)
	}
}

// TestWebhookDeactivatedDuringAttempt: an attempt running when its webhook
// is deactivated finishes; a failure then ends the delivery (no retry), a
// success is a success.
func TestWebhookDeactivatedDuringAttempt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		status    int
		wantState DeliveryState
	}{
		{"the attempt fails", http.StatusInternalServerError, DeliveryFailed},
		{"the attempt succeeds", http.StatusOK, DeliverySucceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts, clock := newFakeTestServer(t)
			started, release := make(chan struct{}, 1), make(chan struct{})
			rc := deliverytest.NewReceiver(t, clock, "k", func(w http.ResponseWriter, r *http.Request, h deliverytest.Hit) {
				started <- struct{}{}
				<-release
				w.WriteHeader(tc.status)
			})
			hook := registerHook(t, ts, rc.URL, "k", contextsvc.EventContextCreated)
			create(t, ts, `{"name":"Doc"}`)
			<-started
			off := false
			if _, err := ts.UpdateWebhook(hook, WebhookUpdate{Active: &off}); err != nil {
				t.Fatal(err)
			}
			if d := ts.Deliveries(DeliveryFilter{})[0]; d.State != DeliveryPending {
				t.Errorf("while the attempt runs: %s", d.State)
			}
			close(release)
			idle(t, ts)
			d := ts.Deliveries(DeliveryFilter{})[0]
			wantReason := ""
			if tc.wantState == DeliveryFailed {
				wantReason = "webhook " + hook + " was deactivated: no further attempt is made"
			}
			if d.State != tc.wantState || d.FailureReason != wantReason || !d.NextAttemptAt.IsZero() || len(d.Attempts) != 1 {
				t.Errorf("after the attempt: %+v", d)
			}
			clock.Advance(48 * time.Hour)
			idle(t, ts)
			if n := len(rc.Got()); n != 1 {
				t.Errorf("%d attempts, want 1", n)
			}
		})
	}
}

// TestWebhookURLChangeAppliesToRetries: a retry waiting when the url
// changes goes to the new url, as the same delivery (same id, attempt
// numbers going on).
func TestWebhookURLChangeAppliesToRetries(t *testing.T) {
	t.Parallel()
	ts, clock := newFakeTestServer(t)
	old := deliverytest.NewReceiver(t, clock, "k", failing(1000))
	moved := deliverytest.NewReceiver(t, clock, "k", failing(0))
	hook := registerHook(t, ts, old.URL, "k", contextsvc.EventContextCreated)
	create(t, ts, `{"name":"Doc"}`)
	idle(t, ts)
	if _, err := ts.UpdateWebhook(hook, WebhookUpdate{URL: &moved.URL}); err != nil {
		t.Fatal(err)
	}
	d := ts.Deliveries(DeliveryFilter{})[0]
	if d.URL != old.URL {
		t.Errorf("before the retry the delivery says %s, where its attempt went (%s)", d.URL, old.URL)
	}
	clock.Advance(time.Minute)
	idle(t, ts)
	d, _ = ts.Delivery(d.ID)
	hits := moved.Got()
	if d.State != DeliverySucceeded || d.URL != moved.URL || len(d.Attempts) != 2 || len(old.Got()) != 1 || len(hits) != 1 {
		t.Fatalf("after the retry: %+v; old got %d, new got %d", d, len(old.Got()), len(hits))
	}
	if hits[0].Header.Get("X-Service-Delivery") != d.ID || deliverytest.AttemptNumber(hits[0]) != 2 {
		t.Errorf("the moved receiver got delivery %s attempt %d", hits[0].Header.Get("X-Service-Delivery"), deliverytest.AttemptNumber(hits[0]))
	}
}

// TestWebhookChangesRace changes webhooks while events are fired and
// attempts run (for the race detector): afterwards no delivery to an
// inactive webhook is left pending, and every delivery to one that was
// never deactivated succeeded.
func TestWebhookChangesRace(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t, WithKey(Key{Token: "sk", Plan: PlanUnlimited}))
	rc := deliverytest.NewReceiver(t, RealClock{}, "k", failing(0))
	flipped := registerHook(t, ts, rc.URL, "k", contextsvc.EventContextCreated)
	steady := registerHook(t, ts, rc.URL, "k", contextsvc.EventContextCreated)
	var wg sync.WaitGroup
	wg.Go(func() {
		secret := "k" // the same secret, set again: a state swap like any other
		for i := range 40 {
			active := i%2 == 1
			if _, err := ts.UpdateWebhook(flipped, WebhookUpdate{Active: &active, Secret: &secret}); err != nil {
				t.Error(err)
			}
		}
		off := false
		if _, err := ts.UpdateWebhook(flipped, WebhookUpdate{Active: &off}); err != nil {
			t.Error(err)
		}
	})
	for range 40 {
		createDirect(ts.Server, `{"name":"Doc"}`)
	}
	wg.Wait()
	idle(t, ts)
	for _, d := range ts.Deliveries(DeliveryFilter{WebhookID: flipped}) {
		if d.State == DeliveryPending {
			t.Errorf("delivery to the deactivated webhook still pending: %+v", d)
		}
	}
	if n := len(ts.Deliveries(DeliveryFilter{WebhookID: steady})); n != 40 ||
		len(ts.Deliveries(DeliveryFilter{WebhookID: steady, State: DeliverySucceeded})) != n {
		t.Errorf("%d deliveries to the steady webhook, not all succeeded", n)
	}
}

// TestWebhooksCostDoesNotGrowWithVersions: Server.Webhooks copies the
// webhooks alone, so what it allocates is the same with one context of
// one version as with 50 contexts of 20 versions each.
func TestWebhooksCostDoesNotGrowWithVersions(t *testing.T) {
	// Not parallel: AllocsPerRun counts every goroutine's allocations.
	if raceEnabled {
		t.Skip("the race detector changes allocations")
	}
	s := New(WithClock(NewFakeClock(dlvT0)), WithKey(Key{Token: "k", Plan: PlanUnlimited}))
	defer s.Close(t.Context())
	serve := func(method, path, body string) []byte {
		rec := newRecorder()
		s.ServeHTTP(rec, httptestRequest(method, path, body, s.DefaultKey().Token))
		if rec.Code/100 != 2 {
			t.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
		}
		return rec.Body.Bytes()
	}
	for i := range 3 {
		// Subscribed to an event no context fires: no delivery runs.
		serve("POST", "/v1/webhooks", fmt.Sprintf(`{"url":"http://127.0.0.1:9/hook%d","events":["team.member.added"],"secret":"s"}`, i))
	}
	create := func() string {
		var c model.ContextJSON
		if err := json.Unmarshal(serve("POST", "/v1/contexts", `{"name":"Doc","content":"v1"}`), &c); err != nil {
			t.Fatal(err)
		}
		return c.ID
	}
	create()
	webhooks := func() {
		if n := len(s.Webhooks()); n != 3 {
			t.Fatalf("%d webhooks, want 3", n)
		}
	}
	few := testing.AllocsPerRun(100, webhooks)
	for range 49 {
		id := create()
		for v := 2; v <= 20; v++ {
			serve("PUT", "/v1/contexts/"+id, fmt.Sprintf(`{"content":"v%d"}`, v))
		}
	}
	many := testing.AllocsPerRun(100, webhooks)
	if many != few {
		t.Errorf("Webhooks allocates %v times with 1 version stored, %v with 981", few, many)
	}
}
