package mockserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/adminapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery/deliverytest"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/linediff"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// The admin endpoints the dashboard reads and acts through, its page and
// files, its stream, and the cross-site check, over HTTP and through the
// validator. The page itself is tested in a browser (dashboard_browser_test.go).

func TestAdminAccounts(t *testing.T) {
	t.Parallel()
	const tokA, tokB, tokC = "sk_test_aaaaaaaaaaaaaaaaaaaaaaaa", "sk_test_bbbbbbbbbbbbbbbbbbbbbbbb", "sk_test_cccccccccccccccccccccccc"
	ts := NewTestServer(t, WithKey(Key{Token: tokA, Account: "acme"}), WithKey(Key{Token: tokB, Account: "acme", Scope: ScopeRead, Plan: PlanFree}),
		WithKey(Key{Token: tokC, Account: "globex", Plan: PlanEnterprise, PerMinute: 5000, Burst: 200}))
	create(t, ts, `{"name":"One"}`)
	registerHook(t, ts, "https://hooks.example.com/a", "s", contextsvc.EventContextCreated)
	r := admin(t, ts, "GET", "/_mock/accounts", "")
	if r.Status != http.StatusOK {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	for _, tok := range []string{tokA, tokB, tokC} {
		if strings.Contains(string(r.Body), tok) {
			t.Fatalf("the accounts list holds a whole token: %s", r.Body)
		}
	}
	var page struct{ Data []accountJSON }
	r.json(t, &page)
	user := AccountUser
	want := []accountJSON{
		{ID: "acme", Users: []string{user("acme")}, Contexts: 1, Webhooks: 1, Keys: []keyJSON{
			{Token: "sk_test…aaaa", User: user("acme"), Plan: PlanPro, Scope: ScopeWrite},
			{Token: "sk_test…bbbb", User: user("acme"), Plan: PlanFree, Scope: ScopeRead}}},
		{ID: "globex", Users: []string{user("globex")}, Keys: []keyJSON{
			{Token: "sk_test…cccc", User: user("globex"), Plan: PlanEnterprise, Scope: ScopeWrite, PerMinute: 5000, Burst: 200}}},
	}
	if diff := cmp.Diff(want, page.Data); diff != "" {
		t.Errorf("accounts (-want +got):\n%s", diff)
	}
	if got := itemIDs(t, pageAll(t, ts, "/_mock/accounts", 1)); !slices.Equal(got, []string{"acme", "globex"}) {
		t.Errorf("paged one by one: %v", got)
	}
}

// TestAdminContexts: every account's contexts, paged in both orders and by
// account, one with its content, its versions, and the diff of two.
func TestAdminContexts(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t, WithKey(Key{Token: "tok_a", Account: "acme", Plan: PlanUnlimited}),
		WithKey(Key{Token: "tok_b", Account: "globex", Plan: PlanUnlimited}))
	var all []string
	for i, key := range []string{"tok_a", "tok_b", "tok_a", "tok_b", "tok_b"} {
		r := do(t, ts, call{method: "POST", path: "/v1/contexts", key: key, body: fmt.Sprintf(`{"name":"Doc %d","content":"# Doc\n\nline one\nline two\n"}`, i)})
		var c model.ContextJSON
		r.json(t, &c)
		all = append(all, c.ID)
	}
	// By account in key order, then creation.
	byAccount := []string{all[0], all[2], all[1], all[3], all[4]}
	reversed := slices.Clone(byAccount)
	slices.Reverse(reversed)
	for _, limit := range []int{1, 2, 3, 100} {
		if got := itemIDs(t, pageAll(t, ts, "/_mock/contexts", limit)); !slices.Equal(got, byAccount) {
			t.Errorf("limit %d: %v, want %v", limit, got, byAccount)
		}
		if got := itemIDs(t, pageAll(t, ts, "/_mock/contexts?order=desc", limit)); !slices.Equal(got, reversed) {
			t.Errorf("desc, limit %d: %v, want %v", limit, got, reversed)
		}
	}
	if got := itemIDs(t, pageAll(t, ts, "/_mock/contexts?account=globex", 2)); !slices.Equal(got, byAccount[2:]) {
		t.Errorf("globex: %v", got)
	}
	if got := pageAll(t, ts, "/_mock/contexts?account=nobody", 2); len(got) != 0 {
		t.Errorf("an unknown account lists %d", len(got))
	}
	// A full last page of acme while globex has none: no empty page follows.
	ts2 := NewTestServer(t, WithKey(Key{Token: "tok_a", Account: "acme"}), WithKey(Key{Token: "tok_b", Account: "globex"}))
	create(t, ts2, `{"name":"Only"}`)
	r := admin(t, ts2, "GET", "/_mock/contexts?limit=1", "")
	if !strings.Contains(string(r.Body), `"hasMore":false`) {
		t.Errorf("one context, limit 1: %s", r.Body)
	}

	id := all[1]
	for i, content := range []string{"# Doc\n\nline one\nline 2\n", "# Doc\n\nline one\nline 2\nline three\n"} {
		if r := do(t, ts, call{method: "PUT", path: "/v1/contexts/" + id, key: "tok_b", body: mustJSON(map[string]any{"content": content, "name": fmt.Sprint("Doc v", i+2)})}); r.Status != 200 {
			t.Fatalf("update: %d %s", r.Status, r.Body)
		}
	}
	r = admin(t, ts, "GET", "/_mock/contexts/"+id, "")
	var detail adminapi.ContextJSON
	r.json(t, &detail)
	if detail.Account != "globex" || detail.Version != 3 || detail.Content == nil || *detail.Content != "# Doc\n\nline one\nline 2\nline three\n" || detail.SizeBytes != len(*detail.Content) {
		t.Errorf("context: %s", r.Body)
	}
	var versions []int
	for _, raw := range pageAll(t, ts, "/_mock/contexts/"+id+"/versions?order=desc", 2) {
		var v adminapi.VersionJSON
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
		versions = append(versions, v.Version)
		if strings.Contains(string(raw), "line one") {
			t.Errorf("a version in the list holds its content: %s", raw)
		}
	}
	if !slices.Equal(versions, []int{3, 2, 1}) {
		t.Errorf("versions newest first: %v", versions)
	}

	var d adminapi.DiffJSON
	admin(t, ts, "GET", "/_mock/contexts/"+id+"/diff", "").json(t, &d) // the latest against the one before
	want := adminapi.DiffJSON{ContextID: id, From: 2, To: 3, FromName: "Doc v2", ToName: "Doc v3", FromTags: []string{}, ToTags: []string{},
		Added: 1, Hunks: []adminapi.DiffHunkJSON{{FromStart: 2, FromLines: 3, ToStart: 2, ToLines: 4, Lines: []adminapi.DiffLineJSON{
			{Op: "equal", Text: ""}, {Op: "equal", Text: "line one"}, {Op: "equal", Text: "line 2"}, {Op: "insert", Text: "line three"}}}}}
	if diff := cmp.Diff(want, d); diff != "" {
		t.Errorf("diff 2..3 (-want +got):\n%s", diff)
	}
	admin(t, ts, "GET", "/_mock/contexts/"+id+"/diff?from=1&to=3", "").json(t, &d)
	if d.Added != 2 || d.Removed != 1 || d.FromName != "Doc 1" {
		t.Errorf("diff 1..3: %+v", d)
	}
	admin(t, ts, "GET", "/_mock/contexts/"+id+"/diff?from=2&to=2", "").json(t, &d)
	if !d.Identical || len(d.Hunks) != 0 {
		t.Errorf("diff 2..2: %+v", d)
	}
	for _, tc := range []struct {
		query  string
		status int
		param  string
	}{
		{"?from=4", 404, ""}, {"?to=9", 404, ""}, {"?from=0", 400, "from"}, {"?to=x", 400, "to"}, {"?from=1&from=2", 400, "from"},
	} {
		r := admin(t, ts, "GET", "/_mock/contexts/"+id+"/diff"+tc.query, "")
		if _, param := r.errorOf(t); r.Status != tc.status || param != tc.param {
			t.Errorf("diff%s: %d param %q, want %d %q", tc.query, r.Status, param, tc.status, tc.param)
		}
	}
	for _, p := range []string{"/_mock/contexts/ctx_missing", "/_mock/contexts/ctx_missing/versions", "/_mock/contexts/ctx_missing/diff"} {
		if r := admin(t, ts, "GET", p, ""); r.Status != 404 {
			t.Errorf("%s: %d", p, r.Status)
		}
	}
}

