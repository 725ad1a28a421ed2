package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/chaos"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/clock"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery/deliverytest"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// newTestDeliverer returns an engine on a fake clock (unless cfg has a
// clock) that is closed when the test ends.
func newTestDeliverer(t *testing.T, cfg Config) (*Engine, *clock.Fake) {
	t.Helper()
	fc, _ := cfg.Clock.(*clock.Fake)
	if cfg.Clock == nil {
		fc = clock.New(t0)
		cfg.Clock = fc
	}
	d := New(cfg)
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if err := d.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return d, fc
}

// engineHooks holds the webhooks that the engine tests deliver to, one per
// engine, webhook id, url and secret, so that the deliveries of a test to
// one webhook share it as the server's do.
var engineHooks = struct {
	sync.Mutex
	m map[engineHookKey]*testHook
}{m: map[engineHookKey]*testHook{}}

type engineHookKey struct {
	d               *Engine
	id, url, secret string
}

// engineHook returns the active webhook of d with the given id, url and
// secret, made on first use.
func engineHook(d *Engine, id, url, secret string) *testHook {
	engineHooks.Lock()
	defer engineHooks.Unlock()
	k := engineHookKey{d, id, url, secret}
	w := engineHooks.m[k]
	if w == nil {
		w = &testHook{id: id, account: "acct_engine", url: url, secret: secret}
		engineHooks.m[k] = w
	}
	return w
}

// testHook is an active webhook as the engine sees one (a Hook).
type testHook struct{ id, account, url, secret string }

func (h *testHook) ID() string      { return h.id }
func (h *testHook) Account() string { return h.account }
func (h *testHook) Target() (url, secret string, deliverable, deleted bool) {
	return h.url, h.secret, true, false
}

// enqueue records a delivery of an event to the webhook with the given id,
// url and secret (see engineHook), its body copied, as the engine tests
// write it.
func (d *Engine) enqueue(eventID string, eventType contextsvc.EventType, body []byte, webhookID, url, secret string) Delivery {
	return d.enqueueCtx(context.Background(), eventID, eventType, body, webhookID, url, secret)
}

// enqueueCtx is enqueue whose wait for room in the backlog ends with ctx.
func (d *Engine) enqueueCtx(ctx context.Context, eventID string, eventType contextsvc.EventType, body []byte, webhookID, url, secret string) Delivery {
	dl, _ := d.enqueueBody(ctx, eventID, eventType, body, true, engineHook(d, webhookID, url, secret), chaos.Ticket{})
	return dl
}

// waitDeliveriesIdle waits for the engine to be idle, however long the
// machine takes (go test's -timeout ends a hung engine).
func waitDeliveriesIdle(t *testing.T, d *Engine) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := d.WaitIdle(ctx); err != nil {
		t.Fatalf("waitIdle: %v", err)
	}
}

// dlvEnvelope is a delivered event body as the service sends it.
func dlvEnvelope(id string, typ contextsvc.EventType) []byte {
	b, err := json.Marshal(map[string]any{
		"id":        id,
		"type":      typ,
		"timestamp": t0.Format("2006-01-02T15:04:05.000Z07:00"),
		"data":      map[string]any{"contextId": "ctx_abcdefghijklmnopqrstuvwx", "name": "Onboarding"},
	})
	if err != nil {
		panic(err)
	}
	return b
}

// TestDeliveryRetrySchedule runs the whole retry schedule on a fake clock:
// each attempt happens exactly when the schedule says, and not a minute
// earlier.
func TestDeliveryRetrySchedule(t *testing.T) {
	t.Parallel()
	offsets := []time.Duration{0, time.Minute, 6 * time.Minute, 36 * time.Minute,
		2*time.Hour + 36*time.Minute, 26*time.Hour + 36*time.Minute}
	tests := []struct {
		name      string
		failures  int // answers 503 to this many attempts, then 200
		wantState State
	}{
		{"succeeds at once", 0, Succeeded},
		{"fails five times then succeeds", 5, Succeeded},
		{"fails six times", 6, Failed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fc := clock.New(t0)
			d, _ := newTestDeliverer(t, Config{Clock: fc})
			const secret = "whsec_schedule"
			rc := deliverytest.NewReceiver(t, fc, secret, func(w http.ResponseWriter, _ *http.Request, h deliverytest.Hit) {
				if deliverytest.AttemptNumber(h) <= tt.failures {
					http.Error(w, "try later", http.StatusServiceUnavailable)
					return
				}
				w.WriteHeader(http.StatusOK)
			})
			body := dlvEnvelope("evt_schedule", contextsvc.EventContextUpdated)
			dl := d.enqueue("evt_schedule", contextsvc.EventContextUpdated, body, "wh_1", rc.URL, secret)
			waitDeliveriesIdle(t, d)

			attempts := min(tt.failures+1, 6)
			for i := 1; i < len(offsets); i++ {
				// Just before the retry is due, nothing happens.
				step := offsets[i] - offsets[i-1]
				fc.Advance(step - time.Second)
				waitDeliveriesIdle(t, d)
				if got, want := len(rc.Got()), min(i, attempts); got != want {
					t.Fatalf("a second before +%v: receiver got %d attempts, want %d", offsets[i], got, want)
				}
				fc.Advance(time.Second)
				waitDeliveriesIdle(t, d)
				if got, want := len(rc.Got()), min(i+1, attempts); got != want {
					t.Fatalf("at +%v: receiver got %d attempts, want %d", offsets[i], got, want)
				}
			}
			// Long after the schedule, still nothing more.
			fc.Advance(72 * time.Hour)
			waitDeliveriesIdle(t, d)

			got, ok := d.Get(dl.ID)
			if !ok {
				t.Fatalf("get(%s): not found", dl.ID)
			}
			want := Delivery{
				ID: dl.ID, EventID: "evt_schedule", EventType: contextsvc.EventContextUpdated,
				WebhookID: "wh_1", Account: "acct_engine", URL: rc.URL, State: tt.wantState, CreatedAt: t0,
			}
			if tt.wantState == Failed {
				want.FailureReason = "every attempt failed and the retry schedule has ended"
			}
			for i := range attempts {
				a := Attempt{Number: i + 1, ScheduledAt: t0.Add(offsets[i]), StartedAt: t0.Add(offsets[i])}
				if i < tt.failures {
					a.StatusCode = http.StatusServiceUnavailable
					a.Error = "receiver answered 503 Service Unavailable"
					a.ResponseSnippet = "try later\n"
				} else {
					a.StatusCode = http.StatusOK
				}
				want.Attempts = append(want.Attempts, a)
			}
			if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(Attempt{}, "Duration")); diff != "" {
				t.Errorf("delivery (-want +got):\n%s", diff)
			}
			hits := rc.Got()
			for i, h := range hits {
				if !h.At.Equal(t0.Add(offsets[i])) {
					t.Errorf("attempt %d received at %v, want +%v", i+1, h.At.Sub(t0), offsets[i])
				}
				if deliverytest.AttemptNumber(h) != i+1 {
					t.Errorf("request %d carries attempt %d", i+1, deliverytest.AttemptNumber(h))
				}
				if h.Header.Get("X-Service-Delivery") != dl.ID {
					t.Errorf("request %d: X-Service-Delivery %q, want %q", i+1, h.Header.Get("X-Service-Delivery"), dl.ID)
				}
				if !bytes.Equal(h.Body, body) {
					t.Errorf("request %d: body %s, want %s", i+1, h.Body, body)
				}
			}
		})
	}
}

