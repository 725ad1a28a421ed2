package mockserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery/deliverytest"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
)

// These tests drive whole servers with a FakeClock that catches up: an
// advance runs each delivery attempt due within it at its own due time,
// the retries those schedule included.

// scheduleOffsets are the default schedule's attempts, from the delivery's
// creation: +0, +1m, +6m, +36m, +2h36m, +26h36m.
var scheduleOffsets = []time.Duration{0, time.Minute, 6 * time.Minute, 36 * time.Minute,
	2*time.Hour + 36*time.Minute, 26*time.Hour + 36*time.Minute}

// checkAttemptsAt fails the test unless dl's attempts each started at
// their due time, dlvT0 plus the offsets in order.
func checkAttemptsAt(t *testing.T, dl Delivery, offsets []time.Duration) {
	t.Helper()
	var got, want []string
	for _, a := range dl.Attempts {
		got = append(got, fmt.Sprintf("#%d due +%v started +%v", a.Number, a.ScheduledAt.Sub(dlvT0), a.StartedAt.Sub(dlvT0)))
	}
	for i, o := range offsets {
		want = append(want, fmt.Sprintf("#%d due +%v started +%v", i+1, o, o))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attempts of %s (-want +got):\n%s", dl.ID, diff)
	}
}

// countMoves watches clock and counts the times it moves to.
func countMoves(t *testing.T, clock *FakeClock) func() int {
	l := &moveCounter{}
	clock.watch(l)
	t.Cleanup(func() { clock.unwatch(l) })
	return func() int { return int(l.n.Swap(0)) }
}

// moveCounter is a clock.Watcher that counts the times its clock moves to.
type moveCounter struct{ n atomic.Int64 }

func (m *moveCounter) Moved(time.Time) { m.n.Add(1) }
func (m *moveCounter) Settle()         {}

// TestAdvanceRunsTheWholeSchedule: one advance of 27 hours takes a delivery
// to a receiver that always fails through all six attempts, each at its
// due time, however the clock is moved; the clock stops only at those
// times (the cost is the attempts', not the jump's), and the admin API's
// answer counts the attempts it ran.
func TestAdvanceRunsTheWholeSchedule(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		waitFirst bool // the first attempt has run before the advance
		advance   func(t *testing.T, ts *TestServer, clock *FakeClock) (attempts int)
		moves     int // times the clock moved to
	}{
		{"Advance right after the event", false, func(t *testing.T, ts *TestServer, clock *FakeClock) int {
			clock.Advance(27 * time.Hour)
			return -1
		}, 6},
		{"Set", true, func(t *testing.T, ts *TestServer, clock *FakeClock) int {
			clock.Set(dlvT0.Add(27 * time.Hour))
			return -1
		}, 6},
		{"two advances", true, func(t *testing.T, ts *TestServer, clock *FakeClock) int {
			clock.Advance(time.Hour)
			clock.Advance(26 * time.Hour)
			return -1
		}, 7},
		{"POST /_mock/clock/advance", false, func(t *testing.T, ts *TestServer, clock *FakeClock) int {
			return advanceOver(t, ts, `{"duration":"27h"}`).Attempts
		}, 6},
		{"POST /_mock/clock/advance in seconds", true, func(t *testing.T, ts *TestServer, clock *FakeClock) int {
			return advanceOver(t, ts, `{"seconds":97200}`).Attempts
		}, 6},
		{"toNextDue, five times", true, func(t *testing.T, ts *TestServer, clock *FakeClock) int {
			n := 0
			for i := range 5 {
				a := advanceOver(t, ts, `{"toNextDue":true}`)
				if a.Attempts != 1 || a.Now != jsonwire.FormatTime(dlvT0.Add(scheduleOffsets[i+1])) {
					t.Errorf("toNextDue %d: %+v", i+1, a)
				}
				n += a.Attempts
			}
			if r := admin(t, ts, "POST", "/_mock/clock/advance", `{"toNextDue":true}`); r.Status != http.StatusConflict {
				t.Errorf("toNextDue with nothing waiting: %d %s", r.Status, r.Body)
			}
			clock.Advance(27*time.Hour - clock.Now().Sub(dlvT0))
			return n
		}, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ts, clock := newFakeTestServer(t)
			rc := deliverytest.NewReceiver(t, clock, "s", failing(100))
			registerHook(t, ts, rc.URL, "s", contextsvc.EventContextCreated)
			moves := countMoves(t, clock)
			create(t, ts, `{"name":"Doc"}`)
			if tt.waitFirst {
				idle(t, ts)
			}
			attempts := tt.advance(t, ts, clock)
			if attempts >= 0 {
				// The first attempt ran before the advance, or within it.
				if want := 5; attempts != want && attempts != want+1 {
					t.Errorf("the advances answered %d attempts, want %d (or %d with the first)", attempts, want, want+1)
				}
			}
			if got := clock.Now(); !got.Equal(dlvT0.Add(27 * time.Hour)) {
				t.Errorf("the clock is at +%v, want +27h", got.Sub(dlvT0))
			}
			if n := moves(); n != tt.moves {
				t.Errorf("the clock moved %d times, want %d", n, tt.moves)
			}
			dls := ts.Deliveries(DeliveryFilter{})
			if len(dls) != 1 {
				t.Fatalf("%d deliveries, want 1", len(dls))
			}
			if dl := dls[0]; dl.State != DeliveryFailed || !dl.NextAttemptAt.IsZero() {
				t.Errorf("the delivery is %s, next attempt %v; want failed, none", dl.State, dl.NextAttemptAt)
			}
			checkAttemptsAt(t, dls[0], scheduleOffsets)
			// The receiver saw each attempt at its time on the clock.
			var at []time.Duration
			for _, h := range rc.Got() {
				at = append(at, h.At.Sub(dlvT0))
			}
			if diff := cmp.Diff(scheduleOffsets, at); diff != "" {
				t.Errorf("the receiver's clock at each attempt (-want +got):\n%s", diff)
			}
		})
	}
}