// TestAdminDiffTooDifferent: two versions past the diff's bounds are
// answered with both texts.
func TestAdminDiffTooDifferent(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	var a, b strings.Builder
	for i := range linediff.MaxEdits {
		fmt.Fprintf(&a, "a%d\n", i)
		fmt.Fprintf(&b, "b%d\n", i)
	}
	c := create(t, ts, mustJSON(map[string]string{"name": "Big", "content": a.String()}))
	do(t, ts, call{method: "PUT", path: "/v1/contexts/" + c.ID, body: mustJSON(map[string]string{"content": b.String()})})
	var d adminapi.DiffJSON
	admin(t, ts, "GET", "/_mock/contexts/"+c.ID+"/diff", "").json(t, &d)
	if !d.TooDifferent || len(d.Hunks) != 0 || d.FromContent == nil || *d.FromContent != a.String() || d.ToContent == nil || *d.ToContent != b.String() {
		t.Errorf("too different: %+v", d)
	}
}

// TestAdminListFilters: deliveries by account and event type, events by
// account, one event by id, and both lists newest first.
func TestAdminListFilters(t *testing.T) {
	t.Parallel()
	clock := NewFakeClock(dlvT0)
	ts := NewTestServer(t, WithClock(clock), WithKey(Key{Token: "tok_a", Account: "acme", Plan: PlanUnlimited}),
		WithKey(Key{Token: "tok_b", Account: "globex", Plan: PlanUnlimited}))
	rc := deliverytest.NewReceiver(t, clock, "s", func(w http.ResponseWriter, r *http.Request, h deliverytest.Hit) {})
	for _, key := range []string{"tok_a", "tok_b"} {
		b := mustJSON(map[string]any{"url": rc.URL, "events": []string{"context.created", "context.deleted"}, "secret": "s"})
		if r := do(t, ts, call{method: "POST", path: "/v1/webhooks", key: key, body: b}); r.Status != 201 {
			t.Fatal(r.Status)
		}
	}
	for i, key := range []string{"tok_a", "tok_b", "tok_a"} {
		r := do(t, ts, call{method: "POST", path: "/v1/contexts", key: key, body: fmt.Sprintf(`{"name":"D%d"}`, i)})
		var c model.ContextJSON
		r.json(t, &c)
		if i == 2 {
			do(t, ts, call{method: "DELETE", path: "/v1/contexts/" + c.ID, key: key})
		}
	}
	idle(t, ts)
	type item struct{ ID, Account, EventType, Type string }
	list := func(path string) []item {
		var out []item
		for _, raw := range pageAll(t, ts, path, 2) {
			var it item
			if err := json.Unmarshal(raw, &it); err != nil {
				t.Fatal(err)
			}
			out = append(out, it)
		}
		return out
	}
	all := list("/_mock/deliveries")
	if len(all) != 4 {
		t.Fatalf("%d deliveries, want 4 (created ×3, deleted ×1)", len(all))
	}
	for _, tc := range []struct {
		query string
		keep  func(item) bool
	}{
		{"account=acme", func(it item) bool { return it.Account == "acme" }},
		{"account=globex", func(it item) bool { return it.Account == "globex" }},
		{"type=context.deleted", func(it item) bool { return it.EventType == "context.deleted" }},
		{"account=acme&type=context.created", func(it item) bool { return it.Account == "acme" && it.EventType == "context.created" }},
		{"account=acme&state=succeeded", func(it item) bool { return it.Account == "acme" }},
		{"account=nobody", func(item) bool { return false }},
		{"type=team.member.added", func(item) bool { return false }},
	} {
		got := list("/_mock/deliveries?" + tc.query)
		var want []item
		for _, it := range all {
			if tc.keep(it) {
				want = append(want, it)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("deliveries?%s (-want +got):\n%s", tc.query, diff)
		}
	}
	desc := list("/_mock/deliveries?order=desc")
	slices.Reverse(desc)
	if diff := cmp.Diff(all, desc); diff != "" {
		t.Errorf("deliveries newest first, reversed (-want +got):\n%s", diff)
	}

	events := list("/_mock/events")
	for _, tc := range []struct {
		query string
		keep  func(item) bool
	}{
		{"account=globex", func(it item) bool { return it.Account == "globex" }},
		{"account=acme&type=context.deleted", func(it item) bool { return it.Account == "acme" && it.Type == "context.deleted" }},
		{"account=globex&type=context.deleted", func(item) bool { return false }},
	} {
		got := list("/_mock/events?" + tc.query)
		var want []item
		for _, it := range events {
			if tc.keep(it) {
				want = append(want, it)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("events?%s (-want +got):\n%s", tc.query, diff)
		}
	}
	desc = list("/_mock/events?order=desc&account=acme")
	if len(desc) != 5 || desc[0].Type != "context.deleted" {
		t.Errorf("acme's events newest first: %+v", desc)
	}
	r := admin(t, ts, "GET", "/_mock/events/"+events[0].ID, "")
	if r.Status != 200 || !strings.Contains(string(r.Body), `"id":"`+events[0].ID+`"`) {
		t.Errorf("one event: %d %s", r.Status, r.Body)
	}
	if r := admin(t, ts, "GET", "/_mock/events/evt_missing", ""); r.Status != 404 {
		t.Errorf("a missing event: %d", r.Status)
	}
	for _, q := range []string{"account=", "account=a%20b", "type=a%20b", "order=up", "order=asc&order=desc"} {
		if r := admin(t, ts, "GET", "/_mock/deliveries?"+q, ""); r.Status != 400 {
			t.Errorf("deliveries?%s: %d", q, r.Status)
		}
	}
}

// TestAdminFilterBoundedWalk: a filter no index serves (a delivery's
// state) walks at most page.MaxScan deliveries a page; past them the
// page ends early with a cursor that goes on, and following the cursors
// finds every match once.
func TestAdminFilterBoundedWalk(t *testing.T) {
	if testing.Short() {
		t.Skip("makes 25,000 deliveries")
	}
	t.Parallel()
	clock := NewFakeClock(dlvT0)
	ts := NewTestServer(t, WithClock(clock), WithHistoryLimit(50_000))
	registerHook(t, ts, "https://hooks.example.com/in", "s", contextsvc.EventTeamMemberAdded)
	// Closed, the engine records deliveries and attempts none.
	const n = 25_000
	data := json.RawMessage(`{"teamId":"team_1","userId":"user_1","role":"r"}`)
	if err := ts.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for range n {
		if _, err := ts.EmitEvent(context.Background(), "", contextsvc.EventTeamMemberAdded, data); err != nil {
			t.Fatal(err)
		}
	}
	// Every delivery waits for its first attempt; deactivating the webhook
	// ends them all failed. Then a second webhook gets 3 more, pending.
	hook := ts.Webhooks()[0].ID
	if _, err := ts.UpdateWebhook(hook, WebhookUpdate{Active: new(false)}); err != nil {
		t.Fatal(err)
	}
	registerHook(t, ts, "https://hooks.example.com/other", "s", contextsvc.EventTeamMemberAdded)
	for range 3 {
		ts.EmitEvent(context.Background(), "", contextsvc.EventTeamMemberAdded, data)
	}
	// 25,000 failed, then 3 pending: a page of pending walks past 10,000
	// failed ones at most.
	var got []string
	pages, short := 0, 0
	cursor := ""
	for {
		p := "/_mock/deliveries?state=pending&limit=2"
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		var page struct {
			Data       []Delivery
			HasMore    bool
			NextCursor *string
		}
		admin(t, ts, "GET", p, "").json(t, &page)
		pages++
		if page.HasMore && len(page.Data) < 2 {
			short++
		}
		for _, d := range page.Data {
			got = append(got, d.ID)
		}
		if !page.HasMore {
			break
		}
		cursor = *page.NextCursor
	}
	if len(got) != 3 || short < 2 {
		t.Errorf("%d pending deliveries in %d pages (%d short ones), want 3, with at least 2 short pages", len(got), pages, short)
	}
}

// TestAdminClockNextDue: the clock says when the next attempt is due, and
// the advance to it makes the attempt.
func TestAdminClockNextDue(t *testing.T) {
	t.Parallel()
	ts, clock := newFakeTestServer(t)
	var clk clockJSON
	admin(t, ts, "GET", "/_mock/clock", "").json(t, &clk)
	if clk.NextDueAt != "" || !clk.Fake {
		t.Errorf("nothing waits: %+v", clk)
	}
	if r := admin(t, ts, "POST", "/_mock/clock/advance", `{"toNextDue":true}`); r.Status != 409 {
		t.Errorf("to the next due with none: %d %s", r.Status, r.Body)
	}
	rc := deliverytest.NewReceiver(t, clock, "s", func(w http.ResponseWriter, r *http.Request, h deliverytest.Hit) { w.WriteHeader(500) })
	registerHook(t, ts, rc.URL, "s", contextsvc.EventContextCreated)
	create(t, ts, `{"name":"X"}`)
	idle(t, ts)
	admin(t, ts, "GET", "/_mock/clock", "").json(t, &clk)
	if clk.NextDueAt != "2026-11-21T12:01:00.000Z" {
		t.Errorf("a retry waits: %+v", clk)
	}
	admin(t, ts, "POST", "/_mock/clock/advance", `{"toNextDue":true}`).json(t, &clk)
	if clk.Now != "2026-11-21T12:01:00.000Z" {
		t.Errorf("advanced to %s", clk.Now)
	}
	idle(t, ts)
	if n := len(rc.Got()); n != 2 {
		t.Errorf("the receiver got %d attempts, want 2", n)
	}
	admin(t, ts, "GET", "/_mock/clock", "").json(t, &clk)
	if clk.NextDueAt != "2026-11-21T12:06:00.000Z" {
		t.Errorf("the next retry: %+v", clk)
	}
	if r := admin(t, ts, "POST", "/_mock/clock/advance", `{"toNextDue":false}`); r.Status != 400 {
		t.Errorf("toNextDue false: %d", r.Status)
	}
	real := NewTestServer(t)
	if r := admin(t, real, "POST", "/_mock/clock/advance", `{"toNextDue":true}`); r.Status != 409 {
		t.Errorf("the real clock: %d", r.Status)
	}
}

func TestAdminSummary(t *testing.T) {
	t.Parallel()
	ts, clock := newFakeTestServer(t)
	rc := deliverytest.NewReceiver(t, clock, "s", func(w http.ResponseWriter, r *http.Request, h deliverytest.Hit) {
		if strings.Contains(string(h.Body), "context.deleted") {
			w.WriteHeader(500)
		}
	})
	registerHook(t, ts, rc.URL, "s", contextsvc.EventContextCreated, contextsvc.EventContextDeleted)
	c := create(t, ts, `{"name":"X"}`)
	create(t, ts, `{"name":"Y"}`)
	do(t, ts, call{method: "DELETE", path: "/v1/contexts/" + c.ID})
	idle(t, ts)
	if err := ts.AddFault(Fault{Status: 500}); err != nil {
		t.Fatal(err)
	}
	var sum summaryJSON
	admin(t, ts, "GET", "/_mock/summary", "").json(t, &sum)
	want := summaryJSON{Accounts: 1, Contexts: 1, Webhooks: 1, Events: 5, Faults: 1,
		Deliveries: DeliveryCounts{Pending: 1, Succeeded: 2},
		Clock:      clockJSON{Now: "2026-11-21T12:00:00.000Z", Fake: true, NextDueAt: "2026-11-21T12:01:00.000Z"}}
	if diff := cmp.Diff(want, sum); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	for range 5 {
		clock.Advance(24 * time.Hour)
		idle(t, ts)
	}
	admin(t, ts, "GET", "/_mock/summary", "").json(t, &sum)
	if sum.Deliveries != (DeliveryCounts{Succeeded: 2, Failed: 1}) {
		t.Errorf("after the schedule: %+v", sum.Deliveries)
	}
}

// TestCrossSiteRefused: an admin request from a browser on another site,
// a read as much as a write, is a 403 that changes nothing; the same from
// the page's own origin, or from a program (no Origin), is served, and so
// is a link to the dashboard's page followed from another site.
func TestCrossSiteRefused(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	host := strings.TrimPrefix(ts.HTTP.URL, "http://")
	img := map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors", "Sec-Fetch-Dest": "image"}
	link := map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document", "Sec-Fetch-User": "?1"}
	for _, tc := range []struct {
		name   string
		method string
		path   string
		header map[string]string
		status int
	}{
		{"another origin", "POST", "/_mock/reset", map[string]string{"Origin": "http://evil.example"}, 403},
		{"another port", "POST", "/_mock/reset", map[string]string{"Origin": "http://127.0.0.1:1"}, 403},
		{"null origin", "POST", "/_mock/reset", map[string]string{"Origin": "null"}, 403},
		{"cross-site fetch", "POST", "/_mock/faults", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"same-site fetch", "DELETE", "/_mock/faults", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://localhost:1"}, 403},
		{"cross-site delete", "DELETE", "/_mock/faults", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"same origin", "POST", "/_mock/reset", map[string]string{"Origin": "http://" + host}, 204},
		{"same-origin fetch", "POST", "/_mock/reset", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://" + host}, 204},
		{"typed in the address bar", "POST", "/_mock/reset", map[string]string{"Sec-Fetch-Site": "none"}, 204},
		{"a program", "POST", "/_mock/reset", nil, 204},
		{"a cross-site read", "GET", "/_mock/faults", map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, 403},
		{"the state from an <img>", "GET", "/_mock/state", img, 403},
		{"the state from a page on another port", "GET", "/_mock/state", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:1"}, 403},
		{"the state from an old browser", "GET", "/_mock/state", map[string]string{"Origin": "http://evil.example"}, 403},
		{"a dashboard file from another site", "GET", "/_mock/ui/app.js", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "script"}, 403},
		{"an unknown admin path from another site", "GET", "/_mock/nope", img, 403},
		{"a cross-site OPTIONS", "OPTIONS", "/_mock/reset", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}, 403},
		{"the state, same origin", "GET", "/_mock/state", map[string]string{"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"}, 200},
		{"the state, typed in the address bar", "GET", "/_mock/state", map[string]string{"Sec-Fetch-Site": "none", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}, 200},
		{"a link to the dashboard from another site", "GET", "/_mock/ui/", link, 200},
		{"a link to the dashboard without its slash (redirected)", "GET", "/_mock/ui", link, 200},
		{"a link to the state from another site", "GET", "/_mock/state", link, 403},
		{"the dashboard in another site's frame", "GET", "/_mock/ui/", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "iframe"}, 403},
		{"a form posted from another site", "POST", "/_mock/reset", map[string]string{"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}, 403},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := ts.AddFault(Fault{Status: 503, Times: 5}); err != nil {
				t.Fatal(err)
			}
			body := ""
			if tc.path == "/_mock/faults" && tc.method == "POST" {
				body = `{"status":500}`
			}
			r := do(t, ts, call{method: tc.method, path: tc.path, body: body, key: "-", header: tc.header})
			if r.Status != tc.status {
				t.Fatalf("%d %s, want %d", r.Status, r.Body, tc.status)
			}
			if tc.status == 403 {
				if typ, _ := r.errorOf(t); typ != "forbidden" {
					t.Errorf("type %q", typ)
				}
				if n := len(ts.Faults()); n != 1 {
					t.Errorf("a refused request changed the faults: %d", n)
				}
			}
			ts.ClearFaults()
		})
	}
}

// TestDashboardFiles: the page and its files, with their security headers,
// revalidated by ETag; the page is off with the admin routes.
func TestDashboardFiles(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	r := admin(t, ts, "GET", "/_mock/ui/", "")
	if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") || !strings.Contains(string(r.Body), "<!doctype html>") {
		t.Fatalf("the page: %d %s %.100s", r.Status, r.Header.Get("Content-Type"), r.Body)
	}
	for _, h := range []string{"Content-Security-Policy", "X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy"} {
		if r.Header.Get(h) == "" {
			t.Errorf("the page has no %s", h)
		}
	}
	csp := r.Header.Get("Content-Security-Policy")
	for _, want := range []string{"default-src 'self'", "script-src 'self'", "frame-ancestors 'none'", "object-src 'none'", "require-trusted-types-for 'script'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") {
		t.Errorf("CSP %q allows something unsafe", csp)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("GET", "/_mock/ui", nil)
	req.Host = "127.0.0.1" // not httptest's example.com, which the admin routes refuse
	ts.ServeHTTP(rec, req)
	if rec.Code != 301 || rec.Header().Get("Location") != "/_mock/ui/" {
		t.Errorf("/_mock/ui: %d %q", rec.Code, rec.Header().Get("Location"))
	}
	for name, ct := range map[string]string{"app.js": "text/javascript", "style.css": "text/css", "favicon.svg": "image/svg+xml"} {
		r := admin(t, ts, "GET", "/_mock/ui/"+name, "")
		if r.Status != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), ct) || r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: %d %q", name, r.Status, r.Header.Get("Content-Type"))
		}
		again := do(t, ts, call{method: "GET", path: "/_mock/ui/" + name, key: "-", header: map[string]string{"If-None-Match": r.Header.Get("ETag")}})
		if again.Status != 304 || len(again.Body) != 0 {
			t.Errorf("%s again with its ETag: %d", name, again.Status)
		}
	}
	for _, p := range []string{"/_mock/ui/missing.js", "/_mock/ui/..%2fopenapi.yaml", "/_mock/ui/a/b.js"} {
		if r := admin(t, ts, "GET", p, ""); r.Status != 404 {
			t.Errorf("%s: %d", p, r.Status)
		}
	}
	off := NewTestServer(t, WithAdmin(false))
	for _, p := range []string{"/_mock/ui/", "/_mock/ui/app.js", "/_mock/stream"} {
		if r := admin(t, off, "GET", p, ""); r.Status != 404 {
			t.Errorf("admin off, %s: %d", p, r.Status)
		}
	}
}

