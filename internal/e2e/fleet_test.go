package e2e_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
	"github.com/contextsvc/contextsvc-go/redisstore"
	"github.com/contextsvc/contextsvc-go/redisstore/redistest"
)

// How a replica fails an attempt it was told to fail.
const (
	failFront   = iota // the replica answers 503; its handler never sees the request
	failHandler        // the receiver's function returns an error (the handler releases its claim)
	failAck            // the handler runs to the end, but its answer is lost: the sender sees 500
)

// fleetAttempt is one request that reached a replica.
type fleetAttempt struct {
	delivery string // X-Service-Delivery
	attempt  int    // X-Service-Delivery-Attempt
	replica  int
	handled  bool // the receiver's function ran and succeeded in this request
	handler  int  // the handler's answer (0 when it never saw the request)
	sent     int  // the answer the sender got
}

// fleet is receiver replicas behind a round-robin front. Each replica is
// its own NewWebhookHandler with its own go-redis client and
// redisstore Deduper (one prefix, one Redis), and fails a third of the
// attempts it gets, at random, in one of the three ways above.
type fleet struct {
	replicas []http.Handler
	rngs     []*rand.Rand
	next     atomic.Uint64

	mu       sync.Mutex
	attempts []fleetAttempt
	handled  map[string][]int // event id → replicas whose fn succeeded for it
}

// fnFailKey tells fn to fail; fnDoneKey points at the flag fn sets when it
// succeeded. The front puts both in the request's context.
type (
	fnFailKey struct{}
	fnDoneKey struct{}
)

func newFleet(t *testing.T, n int, clock func() time.Time, prefix string) *fleet {
	srv := redistest.Shared(t)
	f := &fleet{handled: map[string][]int{}}
	for i := range n {
		d, err := redisstore.NewDeduper(redistest.Client(t, srv), prefix)
		if err != nil {
			t.Fatal(err)
		}
		fn := func(ctx context.Context, ev *contextsvc.Event) error {
			if ctx.Value(fnFailKey{}) != nil {
				return errors.New("replica's downstream failed")
			}
			f.mu.Lock()
			f.handled[ev.ID] = append(f.handled[ev.ID], i)
			f.mu.Unlock()
			ctx.Value(fnDoneKey{}).(*atomic.Bool).Store(true)
			return nil
		}
		h, err := contextsvc.NewWebhookHandler("whsec_fleet", fn, contextsvc.WithWebhookClock(clock), contextsvc.WithDeduper(d))
		if err != nil {
			t.Fatal(err)
		}
		f.replicas = append(f.replicas, h)
		f.rngs = append(f.rngs, rand.New(rand.NewPCG(2026, uint64(i)))) // seeded: the same draws every run
	}
	return f
}

// ServeHTTP is the round-robin front.
func (f *fleet) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	i := int(f.next.Add(1) % uint64(len(f.replicas)))
	a := fleetAttempt{delivery: r.Header.Get("X-Service-Delivery"), replica: i}
	a.attempt, _ = strconv.Atoi(r.Header.Get("X-Service-Delivery-Attempt"))
	f.mu.Lock()
	// A third of the attempts fail, but not a delivery's last two (the
	// fifth and sixth, 2.6 h and 26.6 h after the event): this test is
	// about each event being handled once, not about the sender giving
	// up. Sparing the fifth too keeps it deterministic: a fifth attempt
	// answered 409 (the event's other delivery held the claim at that
	// moment) is followed by a sixth that finds the event done.
	fail, how := f.rngs[i].IntN(3) == 0 && a.attempt < 5, f.rngs[i].IntN(3)
	f.mu.Unlock()

	if fail && how == failFront {
		a.sent = http.StatusServiceUnavailable
	} else {
		var done atomic.Bool
		ctx := context.WithValue(r.Context(), fnDoneKey{}, &done)
		if fail && how == failHandler {
			ctx = context.WithValue(ctx, fnFailKey{}, true)
		}
		rec := httptest.NewRecorder()
		f.replicas[i].ServeHTTP(rec, r.WithContext(ctx))
		a.handler, a.sent, a.handled = rec.Code, rec.Code, done.Load()
		if fail && how == failAck {
			a.sent = http.StatusInternalServerError
		}
	}
	f.mu.Lock()
	f.attempts = append(f.attempts, a)
	f.mu.Unlock()
	w.WriteHeader(a.sent)
}

