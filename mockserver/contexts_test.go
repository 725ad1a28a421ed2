package mockserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

var t0 = time.Date(2026, 11, 21, 20, 51, 0, 123_000_000, time.UTC)

type listBody struct {
	Data       []model.ContextJSON `json:"data"`
	HasMore    bool                `json:"hasMore"`
	NextCursor *string             `json:"nextCursor"`
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func create(t testing.TB, ts *TestServer, body string) model.ContextJSON {
	t.Helper()
	r := do(t, ts, call{method: "POST", path: "/v1/contexts", body: body})
	if r.Status != http.StatusCreated {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	var c model.ContextJSON
	r.json(t, &c)
	return c
}

func TestContextLifecycle(t *testing.T) {
	t.Parallel()
	clock := NewFakeClock(t0)
	ts := NewTestServer(t, WithClock(clock))
	user := ts.DefaultKey().User

	c := create(t, ts, `{"name":"Runbook","content":"Intro text.\n\n# Setup\n\nInstall it.\n","tags":["ops","ops","db"]}`)
	want := model.ContextJSON{ID: c.ID, Name: "Runbook", Content: "Intro text.\n\n# Setup\n\nInstall it.\n", Tags: []string{"ops", "db"},
		Version: 1, CreatedAt: "2026-11-21T20:51:00.123Z", UpdatedAt: "2026-11-21T20:51:00.123Z"}
	if d := cmp.Diff(want, c); d != "" {
		t.Fatalf("created (-want +got):\n%s", d)
	}

	var got model.ContextJSON
	do(t, ts, call{method: "GET", path: "/v1/contexts/" + c.ID}).json(t, &got)
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("get (-want +got):\n%s", d)
	}

	clock.Advance(time.Second)
	r := do(t, ts, call{method: "PUT", path: "/v1/contexts/" + c.ID, body: `{"content":"Intro text.\n\n# Setup\n\nInstall it twice.\n\n## Usage\n\nRun it.\n"}`})
	if r.Status != 200 {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	r.json(t, &got)
	want.Content, want.Version, want.UpdatedAt = "Intro text.\n\n# Setup\n\nInstall it twice.\n\n## Usage\n\nRun it.\n", 2, "2026-11-21T20:51:01.123Z"
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("update (-want +got):\n%s", d)
	}

	// A no-op update: same answer, no version, no event.
	nEvents := len(ts.Events())
	clock.Advance(time.Second)
	r = do(t, ts, call{method: "PUT", path: "/v1/contexts/" + c.ID, body: `{"name":"Runbook","tags":["ops","db"]}`})
	r.json(t, &got)
	if d := cmp.Diff(want, got); r.Status != 200 || d != "" {
		t.Fatalf("no-op update %d (-want +got):\n%s", r.Status, d)
	}
	if n := len(ts.Events()); n != nEvents {
		t.Fatalf("no-op update fired %d events", n-nEvents)
	}

	// Tags-only update: a version with no section changes.
	r = do(t, ts, call{method: "PUT", path: "/v1/contexts/" + c.ID, body: `{"tags":[]}`})
	r.json(t, &got)
	if got.Version != 3 || len(got.Tags) != 0 || !strings.Contains(string(r.Body), `"tags":[]`) {
		t.Fatalf("tags update: %s", r.Body)
	}

	var vl struct {
		Data       []model.VersionJSON `json:"data"`
		HasMore    bool                `json:"hasMore"`
		NextCursor *string             `json:"nextCursor"`
	}
	do(t, ts, call{method: "GET", path: "/v1/contexts/" + c.ID + "/versions"}).json(t, &vl)
	wantChanges := []contextsvc.Changes{
		{SectionsModified: []string{"(preamble)", "Setup"}, WordCountDelta: 5},
		{SectionsModified: []string{"Setup", "Usage"}, WordCountDelta: 4},
		{SectionsModified: []string{}, WordCountDelta: 0},
	}
	if len(vl.Data) != 3 || vl.HasMore || vl.NextCursor != nil {
		t.Fatalf("versions: %+v", vl)
	}
	for i, v := range vl.Data {
		if v.Version != i+1 || v.ContextID != c.ID || v.CreatedBy != user {
			t.Errorf("version %d: %+v", i+1, v)
		}
		if d := cmp.Diff(wantChanges[i], v.Changes); d != "" {
			t.Errorf("version %d changes (-want +got):\n%s", i+1, d)
		}
	}
	// Versions page by cursor.
	var p1, p2 struct {
		Data       []model.VersionJSON `json:"data"`
		NextCursor *string             `json:"nextCursor"`
		HasMore    bool                `json:"hasMore"`
	}
	do(t, ts, call{method: "GET", path: "/v1/contexts/" + c.ID + "/versions?limit=2"}).json(t, &p1)
	if len(p1.Data) != 2 || !p1.HasMore || p1.NextCursor == nil {
		t.Fatalf("versions page 1: %+v", p1)
	}
	do(t, ts, call{method: "GET", path: "/v1/contexts/" + c.ID + "/versions?limit=2&cursor=" + url.QueryEscape(*p1.NextCursor)}).json(t, &p2)
	if len(p2.Data) != 1 || p2.HasMore || p2.Data[0].Version != 3 {
		t.Fatalf("versions page 2: %+v", p2)
	}

	r = do(t, ts, call{method: "DELETE", path: "/v1/contexts/" + c.ID})
	if r.Status != 200 || string(r.Body) != fmt.Sprintf(`{"id":%q,"deleted":true}`, c.ID) {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	for _, cl := range []call{
		{method: "GET", path: "/v1/contexts/" + c.ID},
		{method: "PUT", path: "/v1/contexts/" + c.ID, body: `{"name":"x"}`},
		{method: "DELETE", path: "/v1/contexts/" + c.ID},
		{method: "GET", path: "/v1/contexts/" + c.ID + "/versions"},
		{method: "GET", path: "/v1/contexts/" + c.ID + "/export"},
	} {
		if r := do(t, ts, cl); r.Status != 404 {
			t.Errorf("%s %s after delete: %d", cl.method, cl.path, r.Status)
		} else if typ, _ := r.errorOf(t); typ != "not_found" {
			t.Errorf("type %q", typ)
		}
	}

	var types []contextsvc.EventType
	for _, ev := range ts.Events() {
		types = append(types, ev.Type)
		if ev.Account != ts.DefaultKey().Account {
			t.Errorf("event account %q", ev.Account)
		}
	}
	wantTypes := []contextsvc.EventType{
		contextsvc.EventContextCreated, contextsvc.EventContextVersionCreated,
		contextsvc.EventContextUpdated, contextsvc.EventContextVersionCreated,
		contextsvc.EventContextUpdated, contextsvc.EventContextVersionCreated,
		contextsvc.EventContextDeleted,
	}
	if d := cmp.Diff(wantTypes, types); d != "" {
		t.Fatalf("event types (-want +got):\n%s", d)
	}
	evs := ts.Events()
	wantData := []string{
		fmt.Sprintf(`{"contextId":%q,"name":"Runbook","version":1,"tags":["ops","db"],"createdBy":%q}`, c.ID, user),
		fmt.Sprintf(`{"contextId":%q,"version":1,"createdBy":%q}`, c.ID, user),
		fmt.Sprintf(`{"contextId":%q,"name":"Runbook","version":2,"updatedBy":%q,"changes":{"sections_modified":["Setup","Usage"],"word_count_delta":4}}`, c.ID, user),
	}
	for i, w := range wantData {
		if string(evs[i].Data) != w {
			t.Errorf("event %d data:\n got %s\nwant %s", i, evs[i].Data, w)
		}
	}
	if got := string(evs[6].Data); got != fmt.Sprintf(`{"contextId":%q,"name":"Runbook","deletedBy":%q}`, c.ID, user) {
		t.Errorf("deleted data %s", got)
	}
	var env map[string]any
	if err := json.Unmarshal(evs[2].Body, &env); err != nil || env["id"] != evs[2].ID || env["type"] != "context.updated" || env["timestamp"] != "2026-11-21T20:51:01.123Z" {
		t.Errorf("envelope %s", evs[2].Body)
	}
	checkEvents(t, ts.Server)
}

func TestListPaginationAndTags(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	var ids []string
	for i := range 45 {
		tags := []string{"all"}
		if i%3 == 0 {
			tags = append(tags, "three")
		}
		if i%5 == 0 {
			tags = append(tags, "five")
		}
		ids = append(ids, create(t, ts, mustJSON(map[string]any{"name": fmt.Sprint("c", i), "tags": tags})).ID)
	}
	// Delete two: one in the middle of the next page, one that will be the
	// cursor's own entry.
	do(t, ts, call{method: "DELETE", path: "/v1/contexts/" + ids[25]})
	list := func(query string) []string {
		t.Helper()
		var got []string
		cursor := ""
		for pages := 0; ; pages++ {
			q := query
			if cursor != "" {
				q += "&cursor=" + url.QueryEscape(cursor)
			}
			var lb listBody
			r := do(t, ts, call{method: "GET", path: "/v1/contexts?" + q})
			if r.Status != 200 {
				t.Fatalf("list %s: %d %s", q, r.Status, r.Body)
			}
			r.json(t, &lb)
			for _, c := range lb.Data {
				got = append(got, c.ID)
			}
			if pages == 0 && lb.HasMore {
				// The last entry of page 1 goes away before page 2.
				do(t, ts, call{method: "DELETE", path: "/v1/contexts/" + lb.Data[len(lb.Data)-1].ID})
			}
			if !lb.HasMore {
				if lb.NextCursor != nil {
					t.Fatalf("nextCursor with hasMore false")
				}
				return got
			}
			cursor = *lb.NextCursor
		}
	}
	got := list("limit=20")
	var want []string
	for i, id := range ids {
		if i != 25 {
			want = append(want, id)
		}
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("all pages (-want +got):\n%s", d)
	}
	// ids[19] (page 1's last) is now deleted too.
	got = list("limit=7&tag=three&tag=five")
	want = []string{ids[0], ids[15], ids[30]}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("tags three+five (-want +got):\n%s", d)
	}
	got = list("tag=five&tag=nope")
	if len(got) != 0 {
		t.Fatalf("unknown tag: %v", got)
	}
	// Retagging moves a context between tag indexes, in creation order.
	do(t, ts, call{method: "PUT", path: "/v1/contexts/" + ids[1], body: `{"tags":["five","three"]}`})
	do(t, ts, call{method: "PUT", path: "/v1/contexts/" + ids[0], body: `{"tags":["all"]}`})
	got = list("limit=2&tag=three&tag=five")
	want = []string{ids[1], ids[15], ids[30]}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("after retag (-want +got):\n%s", d)
	}
}