// TestAdminMalformedQuery: every admin route refuses a malformed query
// string with a 400 naming the parameter, and the document declares it
// (the validator fails an undeclared status).
func TestAdminMalformedQuery(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	c := create(t, ts, `{"name":"Doc"}`)
	events := len(ts.Events())
	for _, p := range []struct{ method, path string }{
		{"GET", "/_mock/openapi.yaml"}, {"GET", "/_mock/deliveries/dlv_x"}, {"POST", "/_mock/deliveries/dlv_x/redeliver"}, {"POST", "/_mock/events/evt_x/resend"},
		{"GET", "/_mock/webhooks/wh_x"}, {"DELETE", "/_mock/webhooks/wh_x"}, {"POST", "/_mock/contexts/" + c.ID + "/publish"},
		{"GET", "/_mock/clock"}, {"POST", "/_mock/reset"}, {"DELETE", "/_mock/faults"}, {"GET", "/_mock/events/evt_x"},
		{"GET", "/_mock/contexts/" + c.ID}, {"GET", "/_mock/summary"}, {"GET", "/_mock/stream"}, {"GET", "/_mock/ui/"},
		{"GET", "/_mock/ui/app.js"}, {"GET", "/_mock/state"},
	} {
		r := admin(t, ts, p.method, p.path+"?a=%zz", "")
		if _, param := r.errorOf(t); r.Status != 400 || param != "a" {
			t.Errorf("%s %s?a=%%zz: %d %s", p.method, p.path, r.Status, r.Body)
		}
	}
	if n := len(ts.Events()); n != events || len(ts.Contexts(ts.DefaultKey().Account)) != 1 {
		t.Errorf("a refused request acted: %d events, want %d", n, events)
	}
}

