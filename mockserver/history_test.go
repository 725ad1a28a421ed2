package mockserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"testing"
	"time"
	"unsafe"
	"weak"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery/deliverytest"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
)

// pageAll walks an admin list to its end, limit items a page, checking
// each page's shape, and returns the raw items.
func pageAll(t *testing.T, ts *TestServer, path string, limit int) []json.RawMessage {
	t.Helper()
	var all []json.RawMessage
	sep := "?"
	if strings.Contains(path, "?") {
		sep = "&"
	}
	cursor := ""
	for range 1000 {
		p := fmt.Sprintf("%s%slimit=%d", path, sep, limit)
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		r := admin(t, ts, "GET", p, "")
		if r.Status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", p, r.Status, r.Body)
		}
		var page struct {
			Data       []json.RawMessage
			HasMore    bool
			NextCursor *string
		}
		r.json(t, &page)
		if len(page.Data) > limit || (page.HasMore && len(page.Data) != limit) || page.HasMore != (page.NextCursor != nil) {
			t.Fatalf("GET %s: %d items, hasMore %v, nextCursor %v", p, len(page.Data), page.HasMore, page.NextCursor)
		}
		all = append(all, page.Data...)
		if !page.HasMore {
			return all
		}
		cursor = *page.NextCursor
	}
	t.Fatalf("%s: no end after 1000 pages", path)
	return nil
}

func itemIDs(t *testing.T, items []json.RawMessage) []string {
	t.Helper()
	out := make([]string, len(items))
	for i, it := range items {
		var v struct{ ID string }
		if err := json.Unmarshal(it, &v); err != nil {
			t.Fatal(err)
		}
		out[i] = v.ID
	}
	return out
}