// TestCursorsBelongToTheirList: a nextCursor continues only the list
// that issued it (the document: "valid only as the nextCursor of the same
// list; any other is a 400"): the same account, the same context's
// versions, the same filters (tags in any order); any other list refuses
// it with param cursor.
func TestCursorsBelongToTheirList(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t, WithKey(Key{Token: "a", Account: "acme"}), WithKey(Key{Token: "b", Account: "globex"}))
	var ids []string
	for i := range 3 {
		ids = append(ids, create(t, ts, mustJSON(map[string]any{"name": fmt.Sprint("c", i), "tags": []string{"x", "y"}})).ID)
		do(t, ts, call{method: "PUT", path: "/v1/contexts/" + ids[i], body: `{"content":"v2"}`, key: "a"})
	}
	create(t, ts, `{"name":"other"}`)
	cursorOf := func(key, path string) string {
		t.Helper()
		var lb struct{ NextCursor *string }
		r := do(t, ts, call{method: "GET", path: path, key: key})
		r.json(t, &lb)
		if r.Status != 200 || lb.NextCursor == nil {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		}
		return url.QueryEscape(*lb.NextCursor)
	}
	cx := cursorOf("a", "/v1/contexts?limit=1&tag=x")
	cxy := cursorOf("a", "/v1/contexts?limit=1&tag=x&tag=y")
	call0 := cursorOf("a", "/v1/contexts?limit=1")
	cv := cursorOf("a", "/v1/contexts/"+ids[0]+"/versions?limit=1")
	ce := cursorOf("-", "/_mock/events?limit=1&type=context.created")
	cea := cursorOf("-", "/_mock/events?limit=1&account=acme")
	cma := cursorOf("-", "/_mock/contexts?limit=1&account=acme")
	cmv := cursorOf("-", "/_mock/contexts/"+ids[0]+"/versions?limit=1")
	for _, tc := range []struct {
		key, path string
		status    int
	}{
		{"a", "/v1/contexts?tag=x&cursor=" + cx, 200},
		{"a", "/v1/contexts?tag=y&tag=x&cursor=" + cxy, 200}, // the same filter
		{"a", "/v1/contexts?tag=x&tag=x&tag=y&cursor=" + cxy, 200},
		{"a", "/v1/contexts?cursor=" + call0, 200},
		{"a", "/v1/contexts?tag=y&cursor=" + cx, 400},
		{"a", "/v1/contexts?cursor=" + cx, 400},
		{"a", "/v1/contexts?tag=x&cursor=" + cxy, 400},
		{"a", "/v1/contexts?tag=x&cursor=" + call0, 400},
		{"b", "/v1/contexts?cursor=" + call0, 400}, // another account's list
		{"a", "/v1/contexts/" + ids[0] + "/versions?cursor=" + cv, 200},
		{"a", "/v1/contexts/" + ids[1] + "/versions?cursor=" + cv, 400},
		{"-", "/_mock/events?type=context.created&cursor=" + ce, 200},
		{"-", "/_mock/events?type=context.updated&cursor=" + ce, 400},
		{"-", "/_mock/events?cursor=" + ce, 400},
		// The dashboard's filters and lists: the same rule.
		{"-", "/_mock/events?account=acme&cursor=" + cea, 200},
		{"-", "/_mock/events?account=acme&order=desc&cursor=" + cea, 400}, // the order is part of the list
		{"-", "/_mock/events?account=globex&cursor=" + cea, 400},
		{"-", "/_mock/events?cursor=" + cea, 400},
		{"-", "/_mock/contexts?account=acme&cursor=" + cma, 200},
		{"-", "/_mock/contexts?account=globex&cursor=" + cma, 400},
		{"-", "/_mock/contexts?cursor=" + cma, 400},
		{"-", "/_mock/contexts/" + ids[0] + "/versions?cursor=" + cmv, 200},
		{"-", "/_mock/contexts/" + ids[1] + "/versions?cursor=" + cmv, 400},
	} {
		r := do(t, ts, call{method: "GET", path: tc.path, key: tc.key})
		if _, param := r.errorOf(t); r.Status != tc.status || (tc.status == 400 && param != "cursor") {
			t.Errorf("%s (key %s): %d %.200s, want %d", tc.path, tc.key, r.Status, r.Body, tc.status)
		}
	}
}