// streamReader reads a running /_mock/stream.
type streamReader struct {
	t    *testing.T
	body io.ReadCloser
	sc   *bufio.Scanner
}

// openStream opens the server's event stream and reads its hello.
func openStream(t *testing.T, ts *TestServer) *streamReader {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), "GET", ts.HTTP.URL+"/_mock/stream", nil)
	res, err := ts.HTTP.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		t.Fatalf("stream: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	t.Cleanup(func() { res.Body.Close() })
	sr := &streamReader{t: t, body: res.Body, sc: bufio.NewScanner(res.Body)}
	if name, _ := sr.next(); name != "hello" {
		t.Fatalf("the first event is %q", name)
	}
	return sr
}

// next returns the next event's name and data.
func (sr *streamReader) next() (string, string) {
	sr.t.Helper()
	var name, data string
	for sr.sc.Scan() {
		line := sr.sc.Text()
		switch {
		case line == "":
			if name != "" {
				return name, data
			}
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data = strings.TrimPrefix(line, "data: ")
		}
	}
	sr.t.Fatalf("the stream ended: %v", sr.sc.Err())
	return "", ""
}

// changes reads n change events.
func (sr *streamReader) changes(n int) []changes.Change {
	sr.t.Helper()
	var out []changes.Change
	for len(out) < n {
		name, data := sr.next()
		if name != "change" {
			sr.t.Fatalf("event %q %s", name, data)
		}
		var c changes.Change
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			sr.t.Fatal(err)
		}
		out = append(out, c)
	}
	return out
}