// TestDeliveryRedeliver redelivers a failed delivery by hand: it succeeds,
// attempt numbers continue, and the schedule starts over for a redelivery
// that fails.
func TestDeliveryRedeliver(t *testing.T) {
	t.Parallel()
	fc := clock.New(t0)
	d, _ := newTestDeliverer(t, Config{Clock: fc})
	const secret = "whsec_redeliver"
	var mu sync.Mutex
	healthy := false
	rc := deliverytest.NewReceiver(t, fc, secret, func(w http.ResponseWriter, _ *http.Request, _ deliverytest.Hit) {
		mu.Lock()
		defer mu.Unlock()
		if !healthy {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	setHealthy := func(v bool) { mu.Lock(); healthy = v; mu.Unlock() }

	dl := d.enqueue("evt_re", contextsvc.EventContextCreated, dlvEnvelope("evt_re", contextsvc.EventContextCreated), "wh_1", rc.URL, secret)
	waitDeliveriesIdle(t, d)
	for _, step := range DefaultSchedule() {
		fc.Advance(step)
		waitDeliveriesIdle(t, d)
	}
	got, _ := d.Get(dl.ID)
	if got.State != Failed || len(got.Attempts) != 6 || !got.NextAttemptAt.IsZero() {
		t.Fatalf("after the schedule: state %s, %d attempts, next %v; want failed, 6, none", got.State, len(got.Attempts), got.NextAttemptAt)
	}

	// A failed redelivery: attempt 7, and then the whole schedule again.
	now := fc.Now()
	re, err := d.Redeliver(dl.ID)
	if err != nil {
		t.Fatalf("redeliver: %v", err)
	}
	if re.State != Pending {
		t.Errorf("redeliver returned state %s, want pending", re.State)
	}
	waitDeliveriesIdle(t, d)
	got, _ = d.Get(dl.ID)
	if n := len(got.Attempts); n != 7 || got.Attempts[6].Number != 7 || got.State != Pending {
		t.Fatalf("after redeliver: %d attempts (last %+v), state %s; want 7, pending", n, got.Attempts[n-1], got.State)
	}
	if want := now.Add(time.Minute); !got.NextAttemptAt.Equal(want) {
		t.Errorf("after a failed redelivery the next attempt is due %v, want %v (schedule starts over)", got.NextAttemptAt, want)
	}

	// Redelivering a pending delivery moves its retry to now.
	setHealthy(true)
	if _, err := d.Redeliver(dl.ID); err != nil {
		t.Fatalf("redeliver pending: %v", err)
	}
	waitDeliveriesIdle(t, d)
	got, _ = d.Get(dl.ID)
	if n := len(got.Attempts); n != 8 || got.State != Succeeded || !got.Attempts[7].Succeeded() || !got.Attempts[7].StartedAt.Equal(now) {
		t.Fatalf("after redelivering a pending delivery: %d attempts, state %s, last %+v", n, got.State, got.Attempts[n-1])
	}
	// A succeeded delivery can be redelivered too.
	if _, err := d.Redeliver(dl.ID); err != nil {
		t.Fatalf("redeliver succeeded: %v", err)
	}
	waitDeliveriesIdle(t, d)
	got, _ = d.Get(dl.ID)
	if n := len(got.Attempts); n != 9 || got.State != Succeeded {
		t.Fatalf("after redelivering a succeeded delivery: %d attempts, state %s", n, got.State)
	}
	hits := rc.Got()
	if len(hits) != 9 {
		t.Fatalf("receiver got %d requests, want 9", len(hits))
	}
	for i, h := range hits {
		if deliverytest.AttemptNumber(h) != i+1 {
			t.Errorf("request %d carries attempt number %d", i+1, deliverytest.AttemptNumber(h))
		}
	}

	if _, err := d.Redeliver("dlv_nosuchdelivery0000000000"); !errors.Is(err, model.ErrDeliveryNotFound) {
		t.Errorf("redeliver of an unknown id: %v, want model.ErrDeliveryNotFound", err)
	}
}

// TestDeliveryFailedAttempts checks each way an attempt fails: it is
// recorded with its error and the retry is due a minute later.
func TestDeliveryFailedAttempts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		timeout    time.Duration
		handler    func(t *testing.T) (url string) // starts the receiver
		wantStatus int
		wantError  string // a substring of the attempt's error
	}{
		{
			name:    "hangs past the time-out",
			timeout: 50 * time.Millisecond,
			handler: func(t *testing.T) string {
				release := make(chan struct{})
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					io.Copy(io.Discard, r.Body) // then the server notices when the client hangs up
					select {
					case <-release:
					case <-r.Context().Done():
					}
				}))
				t.Cleanup(srv.Close)
				t.Cleanup(func() { close(release) }) // runs before srv.Close
				return srv.URL
			},
			wantError: "timed out after 50ms",
		},
		{
			name: "redirect is not followed",
			handler: func(t *testing.T) string {
				target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					t.Errorf("the redirect target got a %s request", r.Method)
				}))
				t.Cleanup(target.Close)
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					http.Redirect(w, r, target.URL, http.StatusMovedPermanently)
				}))
				t.Cleanup(srv.Close)
				return srv.URL
			},
			wantStatus: http.StatusMovedPermanently,
			wantError:  "redirects are not followed",
		},
		{
			name: "connection refused",
			handler: func(t *testing.T) string {
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				addr := l.Addr().String()
				l.Close() // nothing listens there any more
				return "http://" + addr + "/hook"
			},
			wantError: "refused",
		},
		{
			name: "connection reset",
			handler: func(t *testing.T) string {
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					conn, _, err := http.NewResponseController(w).Hijack()
					if err != nil {
						t.Errorf("hijack: %v", err)
						return
					}
					if tc, ok := conn.(*net.TCPConn); ok {
						_ = tc.SetLinger(0) // close with a RST
					}
					conn.Close()
				}))
				t.Cleanup(srv.Close)
				return srv.URL
			},
			wantError: "Post",
		},
		{
			name: "404",
			handler: func(t *testing.T) string {
				srv := httptest.NewServer(http.NotFoundHandler())
				t.Cleanup(srv.Close)
				return srv.URL
			},
			wantStatus: http.StatusNotFound,
			wantError:  "receiver answered 404 Not Found",
		},
		{
			name: "invalid url",
			handler: func(t *testing.T) string {
				return "http://127.0.0.1:bad port/"
			},
			wantError: "invalid webhook url",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u := tt.handler(t)
			d, fc := newTestDeliverer(t, Config{Timeout: tt.timeout})
			dl := d.enqueue("evt_fail", contextsvc.EventExportCompleted, dlvEnvelope("evt_fail", contextsvc.EventExportCompleted), "wh_f", u, "whsec_f")
			waitDeliveriesIdle(t, d)
			got, _ := d.Get(dl.ID)
			if len(got.Attempts) != 1 {
				t.Fatalf("%d attempts, want 1", len(got.Attempts))
			}
			a := got.Attempts[0]
			if a.StatusCode != tt.wantStatus || !strings.Contains(a.Error, tt.wantError) || a.Succeeded() {
				t.Errorf("attempt: status %d, error %q; want status %d, error containing %q", a.StatusCode, a.Error, tt.wantStatus, tt.wantError)
			}
			if got.State != Pending || !got.NextAttemptAt.Equal(fc.Now().Add(time.Minute)) {
				t.Errorf("state %s, next attempt %v; want pending, a minute from now", got.State, got.NextAttemptAt)
			}
			if tt.timeout > 0 && a.Duration < tt.timeout {
				t.Errorf("a timed-out attempt took %v, less than the time-out %v", a.Duration, tt.timeout)
			}
		})
	}
}

// TestDeliveryResponseSnippet checks that the start of the response body is
// kept, cut to 4 KiB and never in the middle of a UTF-8 character.
func TestDeliveryResponseSnippet(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("0123456789", 500)
	accents := "x" + strings.Repeat("é", 3000) // a 2-byte rune straddles byte 4096
	tests := []struct {
		name, body, want string
	}{
		{"empty", "", ""},
		{"short", `{"ok":true}`, `{"ok":true}`},
		{"exactly the limit", long[:4096], long[:4096]},
		{"long, cut", long, long[:4096]},
		{"cut before a split rune", accents, accents[:4095]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, fc := newTestDeliverer(t, Config{})
			rc := deliverytest.NewReceiver(t, fc, "s", func(w http.ResponseWriter, _ *http.Request, _ deliverytest.Hit) {
				io.WriteString(w, tt.body)
			})
			dl := d.enqueue("evt_snip", contextsvc.EventContextDeleted, dlvEnvelope("evt_snip", contextsvc.EventContextDeleted), "wh_s", rc.URL, "s")
			waitDeliveriesIdle(t, d)
			got, _ := d.Get(dl.ID)
			if len(got.Attempts) != 1 || got.Attempts[0].ResponseSnippet != tt.want || got.State != Succeeded {
				t.Fatalf("got %+v, want one succeeded attempt with snippet of %d bytes", got, len(tt.want))
			}
		})
	}
}