// advanceOver advances ts's clock with the admin API and returns its answer.
func advanceOver(t *testing.T, ts *TestServer, body string) clockAdvanceJSON {
	t.Helper()
	r := admin(t, ts, "POST", "/_mock/clock/advance", body)
	if r.Status != http.StatusOK {
		t.Fatalf("advance %s: %d %s", body, r.Status, r.Body)
	}
	var a clockAdvanceJSON
	r.json(t, &a)
	return a
}

// TestAdvanceRunsAttemptsInTimeOrder: the attempts of two deliveries whose
// schedules interleave reach the receiver in the order of their due times,
// each at its time, within one advance.
func TestAdvanceRunsAttemptsInTimeOrder(t *testing.T) {
	t.Parallel()
	ts, clock := newFakeTestServer(t)
	rc := deliverytest.NewReceiver(t, clock, "s", failing(100))
	registerHook(t, ts, rc.URL, "s", contextsvc.EventContextCreated)
	a := create(t, ts, `{"name":"A"}`)
	clock.Advance(30 * time.Second)
	b := create(t, ts, `{"name":"B"}`)
	got := advanceOver(t, ts, `{"duration":"27h"}`)
	// B's first attempt, due at +30s, may have run before the advance.
	if got.Attempts != 10 && got.Attempts != 11 {
		t.Errorf("the advance ran %d attempts, want 10 or 11", got.Attempts)
	}
	var want, hits []string
	for _, o := range scheduleOffsets {
		want = append(want, fmt.Sprintf("%s at +%v", a.Name, o), fmt.Sprintf("%s at +%v", b.Name, o+30*time.Second))
	}
	for _, h := range rc.Got() {
		ev, err := contextsvc.ParseEvent(h.Body)
		if err != nil {
			t.Fatal(err)
		}
		created, err := ev.ContextCreated()
		if err != nil {
			t.Fatal(err)
		}
		hits = append(hits, fmt.Sprintf("%s at +%v", created.Name, h.At.Sub(dlvT0)))
	}
	if diff := cmp.Diff(want, hits); diff != "" {
		t.Errorf("the receiver's requests (-want +got):\n%s", diff)
	}
}

