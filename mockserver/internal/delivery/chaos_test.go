package delivery

import (
	"bytes"
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/chaos"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/clock"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery/deliverytest"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// chaosRun sets a chaos mode of c and returns its run.
func chaosRun(t *testing.T, c model.Chaos) *chaos.Run {
	t.Helper()
	m := chaos.New(chaos.Config{})
	if _, err := m.Set(c, t0); err != nil {
		t.Fatal(err)
	}
	return m.Current()
}

// enqueueChaos records a delivery of a new event of r to hook, with its
// chaos ticket.
func (d *Engine) enqueueChaos(t *testing.T, r *chaos.Run, eventID string, hook Hook) Delivery {
	t.Helper()
	body := dlvEnvelope(eventID, contextsvc.EventContextUpdated)
	var tk chaos.Ticket
	if r != nil {
		tk = r.Ticket(r.NextEvent(), 0)
	}
	dl, ok := d.enqueueBody(context.Background(), eventID, contextsvc.EventContextUpdated, body, true, hook, tk)
	if !ok {
		t.Fatalf("%s was not enqueued", eventID)
	}
	return dl
}

// TestChaosHoldLetsALaterEventOvertake: a held delivery waits on the
// server's clock, a later one goes first, and the held attempt says so;
// the decision is recorded once.
func TestChaosHoldLetsALaterEventOvertake(t *testing.T) {
	t.Parallel()
	fc := clock.New(t0)
	d, _ := newTestDeliverer(t, Config{Clock: fc})
	const secret = "whsec_hold"
	rc := deliverytest.NewReceiver(t, fc, secret, func(w http.ResponseWriter, _ *http.Request, _ deliverytest.Hit) {})
	hook := engineHook(d, "wh_1", rc.URL, secret)
	run := chaosRun(t, model.Chaos{Seed: 1, Reorder: 1, Delay: 2 * time.Second})
	held := d.enqueueChaos(t, run, "evt_first", hook)
	d.enqueueChaos(t, nil, "evt_second", hook)
	waitDeliveriesIdle(t, d)
	hold := held.NextAttemptAt.Sub(t0)
	if hold < time.Millisecond || hold > 2*time.Second {
		t.Fatalf("the held delivery is due in %v", hold)
	}
	if got := rc.Got(); len(got) != 1 || !bytes.Contains(got[0].Body, []byte("evt_second")) {
		t.Fatalf("before the hold ends the receiver got %d deliveries, want the second event's alone", len(got))
	}
	fc.Advance(hold)
	waitDeliveriesIdle(t, d)
	got := rc.Got()
	if len(got) != 2 || !bytes.Contains(got[1].Body, []byte("evt_first")) {
		t.Fatalf("after the hold the receiver got %d deliveries", len(got))
	}
	dl, _ := d.Get(held.ID)
	a := dl.Attempts[0]
	if dl.State != Succeeded || a.Chaos != (model.ChaosEffect{Action: model.ChaosHeld, Delay: hold}) ||
		!a.ScheduledAt.Equal(t0.Add(hold)) || !a.StartedAt.Equal(t0.Add(hold)) || !dl.CreatedAt.Equal(t0) {
		t.Errorf("the held delivery: %+v", dl)
	}
	rep := run.Report()
	if rep.Held != 1 || len(rep.Decisions) != 1 || rep.Decisions[0].DeliveryID != held.ID || rep.Decisions[0].Delay != hold ||
		rep.Decisions[0].EventID != "evt_first" || rep.Decisions[0].Event != 1 {
		t.Errorf("the decision recorded: %+v", rep)
	}
}

// TestChaosDuplicate: an acknowledged attempt is sent again, as the same
// delivery's next attempt with the same body and a valid signature; the
// duplicate ends the delivery succeeded whatever the receiver answers,
// and is neither retried nor duplicated again.
func TestChaosDuplicate(t *testing.T) {
	t.Parallel()
	fc := clock.New(t0)
	d, _ := newTestDeliverer(t, Config{Clock: fc})
	const secret = "whsec_dup"
	var n atomic.Int32
	rc := deliverytest.NewReceiver(t, fc, secret, func(w http.ResponseWriter, _ *http.Request, _ deliverytest.Hit) {
		if n.Add(1) > 1 {
			http.Error(w, "seen it", http.StatusInternalServerError)
		}
	})
	run := chaosRun(t, model.Chaos{Seed: 2, Duplicate: 1, Delay: 500 * time.Millisecond})
	dl := d.enqueueChaos(t, run, "evt_dup", engineHook(d, "wh_1", rc.URL, secret))
	waitDeliveriesIdle(t, d)
	pending, _ := d.Get(dl.ID)
	wait := pending.NextAttemptAt.Sub(t0)
	if pending.State != Pending || len(pending.Attempts) != 1 || wait < time.Millisecond || wait > 500*time.Millisecond {
		t.Fatalf("after the acknowledged attempt: %+v", pending)
	}
	fc.Advance(wait)
	waitDeliveriesIdle(t, d)
	fc.Advance(48 * time.Hour) // no retry, no second duplicate
	waitDeliveriesIdle(t, d)
	got := rc.Got()
	if len(got) != 2 {
		t.Fatalf("the receiver got %d requests, want 2", len(got))
	}
	if !bytes.Equal(got[0].Body, got[1].Body) || got[0].Header.Get("X-Service-Delivery") != got[1].Header.Get("X-Service-Delivery") ||
		deliverytest.AttemptNumber(got[1]) != 2 {
		t.Errorf("the duplicate is not the same delivery's next attempt of the same body: %v, %v", got[0].Header, got[1].Header)
	}
	final, _ := d.Get(dl.ID)
	if final.State != Succeeded || len(final.Attempts) != 2 || final.Attempts[0].Chaos != (model.ChaosEffect{}) ||
		final.Attempts[1].Chaos != (model.ChaosEffect{Action: model.ChaosDuplicate, Delay: wait}) || final.Attempts[1].StatusCode != 500 {
		t.Errorf("the delivery: %+v", final)
	}
	if rep := run.Report(); rep.Duplicates != 1 || rep.Decisions[0].Attempt != 1 || rep.Decisions[0].Delay != wait {
		t.Errorf("the decision recorded: %+v", rep)
	}
}

// switchHook is a webhook that can be turned off.
type switchHook struct {
	testHook
	off atomic.Bool
}

func (h *switchHook) Target() (url, secret string, deliverable, deleted bool) {
	return h.url, h.secret, !h.off.Load(), false
}

// TestChaosDuplicateNotMade: a delivery waiting for its duplicate ends
// succeeded, without it, when its webhook is deactivated; redelivered by
// hand, its next attempt is no duplicate; and a held delivery
// redelivered goes at once, not held.
func TestChaosDuplicateNotMade(t *testing.T) {
	t.Parallel()
	fc := clock.New(t0)
	d, _ := newTestDeliverer(t, Config{Clock: fc})
	const secret = "whsec_retire"
	rc := deliverytest.NewReceiver(t, fc, secret, func(w http.ResponseWriter, _ *http.Request, _ deliverytest.Hit) {})
	run := chaosRun(t, model.Chaos{Seed: 3, Duplicate: 1, Reorder: 1})

	off := &switchHook{testHook: testHook{id: "wh_off", account: "acct_engine", url: rc.URL, secret: secret}}
	dl := d.enqueueChaos(t, run, "evt_retired", off)
	fc.Set(dl.NextAttemptAt) // the held first attempt; its duplicate is due 1 ms or more after
	waitDeliveriesIdle(t, d)
	if got, _ := d.Get(dl.ID); got.State != Pending || len(got.Attempts) != 1 {
		t.Fatalf("before the webhook is turned off: %+v", got)
	}
	off.off.Store(true)
	if n := d.Retire(off); n != 1 {
		t.Errorf("Retire ended %d deliveries", n)
	}
	if got, _ := d.Get(dl.ID); got.State != Succeeded || got.FailureReason != "" || len(got.Attempts) != 1 {
		t.Errorf("the delivery whose duplicate was not made: %+v", got)
	}

	on := engineHook(d, "wh_on", rc.URL, secret)
	dl = d.enqueueChaos(t, run, "evt_redelivered", on)
	if _, err := d.Redeliver(dl.ID); err != nil { // held: goes now
		t.Fatal(err)
	}
	waitDeliveriesIdle(t, d)
	if _, err := d.Redeliver(dl.ID); err != nil { // waiting for its duplicate: goes now, as itself
		t.Fatal(err)
	}
	waitDeliveriesIdle(t, d)
	got, _ := d.Get(dl.ID)
	if len(got.Attempts) < 2 || got.Attempts[0].Chaos != (model.ChaosEffect{}) || got.Attempts[1].Chaos != (model.ChaosEffect{}) ||
		!got.Attempts[0].ScheduledAt.Equal(fc.Now()) {
		t.Errorf("attempts made by hand: %+v", got.Attempts)
	}
}