// TestDeliveryOlderSnippetsCut: once a later attempt has finished, an
// attempt keeps 1 KiB of its answer (cut at a rune's start), the latest
// 4 KiB, so a delivery's answers stay bounded.
func TestDeliveryOlderSnippetsCut(t *testing.T) {
	t.Parallel()
	accents := "x" + strings.Repeat("é", 3000) // a 2-byte rune straddles bytes 1024 and 4096
	d, fc := newTestDeliverer(t, Config{})
	rc := deliverytest.NewReceiver(t, fc, "s", func(w http.ResponseWriter, _ *http.Request, _ deliverytest.Hit) {
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, accents)
	})
	dl := d.enqueue("evt_older", contextsvc.EventContextDeleted, dlvEnvelope("evt_older", contextsvc.EventContextDeleted), "wh_o", rc.URL, "s")
	waitDeliveriesIdle(t, d)
	for _, step := range []time.Duration{time.Minute, 5 * time.Minute} {
		fc.Advance(step)
		waitDeliveriesIdle(t, d)
	}
	got, _ := d.Get(dl.ID)
	var lens []int
	for _, a := range got.Attempts {
		lens = append(lens, len(a.ResponseSnippet))
		if !utf8.ValidString(a.ResponseSnippet) || !strings.HasPrefix(accents, a.ResponseSnippet) {
			t.Errorf("attempt %d: snippet is not a valid start of the answer", a.Number)
		}
	}
	if diff := cmp.Diff([]int{1023, 1023, 4095}, lens); diff != "" {
		t.Errorf("snippet lengths (-want +got):\n%s", diff)
	}
}

// TestDeliverySameEventEverywhere sends one event to two webhooks, with a
// failure on one of them: every request carries the same event id and body,
// each signed with its own webhook's secret (checked by the receiver).
func TestDeliverySameEventEverywhere(t *testing.T) {
	t.Parallel()
	d, fc := newTestDeliverer(t, Config{})
	ok := deliverytest.NewReceiver(t, fc, "secret-a", func(http.ResponseWriter, *http.Request, deliverytest.Hit) {})
	flaky := deliverytest.NewReceiver(t, fc, "secret-b", func(w http.ResponseWriter, _ *http.Request, h deliverytest.Hit) {
		if deliverytest.AttemptNumber(h) == 1 {
			w.WriteHeader(http.StatusBadGateway)
		}
	})
	for _, typ := range contextsvc.AllEventTypes() {
		id := "evt_" + strings.ReplaceAll(string(typ), ".", "_")
		body := dlvEnvelope(id, typ)
		d.enqueue(id, typ, body, "wh_a", ok.URL, "secret-a")
		d.enqueue(id, typ, body, "wh_b", flaky.URL, "secret-b")
	}
	waitDeliveriesIdle(t, d)
	fc.Advance(time.Minute)
	waitDeliveriesIdle(t, d)

	n := len(contextsvc.AllEventTypes())
	if a, b := len(ok.Got()), len(flaky.Got()); a != n || b != 2*n {
		t.Fatalf("receivers got %d and %d requests, want %d and %d", a, b, n, 2*n)
	}
	for _, h := range append(ok.Got(), flaky.Got()...) {
		var env struct {
			ID   string               `json:"id"`
			Type contextsvc.EventType `json:"type"`
		}
		if err := json.Unmarshal(h.Body, &env); err != nil {
			t.Fatalf("body %s: %v", h.Body, err)
		}
		if want := "evt_" + strings.ReplaceAll(string(env.Type), ".", "_"); env.ID != want {
			t.Errorf("event id %q, want %q", env.ID, want)
		}
		if got := h.Header.Get("X-Service-Event"); got != string(env.Type) {
			t.Errorf("X-Service-Event %q for a %s event", got, env.Type)
		}
		if !bytes.Equal(h.Body, dlvEnvelope(env.ID, env.Type)) {
			t.Errorf("body %s differs from the event's", h.Body)
		}
	}
	for _, dl := range d.List(Filter{}) {
		if dl.State != Succeeded {
			t.Errorf("delivery %s to %s: %s", dl.ID, dl.WebhookID, dl.State)
		}
	}
	// The body is stored once per event, whatever the number of webhooks.
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, rec := range d.order.all() {
		if rec.event != d.events[rec.event.ID] {
			t.Errorf("delivery %s holds its own copy of event %s", rec.id, rec.event.ID)
		}
	}
}