func TestAccountsAreIsolated(t *testing.T) {
	t.Parallel()
	a1 := Key{Token: "tok-a1", Account: "acct_a", Plan: PlanBusiness}
	a2 := Key{Token: "tok-a2", Account: "acct_a", Plan: PlanBusiness, Scope: ScopeRead}
	b := Key{Token: "tok-b", Account: "acct_b", Plan: PlanBusiness}
	ts := NewTestServer(t, WithKey(a1), WithKey(a2), WithKey(b))
	if ts.APIKey != "tok-a1" {
		t.Fatalf("APIKey = %q", ts.APIKey)
	}
	c := create(t, ts, `{"name":"mine"}`)
	if r := do(t, ts, call{method: "GET", path: "/v1/contexts/" + c.ID, key: "tok-a2"}); r.Status != 200 {
		t.Errorf("same account: %d", r.Status)
	}
	for _, cl := range []call{
		{method: "GET", path: "/v1/contexts/" + c.ID, key: "tok-b"},
		{method: "PUT", path: "/v1/contexts/" + c.ID, key: "tok-b", body: `{"name":"theirs"}`},
		{method: "DELETE", path: "/v1/contexts/" + c.ID, key: "tok-b"},
		{method: "GET", path: "/v1/contexts/" + c.ID + "/versions", key: "tok-b"},
		{method: "GET", path: "/v1/contexts/" + c.ID + "/export", key: "tok-b"},
	} {
		r := do(t, ts, cl)
		if typ, _ := r.errorOf(t); r.Status != 404 || typ != "not_found" {
			t.Errorf("%s %s other account: %d %s", cl.method, cl.path, r.Status, typ)
		}
	}
	var lb listBody
	do(t, ts, call{method: "GET", path: "/v1/contexts", key: "tok-b"}).json(t, &lb)
	if len(lb.Data) != 0 {
		t.Errorf("other account lists %d", len(lb.Data))
	}
	// Read scope may read but not write.
	r := do(t, ts, call{method: "POST", path: "/v1/contexts", key: "tok-a2", body: `{"name":"x"}`})
	if typ, _ := r.errorOf(t); r.Status != 403 || typ != "forbidden" {
		t.Errorf("read-scope write: %d %s", r.Status, typ)
	}
	if sc, ok := ts.Context(c.ID); !ok || sc.Account != "acct_a" || sc.Name != "mine" {
		t.Errorf("Context(): %+v %v", sc, ok)
	}
	if n := len(ts.Contexts("acct_b")); n != 0 {
		t.Errorf("Contexts(acct_b) = %d", n)
	}
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	clock := NewFakeClock(t0)
	ts := NewTestServer(t, WithClock(clock),
		WithKey(Key{Token: "free", Plan: PlanFree}),
		WithKey(Key{Token: "ent", Plan: PlanEnterprise, PerMinute: 120, Burst: 3}),
		WithKey(Key{Token: "unl", Plan: PlanUnlimited}))
	get := func(key string) *response {
		return do(t, ts, call{method: "GET", path: "/v1/contexts", key: key})
	}
	for i := range 10 {
		r := get("free")
		if r.Status != 200 {
			t.Fatalf("request %d: %d", i, r.Status)
		}
		want := http.Header{"X-Ratelimit-Limit": {"60"}, "X-Ratelimit-Remaining": {fmt.Sprint(9 - i)}, "X-Ratelimit-Reset": {fmt.Sprint(i + 1)}}
		for k, v := range want {
			if d := cmp.Diff(v, r.Header[k]); d != "" {
				t.Errorf("request %d %s (-want +got):\n%s", i, k, d)
			}
		}
	}
	r := get("free")
	if typ, _ := r.errorOf(t); r.Status != 429 || typ != "rate_limited" || r.Header.Get("Retry-After") != "1" || r.Header.Get("X-Ratelimit-Remaining") != "0" {
		t.Fatalf("11th: %d %s %v", r.Status, typ, r.Header)
	}
	clock.Advance(500 * time.Millisecond)
	if r := get("free"); r.Status != 429 || r.Header.Get("Retry-After") != "1" {
		t.Fatalf("after 0.5 s: %d Retry-After %q", r.Status, r.Header.Get("Retry-After"))
	}
	clock.Advance(500 * time.Millisecond)
	if r := get("free"); r.Status != 200 {
		t.Fatalf("after 1 s: %d", r.Status)
	}
	// Enterprise: its own numbers (2 per second, burst 3).
	for range 3 {
		get("ent")
	}
	r = get("ent")
	if r.Status != 429 || r.Header.Get("X-Ratelimit-Limit") != "120" || r.Header.Get("X-Ratelimit-Reset") != "2" {
		t.Fatalf("enterprise: %d %v", r.Status, r.Header)
	}
	// Unlimited: never limited, no headers.
	for range 200 {
		if r := get("unl"); r.Status != 200 || r.Header.Get("X-Ratelimit-Limit") != "" {
			t.Fatalf("unlimited: %d %v", r.Status, r.Header)
		}
	}
	// Errors after authentication carry the headers too.
	clock.Advance(time.Minute)
	r = do(t, ts, call{method: "GET", path: "/v1/contexts/ctx_nope", key: "free"})
	if r.Status != 404 || r.Header.Get("X-Ratelimit-Remaining") != "9" {
		t.Fatalf("404 rate headers: %v", r.Header)
	}
}