// TestAdvanceStopsWhenTheCallerGoesAway: an advance whose caller goes away
// (a Go context canceled, an admin request whose client hangs up) during
// the third attempt stops once that attempt has finished, the clock at its
// due time, and the delivery waits for its fourth.
func TestAdvanceStopsWhenTheCallerGoesAway(t *testing.T) {
	t.Parallel()
	for _, over := range []string{"Go", "HTTP"} {
		t.Run(over, func(t *testing.T) {
			t.Parallel()
			clock := NewFakeClock(dlvT0)
			srv := New(WithClock(clock))
			t.Cleanup(func() { _ = srv.Close(context.Background()) })
			// The mock's HTTP server, which hands the advance's request
			// context to the receiver, and says when the advance has
			// returned.
			advancing := make(chan context.Context, 1)
			advanced := make(chan struct{})
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/_mock/clock/advance" {
					srv.ServeHTTP(w, r)
					return
				}
				advancing <- r.Context()
				defer close(advanced)
				srv.ServeHTTP(w, r)
			}))
			t.Cleanup(hs.Close)

			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			rc := deliverytest.NewReceiver(t, clock, "s", func(w http.ResponseWriter, r *http.Request, h deliverytest.Hit) {
				if deliverytest.AttemptNumber(h) == 3 {
					cancel()
					if over == "HTTP" {
						// Until the mock has seen its client go.
						select {
						case <-(<-advancing).Done():
						case <-r.Context().Done():
						}
					}
				}
				http.Error(w, "down", http.StatusServiceUnavailable)
			})
			b, _ := json.Marshal(map[string]any{"url": rc.URL, "events": []string{"context.created"}, "secret": "s"})
			for _, req := range []struct{ path, body string }{{"/v1/webhooks", string(b)}, {"/v1/contexts", `{"name":"Doc"}`}} {
				if code := serveOver(t, hs.URL+req.path, srv.DefaultKey().Token, req.body); code != http.StatusCreated {
					t.Fatalf("POST %s: %d", req.path, code)
				}
			}
			switch over {
			case "Go":
				if err := clock.AdvanceContext(ctx, 27*time.Hour); !errors.Is(err, context.Canceled) {
					t.Errorf("AdvanceContext: %v, want context.Canceled", err)
				}
			case "HTTP":
				req, _ := http.NewRequestWithContext(ctx, "POST", hs.URL+"/_mock/clock/advance", strings.NewReader(`{"duration":"27h"}`))
				req.Header.Set("Content-Type", "application/json")
				res, err := http.DefaultClient.Do(req)
				if err == nil {
					res.Body.Close()
					t.Fatalf("the advance answered %d to a client that went away", res.StatusCode)
				}
				<-advanced
			}
			if got := clock.Now(); !got.Equal(dlvT0.Add(6 * time.Minute)) {
				t.Errorf("the clock stopped at +%v, want +6m (the third attempt's due time)", got.Sub(dlvT0))
			}
			dl := srv.Deliveries(DeliveryFilter{})[0]
			checkAttemptsAt(t, dl, scheduleOffsets[:3])
			if dl.State != DeliveryPending || !dl.NextAttemptAt.Equal(dlvT0.Add(36*time.Minute)) {
				t.Errorf("the delivery is %s, next attempt at %v; want pending, the fourth due at +36m", dl.State, dl.NextAttemptAt)
			}
			// The next advance goes on from there.
			clock.Advance(27*time.Hour - 6*time.Minute)
			checkAttemptsAt(t, srv.Deliveries(DeliveryFilter{})[0], scheduleOffsets)
		})
	}
}

// serveOver POSTs body to url with the key and returns the status.
func serveOver(t *testing.T, url, key, body string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode
}

// TestConcurrentAdvancesAddUp: admin API advances from two clients at
// once add up exactly, their answers count every retry once between them,
// and each attempt still runs at its due time.
func TestConcurrentAdvancesAddUp(t *testing.T) {
	t.Parallel()
	ts, clock := newFakeTestServer(t)
	rc := deliverytest.NewReceiver(t, clock, "s", failing(100))
	registerHook(t, ts, rc.URL, "s", contextsvc.EventContextCreated)
	create(t, ts, `{"name":"Doc"}`)
	idle(t, ts) // the first attempt
	const clients, perClient = 2, 15
	var attempts atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for range perClient {
				res, err := ts.HTTP.Client().Post(ts.HTTP.URL+"/_mock/clock/advance", "application/json", strings.NewReader(`{"duration":"1h"}`))
				if err != nil {
					t.Error(err)
					return
				}
				var a clockAdvanceJSON
				err = json.NewDecoder(res.Body).Decode(&a)
				res.Body.Close()
				if err != nil || res.StatusCode != http.StatusOK {
					t.Errorf("advance: %d %v", res.StatusCode, err)
					return
				}
				attempts.Add(int64(a.Attempts))
			}
		})
	}
	wg.Wait()
	if got, want := clock.Now().Sub(dlvT0), clients*perClient*time.Hour; got != want {
		t.Errorf("the clock moved %v, want %v", got, want)
	}
	if n := attempts.Load(); n != 5 {
		t.Errorf("the answers count %d attempts between them, want the five retries", n)
	}
	checkAttemptsAt(t, ts.Deliveries(DeliveryFilter{})[0], scheduleOffsets)
}