// TestDeliveryManyEventsExactlyOnce sends 1,000 events to 3 healthy
// webhooks, enqueued from several goroutines: each of the 3,000 deliveries
// arrives exactly once.
func TestDeliveryManyEventsExactlyOnce(t *testing.T) {
	t.Parallel()
	events := 1000
	if testing.Short() {
		events = 200
	}
	d, fc := newTestDeliverer(t, Config{})
	var mu sync.Mutex
	perDelivery := map[string]int{}
	perPair := map[string]int{}
	webhooks := make([]*deliverytest.Receiver, 3)
	for i := range webhooks {
		webhooks[i] = deliverytest.NewReceiver(t, fc, fmt.Sprint("secret-", i), func(w http.ResponseWriter, _ *http.Request, h deliverytest.Hit) {
			var env struct{ ID string }
			if err := json.Unmarshal(h.Body, &env); err != nil {
				t.Errorf("body: %v", err)
			}
			mu.Lock()
			perDelivery[h.Header.Get("X-Service-Delivery")]++
			perPair[fmt.Sprint(env.ID, "/", i)]++
			mu.Unlock()
			w.WriteHeader(http.StatusNoContent)
		})
	}
	var wg sync.WaitGroup
	const producers = 4
	for p := range producers {
		wg.Go(func() {
			for e := p; e < events; e += producers {
				id := fmt.Sprintf("evt_%05d", e)
				body := dlvEnvelope(id, contextsvc.EventContextCreated)
				for i, rc := range webhooks {
					d.enqueue(id, contextsvc.EventContextCreated, body, fmt.Sprint("wh_", i), rc.URL, fmt.Sprint("secret-", i))
				}
			}
		})
	}
	wg.Wait()
	waitDeliveriesIdle(t, d)

	all := d.List(Filter{})
	if len(all) != 3*events {
		t.Fatalf("%d deliveries, want %d", len(all), 3*events)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(perDelivery) != 3*events || len(perPair) != 3*events {
		t.Fatalf("received %d distinct delivery ids and %d (event, webhook) pairs, want %d", len(perDelivery), len(perPair), 3*events)
	}
	for _, dl := range all {
		if perDelivery[dl.ID] != 1 || dl.State != Succeeded || len(dl.Attempts) != 1 {
			t.Errorf("delivery %s: received %d times, state %s, %d attempts", dl.ID, perDelivery[dl.ID], dl.State, len(dl.Attempts))
		}
	}
	for pair, n := range perPair {
		if n != 1 {
			t.Errorf("%s received %d times", pair, n)
		}
	}
	if got := len(d.List(Filter{WebhookID: "wh_1", State: Succeeded})); got != events {
		t.Errorf("filter by webhook and state: %d deliveries, want %d", got, events)
	}
	if got := d.List(Filter{EventID: "evt_00007"}); len(got) != 3 {
		t.Errorf("filter by event: %d deliveries, want 3", len(got))
	}
}

// TestDeliveryRandomFailures has receivers fail at random about half the
// time, drawn once from a seeded source so the run is deterministic, and
// advances the clock through the whole schedule: every delivery ends
// succeeded after exactly its planned failures, or failed after six
// attempts; none is lost and none is attempted after it succeeded.
func TestDeliveryRandomFailures(t *testing.T) {
	t.Parallel()
	events := 500
	if testing.Short() {
		events = 100
	}
	const webhooks = 3
	rng := rand.New(rand.NewPCG(2026, 11))
	// failures[e][w] is how many attempts fail before one succeeds.
	failures := make([][webhooks]int, events)
	for e := range failures {
		for w := range webhooks {
			for failures[e][w] < 7 && rng.IntN(2) == 0 {
				failures[e][w]++
			}
		}
	}

	d, fc := newTestDeliverer(t, Config{})
	var mu sync.Mutex
	succeeded := map[string]bool{} // delivery id → a 2xx was sent
	requests := 0
	rcs := make([]*deliverytest.Receiver, webhooks)
	for w := range rcs {
		rcs[w] = deliverytest.NewReceiver(t, fc, "s", func(rw http.ResponseWriter, _ *http.Request, h deliverytest.Hit) {
			var env struct{ ID string }
			_ = json.Unmarshal(h.Body, &env)
			e, _ := strconv.Atoi(strings.TrimPrefix(env.ID, "evt_"))
			id := h.Header.Get("X-Service-Delivery")
			mu.Lock()
			defer mu.Unlock()
			requests++
			if succeeded[id] {
				t.Errorf("delivery %s attempted again after it succeeded", id)
			}
			if deliverytest.AttemptNumber(h) <= failures[e][w] {
				rw.WriteHeader(http.StatusInternalServerError)
				return
			}
			succeeded[id] = true
		})
	}
	for e := range events {
		id := fmt.Sprintf("evt_%d", e)
		body := dlvEnvelope(id, contextsvc.EventContextUpdated)
		for w, rc := range rcs {
			d.enqueue(id, contextsvc.EventContextUpdated, body, fmt.Sprint("wh_", w), rc.URL, "s")
		}
	}
	waitDeliveriesIdle(t, d)
	for _, step := range DefaultSchedule() {
		fc.Advance(step)
		waitDeliveriesIdle(t, d)
	}
	fc.Advance(48 * time.Hour)
	waitDeliveriesIdle(t, d)

	all := d.List(Filter{})
	if len(all) != events*webhooks {
		t.Fatalf("%d deliveries, want %d", len(all), events*webhooks)
	}
	attempts := 0
	var nSucceeded, nFailed int
	for _, dl := range all {
		e, _ := strconv.Atoi(strings.TrimPrefix(dl.EventID, "evt_"))
		w, _ := strconv.Atoi(strings.TrimPrefix(dl.WebhookID, "wh_"))
		f := failures[e][w]
		wantState, wantAttempts := Succeeded, f+1
		if f >= 6 {
			wantState, wantAttempts = Failed, 6
		}
		if dl.State != wantState || len(dl.Attempts) != wantAttempts || !dl.NextAttemptAt.IsZero() {
			t.Errorf("%s to %s (%d planned failures): %s after %d attempts, next %v; want %s after %d",
				dl.EventID, dl.WebhookID, f, dl.State, len(dl.Attempts), dl.NextAttemptAt, wantState, wantAttempts)
		}
		attempts += len(dl.Attempts)
		if dl.State == Succeeded {
			nSucceeded++
		} else {
			nFailed++
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if requests != attempts {
		t.Errorf("receivers got %d requests, the records show %d attempts", requests, attempts)
	}
	if nSucceeded == 0 || nFailed == 0 {
		t.Errorf("%d succeeded and %d failed: the draw should give some of each", nSucceeded, nFailed)
	}
}

// TestDeliveryWaitFor blocks until a matching delivery exists, whether it
// already exists or comes later, and gives up when its context is done.
func TestDeliveryWaitFor(t *testing.T) {
	t.Parallel()
	d, fc := newTestDeliverer(t, Config{})
	rc := deliverytest.NewReceiver(t, fc, "s", func(w http.ResponseWriter, _ *http.Request, h deliverytest.Hit) {
		if deliverytest.AttemptNumber(h) == 1 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	type result struct {
		d   Delivery
		err error
	}
	waiting := make(chan result, 1)
	go func() {
		dl, err := d.WaitFor(ctx, func(dl Delivery) bool {
			return dl.EventID == "evt_later" && dl.State == Succeeded
		})
		waiting <- result{dl, err}
	}()

	dl := d.enqueue("evt_later", contextsvc.EventContextCreated, dlvEnvelope("evt_later", contextsvc.EventContextCreated), "wh_w", rc.URL, "s")
	waitDeliveriesIdle(t, d) // attempt 1 failed: nothing matches yet
	select {
	case r := <-waiting:
		t.Fatalf("waitFor returned before the delivery succeeded: %+v, %v", r.d, r.err)
	default:
	}
	fc.Advance(time.Minute)
	r := <-waiting
	if r.err != nil || r.d.ID != dl.ID || r.d.State != Succeeded || len(r.d.Attempts) != 2 {
		t.Fatalf("waitFor: %+v, %v; want %s succeeded after 2 attempts", r.d, r.err, dl.ID)
	}

	// An existing match returns at once.
	got, err := d.WaitFor(ctx, func(x Delivery) bool { return x.ID == dl.ID })
	if err != nil || got.ID != dl.ID {
		t.Errorf("waitFor an existing delivery: %+v, %v", got, err)
	}

	// No match: the context's error.
	short, cancelShort := context.WithCancel(ctx)
	go cancelShort()
	if _, err := d.WaitFor(short, func(Delivery) bool { return false }); !errors.Is(err, context.Canceled) {
		t.Errorf("waitFor without a match: %v, want context.Canceled", err)
	}
	d.mu.Lock()
	if n := len(d.waiters); n != 0 {
		t.Errorf("%d waiters left registered", n)
	}
	d.mu.Unlock()
}

// TestDeliveryClose lets an attempt in flight finish, then stops: no new
// attempt starts, and a redeliver is refused.
func TestDeliveryClose(t *testing.T) {
	t.Parallel()
	fc := clock.New(t0)
	d := New(Config{Clock: fc})
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	rc := deliverytest.NewReceiver(t, fc, "s", func(w http.ResponseWriter, _ *http.Request, h deliverytest.Hit) {
		if h.Header.Get("X-Service-Event") == string(contextsvc.EventContextDeleted) {
			t.Error("an attempt started after close")
			return
		}
		started <- struct{}{}
		<-release
	})
	dl := d.enqueue("evt_close", contextsvc.EventContextCreated, dlvEnvelope("evt_close", contextsvc.EventContextCreated), "wh_c", rc.URL, "s")
	<-started

	closed := make(chan error, 1)
	go func() { closed <- d.Close(context.Background()) }()
	// close has to wait for the running attempt: it cannot return before
	// release, whatever the scheduling.
	select {
	case err := <-closed:
		t.Fatalf("close returned while an attempt was in flight: %v", err)
	default:
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatalf("close: %v", err)
	}
	got, _ := d.Get(dl.ID)
	if got.State != Succeeded || len(got.Attempts) != 1 {
		t.Errorf("the in-flight attempt: state %s, %d attempts; want succeeded, 1", got.State, len(got.Attempts))
	}

	late := d.enqueue("evt_late", contextsvc.EventContextDeleted, dlvEnvelope("evt_late", contextsvc.EventContextDeleted), "wh_c", rc.URL, "s")
	fc.Advance(time.Hour)
	if err := d.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.Get(late.ID); got.State != Pending || len(got.Attempts) != 0 {
		t.Errorf("a delivery enqueued after close: state %s, %d attempts; want pending, 0", got.State, len(got.Attempts))
	}
	if _, err := d.Redeliver(dl.ID); !errors.Is(err, model.ErrDeliveriesClosed) {
		t.Errorf("redeliver after close: %v, want model.ErrDeliveriesClosed", err)
	}
	if n := len(rc.Got()); n != 1 {
		t.Errorf("receiver got %d requests, want 1", n)
	}
}

// TestDeliveryCloseDeadline cancels an attempt still running when close's
// context ends, and records it as failed.
func TestDeliveryCloseDeadline(t *testing.T) {
	t.Parallel()
	fc := clock.New(t0)
	d := New(Config{Clock: fc})
	started := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body) // then the server notices when the client hangs up
		close(started)
		<-r.Context().Done() // hangs until the client gives up
	}))
	defer srv.Close()
	dl := d.enqueue("evt_hang", contextsvc.EventContextCreated, dlvEnvelope("evt_hang", contextsvc.EventContextCreated), "wh_h", srv.URL, "s")
	<-started
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.WaitIdle(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("waitIdle with an attempt in flight: %v, want context.Canceled", err)
	}
	if err := d.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("close: %v, want context.Canceled", err)
	}
	got, _ := d.Get(dl.ID)
	if len(got.Attempts) != 1 || !strings.Contains(got.Attempts[0].Error, "canceled") {
		t.Fatalf("the canceled attempt: %+v", got.Attempts)
	}
}