func TestWebhookRegister(t *testing.T) {
	t.Parallel()
	clock := NewFakeClock(t0)
	ts := NewTestServer(t, WithClock(clock))
	r := do(t, ts, call{method: "POST", path: "/v1/webhooks", body: `{"url":"https://example.com/hook","events":["context.updated","export.completed","context.updated"],"secret":"s3cret-value"}`})
	if r.Status != 201 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if strings.Contains(string(r.Body), "s3cret") {
		t.Fatalf("secret returned: %s", r.Body)
	}
	var w model.WebhookJSON
	r.json(t, &w)
	want := model.WebhookJSON{ID: w.ID, URL: "https://example.com/hook", Events: []contextsvc.EventType{"context.updated", "export.completed"}, CreatedAt: "2026-11-21T20:51:00.123Z", Active: true}
	if d := cmp.Diff(want, w); d != "" || !strings.HasPrefix(w.ID, "wh_") {
		t.Fatalf("(-want +got):\n%s", d)
	}
	wantStored := []Webhook{{ID: w.ID, Account: ts.DefaultKey().Account, URL: want.URL, Events: want.Events, CreatedAt: t0, Active: true}}
	if d := cmp.Diff(wantStored, ts.Webhooks()); d != "" {
		t.Fatalf("Webhooks() (-want +got):\n%s", d)
	}
	hook := func(u string) string {
		return mustJSON(map[string]any{"url": u, "events": []string{"context.created"}, "secret": "s"})
	}
	for _, u := range []string{
		"http://127.0.0.1:9/x", "http://localhost:8080/x", "http://[::1]/x", "http://127.8.9.10/x", "HTTP://LocalHost/x",
		"https://example.com", "HTTPS://EXAMPLE.COM:443", "https://user:pa%20ss@hooks.example.com/in?a=1&b=%2F#frag",
		"https://example.com/p/\"q\"/{x}|~", "https://[::1]:8443/h", "https://10.0.0.1/h", "https://a_b.example~/",
	} {
		if r := do(t, ts, call{method: "POST", path: "/v1/webhooks", body: hook(u)}); r.Status != 201 {
			t.Errorf("%s: %d %s", u, r.Status, r.Body)
		}
	}
	for _, u := range []string{
		"http://example.com/h", "http://127.0.0.01/h", "http://127.1/h", "http://[0:0:0:0:0:0:0:1]/h", "http://[::ffff:127.0.0.1]/h",
		"https://exa mple.com/h", "https://example.com/a b", "https://example.com/%zz", "https://example.com/?q=%g0", "https:///h",
		"https://:443/h", "https://[fe80::1]/h", "https://ex\u00e4mple.com/h", "https://example.com/\u00e4", "https://example.com/\n",
		"https://example.com:8o/h", "https://u@v@example.com/", "mailto:a@example.com", "//example.com/h", "https://example.com/h\u0000",
		"https://example.com/" + strings.Repeat("a", 2048),
	} {
		r := do(t, ts, call{method: "POST", path: "/v1/webhooks", body: hook(u)})
		if typ, param := r.errorOf(t); r.Status != 400 || typ != "invalid_request" || param != "url" {
			t.Errorf("%q: %d %s", u, r.Status, r.Body)
		}
	}
	if got := ts.svc.Store.Targets(ts.DefaultKey().Account, contextsvc.EventExportCompleted); len(got) != 1 || got[0].State().Secret != "s3cret-value" || got[0].State().URL != want.URL {
		t.Errorf("targets: %+v", got)
	}

	strict := NewTestServer(t, WithHTTPSOnlyWebhooks(true))
	r = do(t, strict, call{method: "POST", path: "/v1/webhooks", body: `{"url":"http://127.0.0.1:9/x","events":["context.created"],"secret":"s"}`})
	if typ, param := r.errorOf(t); r.Status != 400 || typ != "invalid_request" || param != "url" {
		t.Fatalf("https-only: %d %s %s", r.Status, typ, param)
	}
}