// TestFleetHandlesEachEventOnce: three receiver replicas sharing a Redis
// deduper, behind a round-robin front, each failing a third of its
// attempts (never a delivery's last two, see ServeHTTP). Two webhooks of one account subscribe to every event type, so
// each event arrives at least twice, and more often with retries. The
// fake clock walks the whole retry schedule. Every event is handled
// exactly once across the replicas, and every delivery ends succeeded.
func TestFleetHandlesEachEventOnce(t *testing.T) {
	t.Parallel()
	clock := mockserver.NewFakeClock(t0)
	ts := mockserver.NewTestServer(t, mockserver.WithClock(clock))
	client := newClient(t, ts, "")
	prefix := redistest.Prefix(t)
	// The handlers read the server's fake clock, for the replay window;
	// Redis expires the keys on its own clock, from the durations the
	// handlers give (remember = the rest of the window as of their clock).
	f := newFleet(t, 3, clock.Now, prefix)
	front := httptest.NewServer(f)
	t.Cleanup(front.Close)
	ctx := context.Background()

	for range 2 {
		_, err := client.Webhooks.Register(ctx, &contextsvc.RegisterWebhookRequest{
			URL: front.URL + "/webhooks", Events: contextsvc.AllEventTypes(), Secret: "whsec_fleet"})
		if err != nil {
			t.Fatal(err)
		}
	}

	// Events of every type, enough of them (66) that every failure path
	// is taken in every run, whatever order the attempts come in.
	var ids []string
	for i := range 16 {
		c, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Fleet " + strconv.Itoa(i), Content: "# A\n\nwords\n"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	for _, id := range ids[:12] {
		if _, err := client.Contexts.Update(ctx, id, &contextsvc.UpdateContextRequest{Content: contextsvc.Ptr("# A\n\nmore words\n")}); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids[:2] {
		exp, err := client.Contexts.Export(ctx, id, &contextsvc.ExportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		exp.Body.Close()
		if _, err := ts.Publish(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	for _, typ := range []contextsvc.EventType{contextsvc.EventTeamMemberAdded, contextsvc.EventTeamMemberRemoved} {
		if _, err := ts.EmitEvent(ctx, "", typ, []byte(`{"teamId":"team_fleet","userId":"user_fleet","role":"editor"}`)); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids[12:] {
		if _, err := client.Contexts.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	events := eventIDs(ts.Server)
	types := map[contextsvc.EventType]bool{}
	for _, ev := range ts.Events() {
		types[ev.Type] = true
	}
	if len(types) != len(contextsvc.AllEventTypes()) {
		t.Fatalf("events of %d types, want all %d: %v", len(types), len(contextsvc.AllEventTypes()), types)
	}

	// The whole schedule: the first attempt, then each retry's delay.
	for _, d := range []time.Duration{0, time.Minute, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 24 * time.Hour} {
		clock.Advance(d)
		waitIdle(t, ts)
	}

	ds := ts.Deliveries(mockserver.DeliveryFilter{})
	if len(ds) != 2*len(events) {
		t.Fatalf("%d deliveries, want %d (two webhooks × %d events)", len(ds), 2*len(events), len(events))
	}
	eventOf := map[string]string{}
	most := 0
	for _, d := range ds {
		most = max(most, len(d.Attempts))
		eventOf[d.ID] = d.EventID
		if d.State != mockserver.DeliverySucceeded {
			t.Errorf("delivery %s (%s to %s) ended %s after %d attempts %v", d.ID, d.EventType, d.WebhookID, d.State, len(d.Attempts), attemptStatuses(d))
		}
	}

	f.mu.Lock()
	defer f.mu.Unlock()
	// Handled exactly once each, across the replicas.
	want := map[string]int{}
	got := map[string]int{}
	for _, id := range events {
		want[id] = 1
		got[id] = len(f.handled[id])
	}
	for id := range f.handled {
		if _, ok := want[id]; !ok {
			t.Errorf("handled an event the server never sent: %s", id)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("times each event was handled (-want +got):\n%s", diff)
	}

	// The run exercised what it claims to: failures of each kind, and
	// duplicates acknowledged by a replica other than the one that handled
	// the event, which only a shared deduper can do.
	var failed, fnFailed, acksLost, busy, crossDup int
	for _, a := range f.attempts {
		switch {
		case a.sent == http.StatusServiceUnavailable:
			failed++
		case a.handler == http.StatusInternalServerError:
			fnFailed++
		case a.handler == http.StatusOK && a.sent == http.StatusInternalServerError:
			acksLost++
		case a.handler == http.StatusConflict:
			busy++
		}
		if a.handler == http.StatusOK && !a.handled {
			if ev := eventOf[a.delivery]; len(f.handled[ev]) == 1 && f.handled[ev][0] != a.replica {
				crossDup++
			}
		}
	}
	t.Logf("%d events, %d deliveries (up to %d attempts each), %d attempts: %d refused at the front, %d failed in fn, %d acks lost, %d answered 409, %d duplicates acknowledged by another replica",
		len(events), len(ds), most, len(f.attempts), failed, fnFailed, acksLost, busy, crossDup)
	if failed == 0 || fnFailed == 0 || acksLost == 0 || crossDup == 0 {
		t.Errorf("the run did not exercise every path: %d front failures, %d fn failures, %d lost acks, %d cross-replica duplicates",
			failed, fnFailed, acksLost, crossDup)
	}

	// Redis holds one key per event, each expiring by the end of the
	// window (the handlers counted it from their fake clock, now past
	// most of it; Redis counts from its own).
	rdb := redistest.Client(t, redistest.Shared(t))
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != len(events) {
		t.Errorf("Redis holds %d keys under the prefix, want one per event (%d)", len(keys), len(events))
	}
	for _, k := range keys {
		if ttl := rdb.PTTL(ctx, k).Val(); ttl <= 0 || ttl > contextsvc.DefaultReplayWindow+time.Second {
			t.Errorf("key %s: PTTL %v, want within the replay window", k, ttl)
		}
	}
}