// TestDeliveryReset drops every delivery and every waiting retry.
func TestDeliveryReset(t *testing.T) {
	t.Parallel()
	d, fc := newTestDeliverer(t, Config{})
	rc := deliverytest.NewReceiver(t, fc, "s", func(w http.ResponseWriter, _ *http.Request, _ deliverytest.Hit) {
		w.WriteHeader(http.StatusInternalServerError)
	})
	for i := range 10 {
		id := fmt.Sprint("evt_", i)
		d.enqueue(id, contextsvc.EventContextCreated, dlvEnvelope(id, contextsvc.EventContextCreated), "wh_r", rc.URL, "s")
	}
	waitDeliveriesIdle(t, d)
	d.Reset()
	if got := d.List(Filter{}); len(got) != 0 {
		t.Fatalf("%d deliveries after reset", len(got))
	}
	fc.Advance(30 * time.Hour)
	waitDeliveriesIdle(t, d)
	if n := len(rc.Got()); n != 10 {
		t.Errorf("receiver got %d requests, want only the 10 before reset", n)
	}
	// The engine still works after a reset.
	dl := d.enqueue("evt_after", contextsvc.EventContextCreated, dlvEnvelope("evt_after", contextsvc.EventContextCreated), "wh_r", rc.URL, "s")
	waitDeliveriesIdle(t, d)
	if got, _ := d.Get(dl.ID); len(got.Attempts) != 1 {
		t.Errorf("after reset: %d attempts, want 1", len(got.Attempts))
	}
}

// TestDeliveryCopies checks that what the engine hands out shares nothing
// with its records.
func TestDeliveryCopies(t *testing.T) {
	t.Parallel()
	d, fc := newTestDeliverer(t, Config{})
	rc := deliverytest.NewReceiver(t, fc, "s", func(w http.ResponseWriter, _ *http.Request, _ deliverytest.Hit) {
		w.WriteHeader(http.StatusTeapot)
	})
	body := dlvEnvelope("evt_copy", contextsvc.EventContextCreated)
	want := string(body)
	dl := d.enqueue("evt_copy", contextsvc.EventContextCreated, body, "wh_c", rc.URL, "s")
	body[2] = 'X' // the caller's buffer is not the stored one
	waitDeliveriesIdle(t, d)
	got, _ := d.Get(dl.ID)
	got.Attempts[0].StatusCode = 200
	got.Attempts = append(got.Attempts, Attempt{})
	list := d.List(Filter{})
	list[0].Attempts[0].Error = "changed"
	again, _ := d.Get(dl.ID)
	if len(again.Attempts) != 1 || again.Attempts[0].StatusCode != http.StatusTeapot || again.Attempts[0].Error == "changed" {
		t.Errorf("a returned copy changed the record: %+v", again.Attempts)
	}
	if h := rc.Got(); len(h) != 1 || string(h[0].Body) != want {
		t.Errorf("receiver got %q", h)
	}
}

// TestDeliveryLog checks the per-attempt log record: the delivery's
// identifiers and outcome, never the secret.
func TestDeliveryLog(t *testing.T) {
	t.Parallel()
	var buf deliverytest.LogBuffer
	logger := slog.New(slog.NewTextHandler(&buf, nil))
	d, fc := newTestDeliverer(t, Config{Logger: logger})
	const secret = "whsec_do-not-log-me"
	rc := deliverytest.NewReceiver(t, fc, secret, func(w http.ResponseWriter, _ *http.Request, _ deliverytest.Hit) {
		w.WriteHeader(http.StatusInternalServerError)
	})
	u := strings.Replace(rc.URL, "http://", "http://user:hunter2@", 1)
	dl := d.enqueue("evt_log", contextsvc.EventContextCreated, dlvEnvelope("evt_log", contextsvc.EventContextCreated), "wh_log", u, secret)
	waitDeliveriesIdle(t, d)
	out := buf.String()
	for _, want := range []string{"webhook delivery attempt", "delivery=" + dl.ID, "event=evt_log", "webhook=wh_log",
		"attempt=1", "status=500", "outcome=\"retry scheduled\"", "duration="} {
		if !strings.Contains(out, want) {
			t.Errorf("log %q lacks %q", out, want)
		}
	}
	for _, secretText := range []string{secret, "hunter2"} {
		if strings.Contains(out, secretText) {
			t.Errorf("log %q shows a secret", out)
		}
	}
}

// TestDeliveryWorkersBounded checks that no more than Workers attempts run
// at once, even with many due.
func TestDeliveryWorkersBounded(t *testing.T) {
	t.Parallel()
	const workers = 3
	d, fc := newTestDeliverer(t, Config{Workers: workers})
	var mu sync.Mutex
	running, peak := 0, 0
	arrived := make(chan struct{}, 100)
	release := make(chan struct{})
	rc := deliverytest.NewReceiver(t, fc, "s", func(http.ResponseWriter, *http.Request, deliverytest.Hit) {
		mu.Lock()
		running++
		peak = max(peak, running)
		mu.Unlock()
		arrived <- struct{}{}
		<-release
		mu.Lock()
		running--
		mu.Unlock()
	})
	for i := range 20 {
		d.enqueue(fmt.Sprint("evt_", i), contextsvc.EventContextCreated, dlvEnvelope(fmt.Sprint("evt_", i), contextsvc.EventContextCreated), "wh", rc.URL, "s")
	}
	for range workers {
		<-arrived
	}
	d.mu.Lock()
	if d.running != workers {
		t.Errorf("%d workers running, want %d", d.running, workers)
	}
	d.mu.Unlock()
	close(release)
	waitDeliveriesIdle(t, d)
	if peak > workers {
		t.Errorf("%d attempts ran at once, want at most %d", peak, workers)
	}
	if got := len(d.List(Filter{State: Succeeded})); got != 20 {
		t.Errorf("%d succeeded, want 20", got)
	}
	d.mu.Lock()
	if d.running != 0 || d.timer != nil {
		t.Errorf("idle engine: %d workers, timer %v; want none", d.running, d.timer)
	}
	d.mu.Unlock()
}

// TestDeliveryDefaults checks the configuration's defaults and that the
// schedule is the engine's own copy.
func TestDeliveryDefaults(t *testing.T) {
	t.Parallel()
	d := New(Config{})
	defer d.Close(context.Background())
	if diff := cmp.Diff(DefaultSchedule(), d.schedule); diff != "" {
		t.Errorf("schedule (-want +got):\n%s", diff)
	}
	if d.timeout != DefaultTimeout || d.workers != defaultDeliveryWorkers || d.client.CheckRedirect == nil {
		t.Errorf("timeout %v, workers %d, redirect check %v", d.timeout, d.workers, d.client.CheckRedirect != nil)
	}
	if _, ok := d.clock.(clock.Real); !ok {
		t.Errorf("clock %T, want RealClock", d.clock)
	}
	s := []time.Duration{time.Second, -time.Second}
	d2 := New(Config{Schedule: s})
	defer d2.Close(context.Background())
	s[0] = time.Hour
	if diff := cmp.Diff([]time.Duration{time.Second, 0}, d2.schedule); diff != "" {
		t.Errorf("custom schedule (-want +got):\n%s", diff)
	}
	if a, b := DefaultSchedule(), DefaultSchedule(); &a[0] == &b[0] {
		t.Error("DefaultRetrySchedule returns a shared slice")
	}
}