// TestStream: each change of the server arrives on the stream, in order,
// as it happens.
func TestStream(t *testing.T) {
	t.Parallel()
	ts, clock := newFakeTestServer(t)
	sr := openStream(t, ts)
	rc := deliverytest.NewReceiver(t, clock, "s", func(w http.ResponseWriter, r *http.Request, h deliverytest.Hit) { w.WriteHeader(500) })
	hook := registerHook(t, ts, rc.URL, "s", contextsvc.EventTeamMemberAdded)
	acct := ts.DefaultKey().Account
	ev, err := ts.EmitEvent(context.Background(), "", contextsvc.EventTeamMemberAdded, json.RawMessage(`{"teamId":"team_1","userId":"user_1","role":"r"}`))
	if err != nil {
		t.Fatal(err)
	}
	got := sr.changes(5)
	dl := got[2].ID
	want := []changes.Change{
		{Kind: "webhook", ID: hook, Action: "created", Account: acct},
		{Kind: "event", ID: ev.ID, Action: "created", Account: acct, Type: "team.member.added"},
		{Kind: "delivery", ID: dl, Action: "created", Account: acct, Type: "team.member.added", State: "pending", WebhookID: hook, EventID: ev.ID},
		{Kind: "delivery", ID: dl, Action: "attemptStarted", Account: acct, Type: "team.member.added", State: "pending", WebhookID: hook, EventID: ev.ID},
		{Kind: "delivery", ID: dl, Action: "attemptFinished", Account: acct, Type: "team.member.added", State: "pending", WebhookID: hook, EventID: ev.ID},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	clock.Advance(time.Minute)
	if got := sr.changes(1); got[0] != (changes.Change{Kind: "clock", Now: "2026-11-21T12:01:00.000Z"}) {
		t.Errorf("advance: %+v", got)
	}
	idle(t, ts)
	sr.changes(2) // the second attempt
	if _, err := ts.UpdateWebhook(hook, WebhookUpdate{Active: new(false)}); err != nil {
		t.Fatal(err)
	}
	got = sr.changes(2)
	if got[0].Action != "ended" || got[0].State != "failed" || got[1] != (changes.Change{Kind: "webhook", ID: hook, Action: "changed", Account: acct}) {
		t.Errorf("deactivation: %+v", got)
	}
	ts.AddFault(Fault{Status: 500})
	ts.ClearFaults()
	ts.Reset()
	got = sr.changes(3)
	if diff := cmp.Diff([]changes.Change{{Kind: "faults", Action: "added"}, {Kind: "faults", Action: "cleared"}, {Kind: "reset"}}, got); diff != "" {
		t.Errorf("faults and reset (-want +got):\n%s", diff)
	}
}

// TestStreamLimitAndShutdown: past changes.MaxSubscribers a stream is a 503, and
// the http.Server's Shutdown ends the open ones instead of waiting for
// them.
func TestStreamLimitAndShutdown(t *testing.T) {
	t.Parallel()
	s := New()
	hs := httptest.NewUnstartedServer(s)
	hs.Config = s.HTTPServer("")
	hs.Config.Handler = s
	hs.Start()
	defer hs.Close()
	var wg sync.WaitGroup
	var bodies []io.ReadCloser
	for range changes.MaxSubscribers {
		res, err := http.Get(hs.URL + "/_mock/stream")
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("stream: %v %v", res, err)
		}
		bodies = append(bodies, res.Body)
		wg.Go(func() { io.Copy(io.Discard, res.Body) })
	}
	res, err := http.Get(hs.URL + "/_mock/stream")
	if err != nil || res.StatusCode != 503 {
		t.Fatalf("stream %d: %v %v", changes.MaxSubscribers+1, res, err)
	}
	// It says why, and when to try again.
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(b), "too many event streams: 64 dashboards are open") || res.Header.Get("Retry-After") != "30" {
		t.Errorf("stream %d: %s, Retry-After %q", changes.MaxSubscribers+1, b, res.Header.Get("Retry-After"))
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if err := hs.Config.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown with open streams: %v", err)
	}
	wg.Wait()
	for _, b := range bodies {
		b.Close()
	}
}
