package mockserver

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// rotatingReceiver is a receiver being redeployed during a secret
// rotation: each deploy swaps in a new NewWebhookHandler, which shares one
// deduper with the others (as replicas share redisstore's), and every
// request is recorded with the answer it got.
type rotatingReceiver struct {
	*httptest.Server
	t      *testing.T
	clock  Clock
	dedupe *contextsvc.MemoryDeduper

	mu       sync.Mutex
	handler  http.Handler
	hits     []rotationHit
	calls    map[string]int // calls of the receiver's function, by event id
	handled  map[string]int // calls that succeeded, by event id
	failNext bool           // the next call fails (the receiver is not ready)
}

type rotationHit struct {
	body      []byte
	signature string
	delivery  string
	attempt   int
	status    int
}

func newRotatingReceiver(t *testing.T, clock Clock) *rotatingReceiver {
	dedupe, err := contextsvc.NewMemoryDeduper(contextsvc.DefaultMemoryDeduperSize, contextsvc.WithDeduperClock(clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	rr := &rotatingReceiver{t: t, clock: clock, dedupe: dedupe, calls: map[string]int{}, handled: map[string]int{}}
	rr.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		rr.mu.Lock()
		h := rr.handler
		rr.mu.Unlock()
		h.ServeHTTP(rec, r)
		attempt, _ := strconv.Atoi(r.Header.Get("X-Service-Delivery-Attempt"))
		rr.mu.Lock()
		rr.hits = append(rr.hits, rotationHit{body: body, signature: r.Header.Get("X-Service-Signature"),
			delivery: r.Header.Get("X-Service-Delivery"), attempt: attempt, status: rec.Code})
		rr.mu.Unlock()
		w.WriteHeader(rec.Code)
	}))
	t.Cleanup(rr.Close)
	return rr
}

// deploy puts in service a handler that signs with secret and also
// accepts previous.
func (rr *rotatingReceiver) deploy(secret string, previous ...string) {
	h, err := contextsvc.NewWebhookHandler(secret, rr.fn, contextsvc.WithWebhookSecrets(previous...),
		contextsvc.WithWebhookClock(rr.clock.Now), contextsvc.WithDeduper(rr.dedupe))
	if err != nil {
		rr.t.Fatal(err)
	}
	rr.mu.Lock()
	rr.handler = h
	rr.mu.Unlock()
}

func (rr *rotatingReceiver) fn(_ context.Context, ev *contextsvc.Event) error {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	rr.calls[ev.ID]++
	if rr.failNext {
		rr.failNext = false
		return errors.New("not ready yet")
	}
	rr.handled[ev.ID]++
	return nil
}

// last returns the latest request the receiver got.
func (rr *rotatingReceiver) last(t *testing.T) rotationHit {
	t.Helper()
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if len(rr.hits) == 0 {
		t.Fatal("the receiver got nothing")
	}
	return rr.hits[len(rr.hits)-1]
}

// signedWith names the secrets among old and new that sign h.
func signedWith(h rotationHit, secrets ...string) []string {
	var out []string
	for _, s := range secrets {
		if contextsvc.VerifySignature(h.body, h.signature, s) == nil {
			out = append(out, s)
		}
	}
	return out
}