// TestDeliveryNoRetries checks that an empty schedule means one attempt.
func TestDeliveryNoRetries(t *testing.T) {
	t.Parallel()
	d, fc := newTestDeliverer(t, Config{Schedule: []time.Duration{}})
	rc := deliverytest.NewReceiver(t, fc, "s", func(w http.ResponseWriter, _ *http.Request, _ deliverytest.Hit) {
		w.WriteHeader(http.StatusInternalServerError)
	})
	dl := d.enqueue("evt_once", contextsvc.EventContextCreated, dlvEnvelope("evt_once", contextsvc.EventContextCreated), "wh", rc.URL, "s")
	waitDeliveriesIdle(t, d)
	if got, _ := d.Get(dl.ID); got.State != Failed || len(got.Attempts) != 1 {
		t.Errorf("state %s after %d attempts, want failed after 1", got.State, len(got.Attempts))
	}
}

// TestDeliveryRealClock runs a compressed schedule on the real clock, as the
// standalone command does with -retry-schedule.
func TestDeliveryRealClock(t *testing.T) {
	t.Parallel()
	d := New(Config{Schedule: []time.Duration{time.Millisecond, 2 * time.Millisecond}})
	defer d.Close(context.Background())
	rc := deliverytest.NewReceiver(t, clock.Real{}, "s", func(w http.ResponseWriter, _ *http.Request, h deliverytest.Hit) {
		if deliverytest.AttemptNumber(h) < 3 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	dl := d.enqueue("evt_real", contextsvc.EventContextCreated, dlvEnvelope("evt_real", contextsvc.EventContextCreated), "wh", rc.URL, "s")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	got, err := d.WaitFor(ctx, func(x Delivery) bool { return x.ID == dl.ID && x.State != Pending })
	if err != nil {
		t.Fatal(err)
	}
	if got.State != Succeeded || len(got.Attempts) != 3 {
		t.Fatalf("state %s after %d attempts, want succeeded after 3", got.State, len(got.Attempts))
	}
	for i := 1; i < 3; i++ {
		if gap := got.Attempts[i].StartedAt.Sub(got.Attempts[i-1].StartedAt); gap < d.schedule[i-1] {
			t.Errorf("attempt %d started %v after the previous one, want at least %v", i+1, gap, d.schedule[i-1])
		}
	}
}

// jumpyClock is a Fake that "another goroutine" moves by jump just
// as the delivery engine arms a timer for the jumpAt-th time: after the
// engine has read the clock, before the timer is registered. That is what
// a test's Advance, or the admin API's, does when it moves the time while
// the engine arms a timer outside a worker (a state being restored): it
// moves the time first, then fires the due timers and waits for their
// work, which waits for the engine's lock, held by the arming goroutine.
type jumpyClock struct {
	*clock.Fake
	jump   time.Duration
	jumpAt int
	mu     sync.Mutex
	calls  int
}

func (c *jumpyClock) maybeJump() {
	c.mu.Lock()
	c.calls++
	jump := c.calls == c.jumpAt
	c.mu.Unlock()
	if jump {
		// Nothing is due within the jump (the engine's one timer has
		// fired, and the next is the one being armed), so the advance
		// only moves the time, and returns without waiting for the
		// engine's lock, which the arming goroutine holds.
		c.Fake.Advance(c.jump)
	}
}

func (c *jumpyClock) AfterFunc(d time.Duration, f func()) clock.Timer {
	c.maybeJump()
	return c.Fake.AfterFunc(d, f)
}

func (c *jumpyClock) AfterFuncAt(at time.Time, f func()) clock.Timer {
	c.maybeJump()
	return c.Fake.AfterFuncAt(at, f)
}

// relativeClock hides jumpyClock's AfterFuncAt: a clock of the user's own,
// with only the interface's relative AfterFunc.
type relativeClock struct{ c *jumpyClock }

func (r relativeClock) Now() time.Time { return r.c.Now() }

func (r relativeClock) AfterFunc(d time.Duration, f func()) clock.Timer { return r.c.AfterFunc(d, f) }

// TestDeliveryAdvanceWhileArming advances the fake clock past a retry's due
// time while the engine arms the timer for it: the retry still runs at once,
// and WaitIdle returns, without waiting for another Advance.
func TestDeliveryAdvanceWhileArming(t *testing.T) {
	t.Parallel()
	for _, absolute := range []bool{true, false} {
		t.Run(fmt.Sprint("absolute=", absolute), func(t *testing.T) {
			t.Parallel()
			// Timers armed: 1 for A's retry; 2 for B's, once A's has fired.
			jumpy := &jumpyClock{Fake: clock.New(t0), jump: time.Minute, jumpAt: 2}
			var fc clock.Clock = jumpy
			if !absolute {
				fc = relativeClock{jumpy}
			}
			d, _ := newTestDeliverer(t, Config{Clock: fc})
			rc := deliverytest.NewReceiver(t, fc, "s", func(w http.ResponseWriter, _ *http.Request, h deliverytest.Hit) {
				if deliverytest.AttemptNumber(h) == 1 {
					w.WriteHeader(http.StatusInternalServerError)
				}
			})
			a := d.enqueue("evt_a", contextsvc.EventContextCreated, dlvEnvelope("evt_a", contextsvc.EventContextCreated), "wh_j", rc.URL, "s")
			waitDeliveriesIdle(t, d) // A's retry due at +1m
			jumpy.Advance(30 * time.Second)
			b := d.enqueue("evt_b", contextsvc.EventContextCreated, dlvEnvelope("evt_b", contextsvc.EventContextCreated), "wh_j", rc.URL, "s")
			waitDeliveriesIdle(t, d) // B's retry due at +1m30s
			// A's retry runs; then the engine arms the timer for B's and
			// the clock jumps to +2m meanwhile.
			jumpy.Advance(30 * time.Second)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if err := d.WaitIdle(ctx); err != nil {
				t.Fatalf("waitIdle: %v (B's retry, due at +1m30s with the clock at +2m, did not run)", err)
			}
			if now := jumpy.Now(); !now.Equal(t0.Add(2 * time.Minute)) {
				t.Fatalf("the clock is at +%v, want +2m: the test did not jump", now.Sub(t0))
			}
			for _, dl := range []Delivery{a, b} {
				got, _ := d.Get(dl.ID)
				if got.State != Succeeded || len(got.Attempts) != 2 {
					t.Errorf("%s: %s after %d attempts, want succeeded after 2", got.EventID, got.State, len(got.Attempts))
				}
			}
		})
	}
}

// TestDeliveryFilterMatch checks that every non-empty field of a filter
// must match, and that list applies the same rule.
func TestDeliveryFilterMatch(t *testing.T) {
	t.Parallel()
	dl := Delivery{ID: "dlv_1", EventID: "evt_1", WebhookID: "wh_1", State: Failed}
	tests := []struct {
		name string
		f    Filter
		want bool
	}{
		{"zero", Filter{}, true},
		{"event", Filter{EventID: "evt_1"}, true},
		{"other event", Filter{EventID: "evt_2"}, false},
		{"webhook", Filter{WebhookID: "wh_1"}, true},
		{"other webhook", Filter{WebhookID: "wh_2"}, false},
		{"state", Filter{State: Failed}, true},
		{"other state", Filter{State: Pending}, false},
		{"all three", Filter{EventID: "evt_1", WebhookID: "wh_1", State: Failed}, true},
		{"two match, one not", Filter{EventID: "evt_1", WebhookID: "wh_1", State: Succeeded}, false},
	}
	for _, tt := range tests {
		if got := tt.f.Match(dl); got != tt.want {
			t.Errorf("%s: Match = %v, want %v", tt.name, got, tt.want)
		}
	}

	d, fc := newTestDeliverer(t, Config{Schedule: []time.Duration{}})
	rc := deliverytest.NewReceiver(t, fc, "s", func(w http.ResponseWriter, _ *http.Request, h deliverytest.Hit) {
		if h.Header.Get("X-Service-Event") == string(contextsvc.EventContextDeleted) {
			w.WriteHeader(http.StatusGone)
		}
	})
	for i, typ := range []contextsvc.EventType{contextsvc.EventContextCreated, contextsvc.EventContextDeleted} {
		id := fmt.Sprint("evt_", i)
		for _, wh := range []string{"wh_1", "wh_2"} {
			d.enqueue(id, typ, dlvEnvelope(id, typ), wh, rc.URL, "s")
		}
	}
	waitDeliveriesIdle(t, d)
	all := d.List(Filter{})
	for _, tt := range tests {
		var want []string
		for _, x := range all {
			if tt.f.Match(x) {
				want = append(want, x.ID)
			}
		}
		var got []string
		for _, x := range d.List(tt.f) {
			got = append(got, x.ID)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: list (-Match +list):\n%s", tt.name, diff)
		}
	}
}

// waitEnqueuesWaiting waits until n enqueues wait for room.
func waitEnqueuesWaiting(t *testing.T, d *Engine, n uint64) {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.tickets-d.serving < n {
		d.changed.Wait()
	}
}

// TestDeliveryBacklog fills the backlog of deliveries waiting for their
// first attempt: the next enqueues wait for room, and go in the order they
// came as attempts start; a reset or a close lets every waiting one go.
func TestDeliveryBacklog(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	started := make(chan struct{}, 16)
	d, fc := newTestDeliverer(t, Config{Workers: 1, MaxBacklog: 2, Schedule: []time.Duration{}})
	rc := deliverytest.NewReceiver(t, fc, "s", func(http.ResponseWriter, *http.Request, deliverytest.Hit) {
		started <- struct{}{}
		<-release
	})
	t.Cleanup(func() { close(release) })
	typ := contextsvc.EventContextCreated
	enqueue := func(i int) {
		id := fmt.Sprint("evt_", i)
		d.enqueue(id, typ, dlvEnvelope(id, typ), "wh", rc.URL, "s")
	}
	enqueue(0)
	<-started // in flight: no longer waiting for its first attempt
	enqueue(1)
	enqueue(2) // the backlog is full
	done := make(chan int, 4)
	go func() { enqueue(3); done <- 3 }()
	waitEnqueuesWaiting(t, d, 1)
	go func() { enqueue(4); done <- 4 }()
	waitEnqueuesWaiting(t, d, 2)
	select {
	case i := <-done:
		t.Fatalf("enqueue %d did not wait for room", i)
	default:
	}
	release <- struct{}{} // attempt 0 ends; 1 starts, making room for one
	<-started
	if i := <-done; i != 3 {
		t.Fatalf("enqueue %d went first, want 3 (arrival order)", i)
	}
	select {
	case <-done:
		t.Fatal("two enqueues went for one free place")
	default:
	}
	release <- struct{}{}
	<-started
	if i := <-done; i != 4 {
		t.Fatalf("enqueue %d, want 4", i)
	}

	// A reset empties the backlog: a waiting enqueue goes at once.
	go func() { enqueue(5); done <- 5 }()
	waitEnqueuesWaiting(t, d, 1)
	d.Reset()
	if i := <-done; i != 5 {
		t.Fatalf("after reset: enqueue %d", i)
	}
	// So does close: no attempt would ever make room.
	<-started // 5 is in flight
	enqueue(6)
	enqueue(7)
	go func() { enqueue(8); done <- 8 }()
	waitEnqueuesWaiting(t, d, 1)
	go func() { _ = d.Close(context.Background()) }()
	if i := <-done; i != 8 {
		t.Fatalf("after close: enqueue %d", i)
	}
}

// TestDeliveryBacklogWaitEnds: an enqueue waiting for room in a full
// backlog stops waiting when its context ends (the request that fired the
// event was given up): the delivery is recorded failed, saying why, with
// no attempt, and the enqueues that came after it still go in order once
// room appears.
func TestDeliveryBacklogWaitEnds(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	started := make(chan struct{}, 16)
	d, fc := newTestDeliverer(t, Config{Workers: 1, MaxBacklog: 1, Schedule: []time.Duration{}})
	rc := deliverytest.NewReceiver(t, fc, "s", func(http.ResponseWriter, *http.Request, deliverytest.Hit) {
		started <- struct{}{}
		<-release
	})
	t.Cleanup(func() { close(release) })
	typ := contextsvc.EventContextCreated
	enqueue := func(ctx context.Context, i int) Delivery {
		id := fmt.Sprint("evt_", i)
		return d.enqueueCtx(ctx, id, typ, dlvEnvelope(id, typ), "wh", rc.URL, "s")
	}
	enqueue(t.Context(), 0)
	<-started               // in flight
	enqueue(t.Context(), 1) // the backlog is full
	ctx, cancel := context.WithCancel(t.Context())
	given, later := make(chan Delivery, 1), make(chan Delivery, 1)
	go func() { given <- enqueue(ctx, 2) }()
	waitEnqueuesWaiting(t, d, 1)
	go func() { later <- enqueue(t.Context(), 3) }()
	waitEnqueuesWaiting(t, d, 2)

	cancel()
	dl := <-given // the enqueue whose context ended
	if dl.State != Failed || len(dl.Attempts) != 0 || !strings.Contains(dl.FailureReason, "backlog") {
		t.Errorf("given-up delivery: state %s, %d attempts, reason %q; want failed, none, saying why", dl.State, len(dl.Attempts), dl.FailureReason)
	}
	if got, ok := d.Get(dl.ID); !ok || got.State != Failed {
		t.Errorf("given-up delivery is not kept as failed: %+v, %v", got, ok)
	}
	select {
	case dl := <-later:
		t.Fatalf("enqueue 3 went without room: %+v", dl)
	default:
	}
	release <- struct{}{} // attempt 0 ends; 1 starts, making room
	<-started
	if dl := <-later; dl.EventID != "evt_3" || dl.State != Pending {
		t.Errorf("enqueue 3: %+v", dl)
	}
	// A given-up delivery can be sent by hand.
	release <- struct{}{}
	<-started // 3 is in flight
	if _, err := d.Redeliver(dl.ID); err != nil {
		t.Fatal(err)
	}
	release <- struct{}{}
	<-started // the redelivery
	release <- struct{}{}
	waitDeliveriesIdle(t, d)
	if got, _ := d.Get(dl.ID); got.State != Succeeded || len(got.Attempts) != 1 {
		t.Errorf("redelivered: %s with %d attempts", got.State, len(got.Attempts))
	}
}

// TestDeliveryRetryLimit: at most RetryLimit deliveries wait for a retry.
// A delivery whose attempt fails while that many wait gets no retry: it
// ends failed at once, saying why, and can be redelivered by hand; a
// delivery that succeeds needs no room. As retries end, room comes back.
func TestDeliveryRetryLimit(t *testing.T) {
	t.Parallel()
	d, fc := newTestDeliverer(t, Config{Workers: 1, RetryLimit: 2, Schedule: []time.Duration{time.Minute}})
	failing := deliverytest.NewReceiver(t, fc, "s", func(w http.ResponseWriter, _ *http.Request, _ deliverytest.Hit) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	healthy := deliverytest.NewReceiver(t, fc, "s", func(http.ResponseWriter, *http.Request, deliverytest.Hit) {})
	typ := contextsvc.EventContextCreated
	send := func(i int, url string) Delivery {
		id := fmt.Sprint("evt_", i)
		dl := d.enqueue(id, typ, dlvEnvelope(id, typ), "wh_"+url, url, "s")
		waitDeliveriesIdle(t, d)
		got, _ := d.Get(dl.ID)
		return got
	}
	for i := range 2 {
		if dl := send(i, failing.URL); dl.State != Pending || dl.NextAttemptAt.IsZero() {
			t.Fatalf("delivery %d: %s, next attempt %v; want a retry waiting", i, dl.State, dl.NextAttemptAt)
		}
	}
	full := send(2, failing.URL)
	if full.State != Failed || len(full.Attempts) != 1 || !strings.Contains(full.FailureReason, "retry") {
		t.Errorf("past the limit: %s with %d attempts, reason %q; want failed after its one attempt, saying why",
			full.State, len(full.Attempts), full.FailureReason)
	}
	if dl := send(3, healthy.URL); dl.State != Succeeded {
		t.Errorf("a delivery to a healthy receiver: %s", dl.State)
	}
	// The two retries run (and fail for good, the schedule is over): room
	// for retries again.
	fc.Advance(time.Minute)
	waitDeliveriesIdle(t, d)
	if dl := send(4, failing.URL); dl.State != Pending || dl.NextAttemptAt.IsZero() {
		t.Errorf("after the retries ended: %s, next attempt %v; want a retry waiting", dl.State, dl.NextAttemptAt)
	}
	// By hand, the one refused a retry gets its attempt.
	if dl, err := d.Redeliver(full.ID); err != nil || dl.State != Pending {
		t.Fatalf("redeliver: %+v %v", dl, err)
	}
	waitDeliveriesIdle(t, d)
	if dl, _ := d.Get(full.ID); len(dl.Attempts) != 2 {
		t.Errorf("redelivered: %d attempts", len(dl.Attempts))
	}
}

// TestDeliveryRetryLimitAfterRestore: deliveries restored while waiting for
// a retry count toward RetryLimit as the engine's own do. With the limit
// taken by restored retries, a new failure gets no retry; once they have
// had their attempts, room comes back.
func TestDeliveryRetryLimitAfterRestore(t *testing.T) {
	t.Parallel()
	d, fc := newTestDeliverer(t, Config{Workers: 1, RetryLimit: 2, Schedule: []time.Duration{time.Minute}})
	failing := deliverytest.NewReceiver(t, fc, "s", func(w http.ResponseWriter, _ *http.Request, _ deliverytest.Hit) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	typ := contextsvc.EventContextCreated
	send := func(i int) Delivery {
		id := fmt.Sprint("evt_", i)
		dl := d.enqueue(id, typ, dlvEnvelope(id, typ), "wh_f", failing.URL, "s")
		waitDeliveriesIdle(t, d)
		got, _ := d.Get(dl.ID)
		return got
	}
	var waiting []string
	for i := range 2 {
		dl := send(i)
		if dl.State != Pending || dl.NextAttemptAt.IsZero() {
			t.Fatalf("delivery %d: %s; want a retry waiting", i, dl.State)
		}
		waiting = append(waiting, dl.ID)
	}
	// Save and restore them, as a state file does across a restart.
	saved, seq := d.SavePending()
	if len(saved) != 2 {
		t.Fatalf("saved %d pending deliveries, want 2", len(saved))
	}
	d.mu.Lock()
	for i := range saved {
		saved[i].Hook = d.recs[saved[i].ID].hook.t
	}
	d.mu.Unlock()
	d.Restore(saved, seq)
	waitDeliveriesIdle(t, d)
	for _, id := range waiting {
		if dl, ok := d.Get(id); !ok || dl.State != Pending {
			t.Fatalf("restored %s: %+v, %v; want pending", id, dl, ok)
		}
	}
	if dl := send(2); dl.State != Failed || !strings.Contains(dl.FailureReason, "retry") {
		t.Errorf("a failure while the restored retries fill the limit: %s, reason %q; want failed for want of room",
			dl.State, dl.FailureReason)
	}
	fc.Advance(time.Minute) // the restored retries run, and end (the schedule is over)
	waitDeliveriesIdle(t, d)
	if dl := send(3); dl.State != Pending || dl.NextAttemptAt.IsZero() {
		t.Errorf("after the restored retries ended: %s; want a retry waiting", dl.State)
	}
}

// TestDeliveryHistoryLimit keeps 3 finished deliveries: those that finished
// first go first, a pending delivery is never dropped, however many there
// are, and an event's body goes with its last delivery.
func TestDeliveryHistoryLimit(t *testing.T) {
	t.Parallel()
	d, fc := newTestDeliverer(t, Config{History: 3, Schedule: []time.Duration{}})
	ok := deliverytest.NewReceiver(t, fc, "s", func(http.ResponseWriter, *http.Request, deliverytest.Hit) {})
	down := deliverytest.NewReceiver(t, fc, "s", func(w http.ResponseWriter, _ *http.Request, _ deliverytest.Hit) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	send := func(id, url string) string {
		dl := d.enqueue(id, contextsvc.EventContextCreated, dlvEnvelope(id, contextsvc.EventContextCreated), "wh_1", url, "s")
		waitDeliveriesIdle(t, d)
		return dl.ID
	}
	var want []string
	for i := range 6 {
		want = append(want, send(fmt.Sprint("evt_ok", i), ok.URL))
	}
	got := d.List(Filter{})
	if len(got) != 3 || got[0].ID != want[3] || got[2].ID != want[5] {
		t.Fatalf("kept %d deliveries, want the last 3 of 6", len(got))
	}
	d.mu.Lock()
	if len(d.events) != 3 || len(d.byEvent) != 3 || len(d.recs) != 3 {
		t.Errorf("the engine holds %d event bodies, %d event indexes, %d records; want 3 of each", len(d.events), len(d.byEvent), len(d.recs))
	}
	d.mu.Unlock()

	// Pending deliveries are kept whatever their number: close the senders
	// so that 10 stay pending.
	d2, fc2 := newTestDeliverer(t, Config{History: 2, Schedule: []time.Duration{time.Hour}})
	down2 := deliverytest.NewReceiver(t, fc2, "s", func(w http.ResponseWriter, _ *http.Request, _ deliverytest.Hit) {
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	for i := range 10 {
		id := fmt.Sprint("evt_p", i)
		d2.enqueue(id, contextsvc.EventContextCreated, dlvEnvelope(id, contextsvc.EventContextCreated), "wh_1", down2.URL, "s")
	}
	waitDeliveriesIdle(t, d2)
	if n := len(d2.List(Filter{State: Pending})); n != 10 {
		t.Fatalf("%d pending, want 10 (each waits for its retry)", n)
	}
	fc2.Advance(time.Hour)
	waitDeliveriesIdle(t, d2)
	if all, failed := d2.List(Filter{}), d2.List(Filter{State: Failed}); len(all) != 2 || len(failed) != 2 {
		t.Errorf("after all failed: %d kept, %d failed; want the last 2 to fail", len(all), len(failed))
	}

	// A redelivered delivery is pending again: it leaves the history's
	// count, and when it finishes it counts as the newest.
	kept := d.List(Filter{})
	if _, err := d.Redeliver(kept[0].ID); err != nil {
		t.Fatal(err)
	}
	waitDeliveriesIdle(t, d)
	send("evt_down", down.URL) // fails: finishes last
	got = d.List(Filter{})
	if len(got) != 3 || got[0].ID != kept[0].ID || got[1].ID != kept[2].ID || got[2].EventID != "evt_down" {
		t.Errorf("after a redelivery: kept %v", deliveryIDs(got))
	}
	// Redelivering many times leaves no garbage behind.
	for range 500 {
		if _, err := d.Redeliver(got[0].ID); err != nil {
			t.Fatal(err)
		}
		waitDeliveriesIdle(t, d)
	}
	d.mu.Lock()
	if n := d.finished.Len(); n > 2*3+64 {
		t.Errorf("the finished list holds %d entries for 3 finished deliveries", n)
	}
	d.mu.Unlock()
}

// t0 is when every fake clock of these tests starts.
var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

func deliveryIDs(ds []Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}