// TestEventHistoryLimit records more events than the limit: the oldest go
// first, the Go API and the admin list (paged, filtered) agree, and Reset
// empties the log.
func TestEventHistoryLimit(t *testing.T) {
	t.Parallel()
	ts, _ := newFakeTestServer(t, WithHistoryLimit(7))
	var emitted []string
	for i := range 25 {
		typ := contextsvc.EventTeamMemberAdded
		if i%3 == 0 {
			typ = contextsvc.EventTeamMemberRemoved
		}
		ev, err := ts.EmitEvent(t.Context(), "", typ, json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		emitted = append(emitted, ev.ID)
	}
	var kept []string
	for _, ev := range ts.Events() {
		kept = append(kept, ev.ID)
	}
	if diff := cmp.Diff(emitted[25-7:], kept); diff != "" {
		t.Errorf("kept events (-want +got):\n%s", diff)
	}
	for _, limit := range []int{1, 3, 7, 100} {
		if diff := cmp.Diff(kept, itemIDs(t, pageAll(t, ts, "/_mock/events", limit))); diff != "" {
			t.Errorf("admin list, limit %d (-Go +admin):\n%s", limit, diff)
		}
	}
	var removed []string
	for _, ev := range ts.Events() {
		if ev.Type == contextsvc.EventTeamMemberRemoved {
			removed = append(removed, ev.ID)
		}
	}
	if diff := cmp.Diff(removed, itemIDs(t, pageAll(t, ts, "/_mock/events?type=team.member.removed", 1))); diff != "" {
		t.Errorf("filtered list (-want +got):\n%s", diff)
	}
	// The per-type index holds only the kept events.
	if n, _, _ := ts.svc.Events.Indexed(); n != 7 {
		t.Errorf("the type index holds %d events, want 7", n)
	}
	// A cursor from a page whose events were dropped since continues from
	// the oldest kept event.
	r := admin(t, ts, "GET", "/_mock/events?limit=2", "")
	var page struct{ NextCursor string }
	r.json(t, &page)
	for range 10 {
		if _, err := ts.EmitEvent(t.Context(), "", contextsvc.EventTeamMemberAdded, json.RawMessage(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	rest := itemIDs(t, pageAll(t, ts, "/_mock/events?cursor="+url.QueryEscape(page.NextCursor), 100))
	if len(rest) != 7 || rest[0] != ts.Events()[0].ID {
		t.Errorf("after the cursor's events were dropped: %d events", len(rest))
	}
	ts.Reset()
	if n := len(ts.Events()); n != 0 {
		t.Errorf("%d events after Reset", n)
	}
	if got := pageAll(t, ts, "/_mock/events", 20); len(got) != 0 {
		t.Errorf("%d events listed after Reset", len(got))
	}
}

func deliveryIDs(ds []Delivery) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.ID
	}
	return out
}

// TestAdminDeliveriesPaged pages through deliveries with each filter: the
// pages together are what the Go API returns, in order, at every page
// size; an empty filter is a 400.
func TestAdminDeliveriesPaged(t *testing.T) {
	t.Parallel()
	ts, clock := newFakeTestServer(t, WithRetrySchedule([]time.Duration{time.Hour}))
	ok := deliverytest.NewReceiver(t, clock, "s", func(http.ResponseWriter, *http.Request, deliverytest.Hit) {})
	bad := deliverytest.NewReceiver(t, clock, "s", func(w http.ResponseWriter, _ *http.Request, _ deliverytest.Hit) {
		w.WriteHeader(http.StatusInternalServerError)
	})
	h1 := registerHook(t, ts, ok.URL, "s", contextsvc.EventContextCreated, contextsvc.EventContextVersionCreated)
	h2 := registerHook(t, ts, bad.URL, "s", contextsvc.EventContextCreated)
	for i := range 9 {
		create(t, ts, fmt.Sprintf(`{"name":"Doc %d"}`, i))
	}
	idle(t, ts)
	evID := ts.Deliveries(DeliveryFilter{})[4].EventID
	for _, f := range []DeliveryFilter{
		{}, {WebhookID: h1}, {WebhookID: h2}, {State: DeliveryPending}, {State: DeliverySucceeded},
		{EventID: evID}, {EventID: evID, WebhookID: h2}, {State: DeliveryFailed},
	} {
		q := url.Values{}
		for k, v := range map[string]string{"eventId": f.EventID, "webhookId": f.WebhookID, "state": string(f.State)} {
			if v != "" {
				q.Set(k, v)
			}
		}
		want := deliveryIDs(ts.Deliveries(f))
		for _, limit := range []int{1, 2, 5, 100} {
			got := itemIDs(t, pageAll(t, ts, "/_mock/deliveries?"+q.Encode(), limit))
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("%+v, limit %d (-Go +admin):\n%s", f, limit, diff)
			}
		}
	}
	for _, q := range []string{"state=", "eventId=", "webhookId=", "state=pending&state=failed", "limit=0", "cursor=x"} {
		r := do(t, ts, call{method: "GET", path: "/_mock/deliveries?" + q, key: "-"})
		if typ, param := r.errorOf(t); r.Status != 400 || typ != "invalid_request" || !strings.HasPrefix(q, param+"=") {
			t.Errorf("%s: %d %s", q, r.Status, r.Body)
		}
	}
}

// TestFaultsPagedAndBounded pages through the faults and refuses the one
// past MaxFaults with a 409.
func TestFaultsPagedAndBounded(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	for i := range MaxFaults {
		if err := ts.AddFault(Fault{Status: 500, Path: fmt.Sprint("/v1/x", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ts.AddFault(Fault{Status: 500}); !errors.Is(err, ErrTooManyFaults) {
		t.Errorf("fault %d: %v, want ErrTooManyFaults", MaxFaults+1, err)
	}
	r := admin(t, ts, "POST", "/_mock/faults", `{"status":500}`)
	if typ, _ := r.errorOf(t); r.Status != http.StatusConflict || typ != "conflict" {
		t.Errorf("POST fault %d: %d %s", MaxFaults+1, r.Status, r.Body)
	}
	all := pageAll(t, ts, "/_mock/faults", 100)
	if len(all) != MaxFaults {
		t.Fatalf("listed %d faults", len(all))
	}
	for i, raw := range all {
		var f faultJSON
		if err := json.Unmarshal(raw, &f); err != nil || f.Path != fmt.Sprint("/v1/x", i) {
			t.Fatalf("fault %d: %s", i, raw)
		}
	}
}

// TestDeletedContextIsCollected deletes a context with a large text and
// checks that nothing in the server keeps its record alive.
func TestDeletedContextIsCollected(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	registerHook(t, ts, "https://example.com/h", "s", contextsvc.EventContextDeleted)
	c := create(t, ts, mustJSON(map[string]any{"name": "Big", "content": strings.Repeat("word ", 100_000), "tags": []string{"t"}}))
	do(t, ts, call{method: "PUT", path: "/v1/contexts/" + c.ID, body: `{"content":"# New\n\nshort"}`})
	// The first version's text: only the context's record holds it.
	sc, _ := ts.Context(c.ID)
	w := weak.Make(unsafe.StringData(sc.Versions[0].Content))
	sc = StoredContext{}
	if r := do(t, ts, call{method: "DELETE", path: "/v1/contexts/" + c.ID}); r.Status != 200 {
		t.Fatal(r.Status)
	}
	for range 5 {
		runtime.GC()
		if w.Value() == nil {
			return
		}
	}
	t.Error("the deleted context's record is still reachable")
}

// TestVersionTextHeldOnce checks that a context's current text is its
// latest version's text (one string, not a copy), and that storing
// versions of a large text costs about one text each.
func TestVersionTextHeldOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation sizes")
	}
	s := New(WithKey(Key{Token: "k", Plan: PlanUnlimited}))
	const size = 500_000
	text := func(i int) string { return strings.Repeat(string(rune('a'+i)), size-1) + "\n" }
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	id := createDirect(s, mustJSON(map[string]any{"name": "Big", "content": text(0)}))
	const versions = 20 // a signal of 10 MB, well above what the rest of the process allocates meanwhile
	for i := 1; i < versions; i++ {
		req := httptestRequest("PUT", "/v1/contexts/"+id, mustJSON(map[string]any{"content": text(i)}), "k")
		rec := newRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != 200 {
			t.Fatalf("update %d: %d", i, rec.Code)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grown := float64(after.HeapAlloc) - float64(before.HeapAlloc)
	// 20 versions of 500 KB: 10 MB if each is held once, 20 MB or more if
	// each were held twice; allow 4 MB for the rest of the server and the
	// process.
	perVersion := grown / versions / size
	t.Logf("%.2f bytes of heap per byte of text", perVersion)
	if perVersion > 1.4 {
		t.Errorf("%.0f bytes of heap per byte of text (%.1f MB for %d versions of 500 KB), want about 1", perVersion, grown/1e6, versions)
	}
	c, _ := s.Context(id) // a copy that shares the stored strings
	last := c.Versions[len(c.Versions)-1].Content
	if unsafe.StringData(c.Content) != unsafe.StringData(last) {
		t.Error("the current text is a copy of the latest version's")
	}
	runtime.KeepAlive(s)
}

// TestServerDeliveryBacklog checks the Server's wiring of the backlog: with
// room for one delivery waiting for its first attempt and the sender held
// up, a request that fires a second event waits until the first is sent.
func TestServerDeliveryBacklog(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	started := make(chan struct{}, 8)
	ts, clock := newFakeTestServer(t, WithDeliveryBacklog(1), WithDeliveryWorkers(1), WithRetrySchedule([]time.Duration{}))
	rc := deliverytest.NewReceiver(t, clock, "s", func(http.ResponseWriter, *http.Request, deliverytest.Hit) {
		started <- struct{}{}
		<-release
	})
	t.Cleanup(func() { close(release) })
	registerHook(t, ts, rc.URL, "s", contextsvc.EventTeamMemberAdded)
	emit := func() {
		if _, err := ts.EmitEvent(t.Context(), "", contextsvc.EventTeamMemberAdded, json.RawMessage(`{}`)); err != nil {
			t.Error(err)
		}
	}
	emit()
	<-started // in flight
	emit()    // waits for its first attempt: the backlog is full
	done := make(chan struct{})
	go func() { emit(); close(done) }()
	eventually(t, "an enqueue waits for room", func() bool { return ts.svc.Deliveries.Waiting() == 1 })
	release <- struct{}{}
	<-started
	<-done
}

// TestServerDeliveryBacklogRequestEnds: a request waiting for room in a
// full backlog stops waiting when its client gives up, instead of holding
// its goroutine until the receivers catch up: the context is created (the
// answer was lost, as with any request cut short), and its event's
// delivery is failed without an attempt, saying why.
func TestServerDeliveryBacklogRequestEnds(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	started := make(chan struct{}, 8)
	ts, clock := newFakeTestServer(t, WithDeliveryBacklog(1), WithDeliveryWorkers(1), WithRetrySchedule([]time.Duration{}))
	rc := deliverytest.NewReceiver(t, clock, "s", func(http.ResponseWriter, *http.Request, deliverytest.Hit) {
		started <- struct{}{}
		<-release
	})
	t.Cleanup(func() { close(release) })
	registerHook(t, ts, rc.URL, "s", contextsvc.EventTeamMemberAdded, contextsvc.EventContextCreated)
	for range 2 { // one in flight, one waiting: the backlog is full
		if _, err := ts.EmitEvent(t.Context(), "", contextsvc.EventTeamMemberAdded, json.RawMessage(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	<-started

	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, "POST", ts.HTTP.URL+"/v1/contexts", strings.NewReader(`{"name":"waits"}`))
	req.Header.Set("Authorization", "Bearer "+ts.APIKey)
	req.Header.Set("Content-Type", "application/json")
	errc := make(chan error, 1)
	go func() {
		res, err := ts.HTTP.Client().Do(req)
		if err == nil {
			res.Body.Close()
		}
		errc <- err
	}()
	eventually(t, "an enqueue waits for room", func() bool { return ts.svc.Deliveries.Waiting() == 1 })
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("the request was answered while the backlog was full")
	}
	wctx, wcancel := context.WithCancel(t.Context())
	defer wcancel()
	dl, err := ts.WaitForDelivery(wctx, func(d Delivery) bool {
		return d.EventType == contextsvc.EventContextCreated && d.State == DeliveryFailed
	})
	if err != nil {
		t.Fatalf("the request's delivery did not end when its client gave up: %v", err)
	}
	if len(dl.Attempts) != 0 || !strings.Contains(dl.FailureReason, "backlog") {
		t.Errorf("delivery: %d attempts, reason %q", len(dl.Attempts), dl.FailureReason)
	}
	if n := len(ts.Snapshot().Contexts); n != 1 {
		t.Errorf("%d contexts, want the one created", n)
	}
}

// TestServerRetryLimit checks the Server's wiring of the retry limit: with
// room for one waiting retry and a receiver that always fails, the second
// event's delivery ends failed after its first attempt instead of waiting.
func TestServerRetryLimit(t *testing.T) {
	t.Parallel()
	ts, clock := newFakeTestServer(t, WithRetryLimit(1), WithRetrySchedule([]time.Duration{time.Minute}))
	rc := deliverytest.NewReceiver(t, clock, "s", func(w http.ResponseWriter, _ *http.Request, _ deliverytest.Hit) {
		w.WriteHeader(http.StatusInternalServerError)
	})
	registerHook(t, ts, rc.URL, "s", contextsvc.EventTeamMemberAdded)
	var states []DeliveryState
	for range 2 {
		ev, err := ts.EmitEvent(t.Context(), "", contextsvc.EventTeamMemberAdded, json.RawMessage(`{}`))
		if err != nil {
			t.Fatal(err)
		}
		if err := ts.WaitIdle(t.Context()); err != nil {
			t.Fatal(err)
		}
		for _, d := range ts.Deliveries(DeliveryFilter{EventID: ev.ID}) {
			states = append(states, d.State)
		}
	}
	if d := cmp.Diff([]DeliveryState{DeliveryPending, DeliveryFailed}, states); d != "" {
		t.Errorf("states (-want +got):\n%s", d)
	}
}

// TestEventHistoryBytesServer: events of 2 MiB of data each (the most
// POST /_mock/events takes) are kept to MaxEventHistoryBytes, the newest.
// It records 80 MiB of events: seconds under the race detector.
func TestEventHistoryBytesServer(t *testing.T) {
	if testing.Short() {
		t.Skip("records 80 MiB of events; TestEventHistoryBytes checks the bound on a small log")
	}
	t.Parallel()
	ts := NewTestServer(t)
	data := json.RawMessage(`{"pad":"` + strings.Repeat("x", httpapi.MaxBody-16) + `"}`)
	const n = MaxEventHistoryBytes/httpapi.MaxBody + 8
	var last string
	for range n {
		ev, err := ts.EmitEvent(t.Context(), "", contextsvc.EventTeamMemberAdded, data)
		if err != nil {
			t.Fatal(err)
		}
		last = ev.ID
	}
	events, bytes := ts.svc.Events.Stats()
	if bytes > MaxEventHistoryBytes || events >= n || events < MaxEventHistoryBytes/httpapi.MaxBody-1 {
		t.Errorf("%d events of %d kept, counting %d bytes; want at most %d bytes, as many events as fit", events, n, bytes, MaxEventHistoryBytes)
	}
	if kept := ts.Events(); kept[len(kept)-1].ID != last {
		t.Errorf("the newest event is not kept")
	}
}