// TestWebhookSecretRotation walks the rotation in docs/webhooks.md step by step on a
// fake clock: the receiver accepts both secrets, the webhook's secret is
// changed in place (PATCH), a delivery whose first attempt failed before
// the change is retried after it with the new secret and accepted, later
// events are signed with the new secret, and once the old secret is
// dropped nothing is refused. There is one webhook throughout, one
// delivery per event, and the receiver handles each event exactly once.
func TestWebhookSecretRotation(t *testing.T) {
	t.Parallel()
	const oldSecret, newSecret = "whsec_rotation_old", "whsec_rotation_new"
	ts, clock := newFakeTestServer(t)
	rr := newRotatingReceiver(t, clock)
	rr.deploy(oldSecret)
	hook := registerHook(t, ts, rr.URL, oldSecret, contextsvc.EventContextCreated, contextsvc.EventContextUpdated)
	eventOf := func(h rotationHit) string {
		ev, err := contextsvc.ParseEvent(h.body)
		if err != nil {
			t.Fatal(err)
		}
		return ev.ID
	}

	// Step 1: the receiver accepts the new secret and still the old one.
	rr.deploy(newSecret, oldSecret)

	// An event fires before the change; its first attempt fails (the
	// receiver's function is not ready), so its retry waits a minute.
	rr.mu.Lock()
	rr.failNext = true
	rr.mu.Unlock()
	c := create(t, ts, `{"name":"Rotation"}`)
	idle(t, ts)
	first := rr.last(t)
	e1 := eventOf(first)
	if first.status != http.StatusInternalServerError || first.attempt != 1 || !cmp.Equal(signedWith(first, oldSecret, newSecret), []string{oldSecret}) {
		t.Fatalf("before the change: attempt %d answered %d, signed with %v", first.attempt, first.status, signedWith(first, oldSecret, newSecret))
	}

	// Step 2: the webhook's secret is changed in place.
	r := admin(t, ts, "PATCH", "/_mock/webhooks/"+hook, `{"secret":"`+newSecret+`"}`)
	if r.Status != http.StatusOK || bytes.Contains(r.Body, []byte("whsec_")) {
		t.Fatalf("PATCH secret: %d %s", r.Status, r.Body)
	}

	// The retry, after the change, is signed with the new secret and
	// accepted: the same delivery, its second attempt.
	clock.Advance(time.Minute)
	idle(t, ts)
	retry := rr.last(t)
	if retry.status != http.StatusOK || retry.attempt != 2 || retry.delivery != first.delivery || eventOf(retry) != e1 ||
		!cmp.Equal(signedWith(retry, oldSecret, newSecret), []string{newSecret}) {
		t.Fatalf("the retry: delivery %s attempt %d answered %d, signed with %v", retry.delivery, retry.attempt, retry.status, signedWith(retry, oldSecret, newSecret))
	}

	// A new event is signed with the new secret.
	do(t, ts, call{method: "PUT", path: "/v1/contexts/" + c.ID, body: `{"content":"step two"}`})
	idle(t, ts)
	if h := rr.last(t); h.status != http.StatusOK || !cmp.Equal(signedWith(h, oldSecret, newSecret), []string{newSecret}) {
		t.Fatalf("after the change: answered %d, signed with %v", h.status, signedWith(h, oldSecret, newSecret))
	}

	// Step 3: the old secret is dropped; deliveries go on.
	rr.deploy(newSecret)
	do(t, ts, call{method: "PUT", path: "/v1/contexts/" + c.ID, body: `{"content":"step three"}`})
	idle(t, ts)
	if h := rr.last(t); h.status != http.StatusOK {
		t.Fatalf("after dropping the old secret: answered %d", h.status)
	}
	// …and an attempt signed with the old secret would now be refused.
	req, _ := http.NewRequest(http.MethodPost, rr.URL, bytes.NewReader(first.body))
	req.Header.Set("X-Service-Signature", first.signature)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("an old-secret signature after the rotation: %v %v", res, err)
	} else {
		res.Body.Close()
	}
	// A redelivery of the first event is signed with the new secret and
	// acknowledged as a duplicate, without handling it again.
	if _, err := ts.Redeliver(first.delivery); err != nil {
		t.Fatal(err)
	}
	idle(t, ts)
	if h := rr.last(t); h.status != http.StatusOK || eventOf(h) != e1 {
		t.Fatalf("redelivery: answered %d", h.status)
	}

	// One webhook; one delivery per event, all succeeded; each event
	// handled once.
	if ws := ts.Webhooks(); len(ws) != 1 || ws[0].ID != hook {
		t.Errorf("webhooks %+v, want the one", ws)
	}
	events := ts.Events()
	perEvent := map[string]int{}
	for _, d := range ts.Deliveries(DeliveryFilter{}) {
		perEvent[d.EventID]++
		if d.State != DeliverySucceeded {
			t.Errorf("delivery of %s: %s", d.EventType, d.State)
		}
	}
	wantHandled := map[string]int{}
	for _, ev := range events {
		if ev.Type == contextsvc.EventContextCreated || ev.Type == contextsvc.EventContextUpdated {
			wantHandled[ev.ID] = 1
		}
	}
	if len(wantHandled) != 3 {
		t.Fatalf("%d subscribed events, want 3", len(wantHandled))
	}
	if diff := cmp.Diff(wantHandled, perEvent); diff != "" {
		t.Errorf("deliveries per event (-want +got):\n%s", diff)
	}
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if diff := cmp.Diff(wantHandled, rr.handled); diff != "" {
		t.Errorf("events handled (-want +got):\n%s", diff)
	}
	if rr.calls[e1] != 2 {
		t.Errorf("the first event's function ran %d times, want 2 (a failure, then the retry)", rr.calls[e1])
	}
}
