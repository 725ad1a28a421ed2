package mockserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery/deliverytest"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/statefile"
)

// stateKeys are two keys of two accounts with fixed users, as the command
// gives them, so that a restart finds the same accounts.
var stateKeys = []Option{
	WithKey(Key{Token: "sk_state_a", Account: "team-a", User: "user_aaaaaaaaaaaaaaaaaaaaaaaa", Plan: PlanUnlimited}),
	WithKey(Key{Token: "sk_state_b", Account: "team-b", User: "user_bbbbbbbbbbbbbbbbbbbbbbbb", Plan: PlanUnlimited}),
}

// stateServer starts a test server on clock with the two accounts and
// the state file at path.
// withStateHooks sets the hooks of the state file's keeper.
func withStateHooks(h statefile.Hooks) Option {
	return func(cf *config) error { cf.stateHooks = h; return nil }
}

func stateServer(t *testing.T, clock *FakeClock, path string, opts ...Option) *TestServer {
	t.Helper()
	all := append([]Option{WithClock(clock), WithStateFile(path)}, stateKeys...)
	return NewTestServer(t, append(all, opts...)...)
}

// stop stops a test server as the command does: HTTP first, then the
// deliveries and the last write of the state file.
func stop(t *testing.T, ts *TestServer) {
	t.Helper()
	ts.HTTP.Close()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := ts.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

// saveState returns the server's state document.
func saveState(t *testing.T, s *Server) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := s.SaveState(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// failUntilAttempt answers 500 to every attempt numbered below n, then 204.
func failUntilAttempt(n int) func(w http.ResponseWriter, r *http.Request, h deliverytest.Hit) {
	return func(w http.ResponseWriter, r *http.Request, h deliverytest.Hit) {
		if deliverytest.AttemptNumber(h) < n {
			http.Error(w, "not yet", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}
}

// TestStateSurvivesRestart fills a server (two accounts, contexts with
// versions and a gap left by a delete, webhooks, deliveries waiting for
// their third attempt), stops it, and starts another on the same state
// file: everything is back, the document it would write is byte for byte
// the first one, cursors of the first server page the second, the next
// update diffs against the restored text, and the deliveries continue
// their schedule with their attempt numbers, signed with their webhook's
// secret.
func TestStateSurvivesRestart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	clock := NewFakeClock(dlvT0)
	ts1 := stateServer(t, clock, path)
	rc := deliverytest.NewReceiver(t, clock, "whsec_one", failUntilAttempt(3))
	down := deliverytest.NewReceiver(t, clock, "whsec_two", failing(1000))
	hook := registerHook(t, ts1, rc.URL, "whsec_one", contextsvc.EventContextCreated)
	registerHook(t, ts1, down.URL, "whsec_two", contextsvc.EventContextUpdated, contextsvc.EventContextDeleted)

	var ids []string
	for i, body := range []string{
		`{"name":"Runbook","content":"# Start\n\nOne two.\n\n# Stop\n\nThree.","tags":["ops","db"]}`,
		`{"name":"Gone soon"}`,
		`{"name":"Ünïcödé Straße","content":"日本語 text <b>&amp;</b>\ttab","tags":["ops"]}`,
		`{"name":"Four"}`,
		`{"name":"Five","tags":["db"]}`,
	} {
		c := create(t, ts1, body)
		ids = append(ids, c.ID)
		if i == 0 {
			for _, up := range []string{`{"content":"# Start\n\nOne two four.\n\n# Stop\n\nThree."}`, `{"name":"Runbook v2"}`, `{"tags":["db"]}`} {
				if r := do(t, ts1, call{method: "PUT", path: "/v1/contexts/" + c.ID, body: up}); r.Status != 200 {
					t.Fatalf("update: %d %s", r.Status, r.Body)
				}
			}
		}
	}
	if r := do(t, ts1, call{method: "DELETE", path: "/v1/contexts/" + ids[1]}); r.Status != 200 {
		t.Fatalf("delete: %d", r.Status)
	}
	otherB := do(t, ts1, call{method: "POST", path: "/v1/contexts", key: "sk_state_b", body: `{"name":"B's own"}`})
	if otherB.Status != 201 {
		t.Fatalf("create in B: %d", otherB.Status)
	}
	idle(t, ts1)
	clock.Advance(time.Minute)
	idle(t, ts1) // the second attempts fail too; the third are due in 5 min

	// Pages and cursors as the first server gives them.
	page1 := do(t, ts1, call{method: "GET", path: "/v1/contexts?limit=2"})
	var l listBody
	page1.json(t, &l)
	if l.NextCursor == nil {
		t.Fatal("no cursor")
	}
	cursor := *l.NextCursor
	page2 := do(t, ts1, call{method: "GET", path: "/v1/contexts?limit=2&cursor=" + cursor})
	versions1 := do(t, ts1, call{method: "GET", path: "/v1/contexts/" + ids[0] + "/versions?limit=1"})
	var vl struct{ NextCursor *string }
	versions1.json(t, &vl)
	versions2 := do(t, ts1, call{method: "GET", path: "/v1/contexts/" + ids[0] + "/versions?limit=2&cursor=" + *vl.NextCursor})

	dpage1 := do(t, ts1, call{method: "GET", path: "/_mock/deliveries?limit=4", key: "-"})
	var dl struct{ NextCursor *string }
	dpage1.json(t, &dl)
	dpage2 := do(t, ts1, call{method: "GET", path: "/_mock/deliveries?limit=4&cursor=" + *dl.NextCursor, key: "-"})

	snap, pending := ts1.Snapshot(), ts1.Deliveries(DeliveryFilter{State: DeliveryPending})
	if len(pending) != 9 { // 5 creations to rc, 3 updates and a delete to down
		t.Fatalf("%d pending deliveries before the restart, want 9", len(pending))
	}
	doc := saveState(t, ts1.Server)
	stop(t, ts1)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatalf("no state file after Close: %v", err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("state file mode %v, want 0600", info.Mode().Perm())
	}

	ts2 := stateServer(t, clock, path)
	if diff := cmp.Diff(snap, ts2.Snapshot()); diff != "" {
		t.Errorf("store after restart (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(pending, ts2.Deliveries(DeliveryFilter{})); diff != "" {
		t.Errorf("deliveries after restart (-before +after):\n%s", diff)
	}
	if again := saveState(t, ts2.Server); !bytes.Equal(doc, again) {
		t.Errorf("the restarted server's document differs from the first's:\n%s\n---\n%s", doc, again)
	}
	for _, c := range []struct {
		path string
		want *response
	}{
		{"/v1/contexts?limit=2&cursor=" + cursor, page2},
		{"/v1/contexts/" + ids[0] + "/versions?limit=2&cursor=" + *vl.NextCursor, versions2},
		{"/_mock/deliveries?limit=4&cursor=" + *dl.NextCursor, dpage2},
	} {
		if got := do(t, ts2, call{method: "GET", path: c.path}); got.Status != 200 || !bytes.Equal(got.Body, c.want.Body) {
			t.Errorf("GET %s after restart: %d %s\nbefore: %s", c.path, got.Status, got.Body, c.want.Body)
		}
	}
	if r := do(t, ts2, call{method: "GET", path: "/v1/contexts/" + ids[1]}); r.Status != 404 {
		t.Errorf("the deleted context after restart: %d", r.Status)
	}
	if r := do(t, ts2, call{method: "GET", path: "/v1/contexts/" + ids[0], key: "sk_state_b"}); r.Status != 404 {
		t.Errorf("A's context with B's key after restart: %d", r.Status)
	}

	// The next update is diffed against the restored text: only the
	// section it changes is listed.
	r := do(t, ts2, call{method: "PUT", path: "/v1/contexts/" + ids[0], body: `{"content":"# Start\n\nOne two four.\n\n# Stop\n\nThree and more."}`})
	var updated model.ContextJSON
	r.json(t, &updated)
	if updated.Version != 5 {
		t.Errorf("version after the restart's update: %d, want 5", updated.Version)
	}
	sc, _ := ts2.Context(ids[0])
	if diff := cmp.Diff(contextsvc.Changes{SectionsModified: []string{"Stop"}, WordCountDelta: 2}, sc.Versions[4].Changes); diff != "" {
		t.Errorf("changes of the first update after restart (-want +got):\n%s", diff)
	}
	// A new context comes after every one of before, the deleted included.
	c6 := create(t, ts2, `{"name":"Six"}`)
	sc6, _ := ts2.Context(c6.ID)
	all := ts2.Contexts("team-a")
	if all[len(all)-1].ID != sc6.ID {
		t.Errorf("the new context is not last: %v", all)
	}

	// The schedule continues: attempt 3 of each rc delivery is due 5 min
	// after the second, and succeeds.
	clock.Advance(5 * time.Minute)
	idle(t, ts2)
	hits := rc.Got()
	third := 0
	for _, h := range hits {
		if deliverytest.AttemptNumber(h) == 3 {
			third++
		}
		if deliverytest.AttemptNumber(h) > 3 {
			t.Errorf("attempt %d after restart", deliverytest.AttemptNumber(h))
		}
	}
	if third != 5 {
		t.Errorf("%d third attempts after restart, want 5 (one per context created)", third)
	}
	for _, before := range pending {
		if before.WebhookID != hook {
			continue
		}
		d, _ := ts2.Delivery(before.ID)
		if d.State != DeliverySucceeded || len(d.Attempts) != 3 {
			t.Errorf("delivery %s after restart: %s with %d attempts", d.ID, d.State, len(d.Attempts))
		}
	}
}

// TestStateDocumentShape checks the written document against the
// MockState schema and its line layout: one item per line, format and
// version first.
func TestStateDocumentShape(t *testing.T) {
	t.Parallel()
	ts, clock := newFakeTestServer(t)
	rc := deliverytest.NewReceiver(t, clock, "s3cr3t", failUntilAttempt(2))
	registerHook(t, ts, rc.URL, "s3cr3t", contextsvc.EventContextCreated)
	create(t, ts, `{"name":"One","content":"a\nb"}`)
	create(t, ts, `{"name":"Two"}`)
	idle(t, ts)
	doc := saveState(t, ts.Server)
	if !bytes.HasPrefix(doc, []byte(`{"format":"contextsvc-mock-state","version":1,"savedAt":"2026-11-21T12:00:00.000Z","clock":"fake","cursorSalt":"`)) {
		t.Errorf("document starts %.120s", doc)
	}
	lines := strings.Split(strings.TrimSpace(string(doc)), "\n")
	var kinds []string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, `{"id":"ctx_`):
			kinds = append(kinds, "context")
		case strings.HasPrefix(l, `{"id":"wh_`):
			kinds = append(kinds, "webhook")
		case strings.HasPrefix(l, `{"id":"evt_`):
			kinds = append(kinds, "event")
		case strings.HasPrefix(l, `{"id":"dlv_`):
			kinds = append(kinds, "delivery")
		}
	}
	want := []string{"context", "context", "webhook", "event", "event", "delivery", "delivery"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("one item a line (-want +got):\n%s\n%s", diff, doc)
	}
	if strings.Contains(string(doc), "s3cr3t") == false {
		t.Error("the document lacks the webhook's secret")
	}
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatal(err)
	}
	d, _ := spec()
	if err := d.Components.Schemas["MockState"].Value.VisitJSON(v); err != nil {
		t.Errorf("the document does not match MockState: %v", err)
	}
	// GET /_mock/state sends the same document (the validating wrapper
	// checks it against the schema too).
	r := do(t, ts, call{method: "GET", path: "/_mock/state", key: "-"})
	if r.Status != 200 || r.Header.Get("Content-Type") != "application/json" || !bytes.Equal(r.Body, doc) {
		t.Errorf("GET /_mock/state: %d %s\n%s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
}

// TestStateFileMissingThenWritten: a missing file is a first start; the
// file is written at Close, and at every interval while the state changes.
func TestStateFileMissingThenWritten(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	clock := NewFakeClock(dlvT0)
	saved := make(chan error, 16)
	ts := stateServer(t, clock, path, WithStateInterval(time.Millisecond),
		withStateHooks(statefile.Hooks{Saved: func(err error) { saved <- err }}))
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a state file before any change: %v", err)
	}
	c := create(t, ts, `{"name":"Periodic"}`)
	err := <-saved
	if err != nil {
		t.Fatal(err)
	}
	s2, err := Open(append([]Option{WithClock(clock)}, stateKeys...)...)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := s2.LoadState(f); err != nil {
		t.Fatal(err)
	}
	if _, ok := s2.Context(c.ID); !ok {
		t.Error("the periodic save lacks the context")
	}
	// Without a change, no timer is armed.
	if armed, changed := ts.svc.StateFileStatus(); armed && !changed {
		t.Error("a save is armed with nothing changed")
	}
}

// TestStateCloseWaitsForASave: Close while the timer's save is writing
// waits for that write (which took the state and cleared the flag of its
// changes), so when Close returns the file holds the state as of Close,
// and no write is left running for the command's exit to cut short.
func TestStateCloseWaitsForASave(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	// The hooks watch the saves once the file is current (watching).
	var watching atomic.Bool
	writing, release := make(chan struct{}), make(chan struct{})
	var first, closing sync.Once
	var saves atomic.Int32
	hooks := statefile.Hooks{
		Writing: func() {
			if watching.Load() {
				first.Do(func() { close(writing); <-release })
			}
		},
		Saved: func(err error) {
			if watching.Load() && err == nil {
				saves.Add(1)
			}
		},
		// The timer's write goes on once Close has begun (the test
		// server's cleanup closes it again).
		Closing: func() { closing.Do(func() { close(release) }) },
	}
	ts := stateServer(t, NewFakeClock(dlvT0), path, WithStateInterval(time.Millisecond), withStateHooks(hooks))
	if err := ts.svc.SaveStateFile(); err != nil { // the file is current
		t.Fatal(err)
	}
	watching.Store(true)

	if err := ts.LoadState(strings.NewReader(fixtureState)); err != nil { // a change: the timer's save
		t.Fatal(err)
	}
	<-writing
	ts.HTTP.Close()
	if err := ts.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := saves.Load(); n != 1 {
		t.Fatalf("%d saves had finished when Close returned, want the timer's one", n)
	}
	s2, err := Open(append([]Option{WithStateFile(path)}, stateKeys...)...)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ts.Snapshot(), s2.Snapshot()); diff != "" {
		t.Errorf("the file after Close (-the server +the file):\n%s", diff)
	}
}