// TestPublish: publishing fires context.published as the first user of
// the context's account, and hands it to the webhooks subscribed to it,
// not to the others.
func TestPublish(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	// Closed, the engine keeps the deliveries pending and sends nothing.
	if err := ts.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	hook := func(events string) string {
		r := do(t, ts, call{method: "POST", path: "/v1/webhooks", body: `{"url":"https://example.com/h","events":` + events + `,"secret":"k"}`})
		var w model.WebhookJSON
		r.json(t, &w)
		return w.ID
	}
	published, created := hook(`["context.published"]`), hook(`["context.created"]`)
	c := create(t, ts, `{"name":"Doc"}`)
	ev, err := ts.Publish(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != contextsvc.EventContextPublished {
		t.Errorf("event %s", ev.Type)
	}
	want := fmt.Sprintf(`{"contextId":%q,"name":"Doc","version":1,"publishedBy":%q}`, c.ID, ts.DefaultKey().User)
	if string(ev.Data) != want {
		t.Fatalf("data %s", ev.Data)
	}
	ds := ts.Deliveries(DeliveryFilter{EventID: ev.ID})
	if len(ds) != 1 || ds[0].WebhookID != published {
		t.Errorf("the publication's deliveries: %+v, want one to %s", ds, published)
	}
	if ds := ts.Deliveries(DeliveryFilter{WebhookID: created}); len(ds) != 1 || ds[0].EventType != contextsvc.EventContextCreated {
		t.Errorf("the other webhook's deliveries: %+v, want the creation's alone", ds)
	}
	if _, err := ts.Publish(t.Context(), "ctx_nope"); !errors.Is(err, ErrContextNotFound) {
		t.Fatalf("publish of a missing context: %v", err)
	}
	checkEvents(t, ts.Server)
}

func TestRoutingErrors(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	for _, tc := range []struct {
		c      call
		status int
		allow  string
	}{
		{call{method: "GET", path: "/v2/contexts"}, 404, ""},
		{call{method: "GET", path: "/v1/contexts/"}, 404, ""},
		{call{method: "GET", path: "/v1/nothing", key: "-"}, 404, ""},
		{call{method: "GET", path: "/v1//contexts"}, 404, ""},
		{call{method: "GET", path: "/v1/contexts/x/../y"}, 404, ""},
		{call{method: "PATCH", path: "/v1/contexts/ctx_x"}, 405, "GET, PUT, DELETE"},
		{call{method: "DELETE", path: "/v1/contexts"}, 405, "GET, POST"},
		{call{method: "GET", path: "/v1/webhooks"}, 405, "POST"},
		{call{method: "POST", path: "/v1/contexts/ctx_x/export"}, 405, "GET"},
	} {
		r := do(t, ts, tc.c)
		if r.Status != tc.status || r.Header.Get("Allow") != tc.allow {
			t.Errorf("%s %s: %d Allow %q", tc.c.method, tc.c.path, r.Status, r.Header.Get("Allow"))
		}
	}
	r := do(t, ts, call{method: "GET", path: "/_mock/openapi.yaml", key: "-"})
	if r.Status != 200 || r.Header.Get("Content-Type") != "application/yaml" || string(r.Body) != string(OpenAPI()) {
		t.Errorf("openapi.yaml: %d %s", r.Status, r.Header.Get("Content-Type"))
	}
	off := NewTestServer(t, WithAdmin(false))
	if r := do(t, off, call{method: "GET", path: "/_mock/openapi.yaml", key: "-"}); r.Status != 404 {
		t.Errorf("admin off: %d", r.Status)
	}
}

func TestPanicBecomesInternalError(t *testing.T) {
	t.Parallel()
	// Out of the validation: a 500 on a path the document does not have is
	// what this test wants.
	s := unvalidated(New())
	s.api = http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") })
	rec := newRecorder()
	s.ServeHTTP(rec, mustRequest("GET", "/v1/boom"))
	var e httpapi.ErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code != 500 || e.Error.Type != "internal" || e.Error.RequestID != rec.Header().Get("X-Request-Id") {
		t.Fatalf("%d %s", rec.Code, rec.Body)
	}
}

// TestValidationBoundaries sends the largest values the contract allows,
// each next to the smallest it refuses, so an off-by-one in a limit (or a
// byte count where the contract counts code points) fails here.
func TestValidationBoundaries(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t, WithKey(Key{Token: "k", Plan: PlanUnlimited}))
	tags := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprint("t", i)
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		body   map[string]any
		status int
		param  string
		want   func(c model.ContextJSON) bool
	}{
		{"200 two-byte characters", map[string]any{"name": strings.Repeat("é", 200)}, 201, "",
			func(c model.ContextJSON) bool { return c.Name == strings.Repeat("é", 200) }},
		{"201 characters", map[string]any{"name": strings.Repeat("n", 201)}, 400, "name", nil},
		{"name with white space around text", map[string]any{"name": "  x  "}, 201, "",
			func(c model.ContextJSON) bool { return c.Name == "  x  " }},
		{"content of 1,000,000 bytes", map[string]any{"name": "a", "content": strings.Repeat("ü", 500_000)}, 201, "",
			func(c model.ContextJSON) bool { return len(c.Content) == 1_000_000 }},
		{"content of 1,000,001 bytes", map[string]any{"name": "a", "content": strings.Repeat("ü", 500_000) + "x"}, 400, "content", nil},
		{"20 tags", map[string]any{"name": "a", "tags": tags(20)}, 201, "",
			func(c model.ContextJSON) bool { return cmp.Equal(c.Tags, tags(20)) }},
		{"21 tags, one a duplicate", map[string]any{"name": "a", "tags": append(tags(20), "t3")}, 201, "",
			func(c model.ContextJSON) bool { return cmp.Equal(c.Tags, tags(20)) }},
		{"duplicates dropped, first kept, order kept", map[string]any{"name": "a", "tags": []string{"b", "a", "b", "c", "a"}}, 201, "",
			func(c model.ContextJSON) bool { return cmp.Equal(c.Tags, []string{"b", "a", "c"}) }},
		{"21 distinct tags", map[string]any{"name": "a", "tags": tags(21)}, 400, "tags", nil},
		{"50-character tag", map[string]any{"name": "a", "tags": []string{strings.Repeat("é", 50)}}, 201, "",
			func(c model.ContextJSON) bool { return c.Tags[0] == strings.Repeat("é", 50) }},
		{"no tags nor content", map[string]any{"name": "a"}, 201, "",
			func(c model.ContextJSON) bool { return c.Tags != nil && len(c.Tags) == 0 && c.Content == "" }},
	} {
		r := do(t, ts, call{method: "POST", path: "/v1/contexts", key: "k", body: mustJSON(tc.body)})
		if r.Status != tc.status {
			t.Errorf("%s: %d %.300s", tc.name, r.Status, r.Body)
			continue
		}
		if tc.status != 201 {
			if _, param := r.errorOf(t); param != tc.param {
				t.Errorf("%s: param %q, want %q", tc.name, param, tc.param)
			}
			continue
		}
		var c model.ContextJSON
		r.json(t, &c)
		if !tc.want(c) {
			t.Errorf("%s: stored %+.300v", tc.name, c)
		}
	}
	// Escapes the surrogate scan must walk in linear time, at the size
	// limits: 150,000 escaped surrogate pairs (600 KB of text from a
	// 1.8 MB body), 500,000 escaped backslashes, and the same pairs with
	// one lone half at the very end.
	pairs := strings.Repeat(`\ud83d\ude00`, 150_000)
	for _, tc := range []struct {
		name, content string
		status        int
	}{
		{"150,000 escaped pairs", pairs, 201},
		{"500,000 escaped backslashes", strings.Repeat(`\\`, 500_000), 201},
		{"a lone half after 149,999 pairs", pairs[:len(pairs)-6], 400},
	} {
		r := do(t, ts, call{method: "POST", path: "/v1/contexts", key: "k", body: `{"name":"e","content":"` + tc.content + `"}`})
		if r.Status != tc.status {
			t.Errorf("%s: %d %.300s", tc.name, r.Status, r.Body)
		}
	}

	// No context carries 21 tags, so a filter on 21 distinct ones is an
	// empty page, not an error.
	q := url.Values{"tag": tags(21)}
	var lb listBody
	if r := do(t, ts, call{method: "GET", path: "/v1/contexts?" + q.Encode(), key: "k"}); r.Status != 200 {
		t.Fatalf("21 tag filters: %d %s", r.Status, r.Body)
	} else if r.json(t, &lb); len(lb.Data) != 0 || lb.HasMore {
		t.Errorf("21 tag filters: %+v", lb)
	}
}