// TestStateWebhooksSurviveRestart: what webhook management changes lives
// through a restart: an inactive webhook stays inactive, a deleted one and
// its ended deliveries stay gone, a rotated secret signs the retries after
// the restart, the webhook list's cursors go on, and a change made through
// the Go methods alone reaches the file.
func TestStateWebhooksSurviveRestart(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.json")
	clock := NewFakeClock(dlvT0)
	var mu sync.Mutex
	var sigs []string // signature of each attempt, in order
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		sigs = append(sigs, r.Header.Get("X-Service-Signature")+" "+r.Header.Get("X-Service-Delivery-Attempt")+" "+deliverytest.Signature(body, "whsec_new"))
		mu.Unlock()
		if r.Header.Get("X-Service-Delivery-Attempt") == "1" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(rc.Close)

	ts1 := stateServer(t, clock, path)
	kept := registerHook(t, ts1, rc.URL, "whsec_old", contextsvc.EventContextCreated)
	paused := registerHook(t, ts1, rc.URL, "whsec_paused", contextsvc.EventContextCreated)
	gone := registerHook(t, ts1, rc.URL, "whsec_gone", contextsvc.EventContextCreated)
	create(t, ts1, `{"name":"Delivered thrice"}`)
	idle(t, ts1) // attempt 1 of each of the three fails
	if err := ts1.svc.SaveStateFile(); err != nil {
		t.Fatal(err)
	}
	// Changes through the Go methods only, after the last write.
	secret, off := "whsec_new", false
	if _, err := ts1.UpdateWebhook(kept, WebhookUpdate{Secret: &secret}); err != nil {
		t.Fatal(err)
	}
	if _, err := ts1.UpdateWebhook(paused, WebhookUpdate{Active: &off}); err != nil {
		t.Fatal(err)
	}
	if err := ts1.DeleteWebhook(gone); err != nil {
		t.Fatal(err)
	}
	page1 := do(t, ts1, call{method: "GET", path: "/_mock/webhooks?limit=1", key: "-"})
	var l struct{ NextCursor *string }
	page1.json(t, &l)
	page2 := do(t, ts1, call{method: "GET", path: "/_mock/webhooks?limit=1&cursor=" + *l.NextCursor, key: "-"})
	hooks := ts1.Webhooks()
	pending := ts1.Deliveries(DeliveryFilter{State: DeliveryPending})
	stop(t, ts1)

	ts2 := stateServer(t, clock, path)
	if diff := cmp.Diff(hooks, ts2.Webhooks()); diff != "" {
		t.Errorf("webhooks after restart (-before +after):\n%s", diff)
	}
	if len(hooks) != 2 || hooks[1].ID != paused || hooks[1].Active {
		t.Errorf("webhooks before restart: %+v", hooks)
	}
	if _, ok := ts2.Webhook(gone); ok {
		t.Error("the deleted webhook is back")
	}
	if diff := cmp.Diff(pending, ts2.Deliveries(DeliveryFilter{})); diff != "" || len(pending) != 1 || pending[0].WebhookID != kept {
		t.Errorf("pending deliveries after restart: %d before, (-before +after):\n%s", len(pending), diff)
	}
	if got := do(t, ts2, call{method: "GET", path: "/_mock/webhooks?limit=1&cursor=" + *l.NextCursor, key: "-"}); !bytes.Equal(got.Body, page2.Body) {
		t.Errorf("the webhook list's cursor after restart: %s\nbefore: %s", got.Body, page2.Body)
	}
	// The retry after the restart is signed with the rotated secret.
	clock.Advance(time.Minute)
	idle(t, ts2)
	mu.Lock()
	defer mu.Unlock()
	if len(sigs) != 4 {
		t.Fatalf("%d attempts, want 3 before the restart and 1 after: %q", len(sigs), sigs)
	}
	if f := strings.Fields(sigs[3]); f[1] != "2" || f[0] != f[2] {
		t.Errorf("the attempt after the restart (signature, number, signature with the new secret): %v", f)
	}
	// A new webhook comes after every one of before in the list.
	fresh := registerHook(t, ts2, rc.URL, "whsec_fresh", contextsvc.EventContextCreated)
	if all := ts2.Webhooks(); all[len(all)-1].ID != fresh {
		t.Errorf("webhooks after a registration: %v", all)
	}
}
