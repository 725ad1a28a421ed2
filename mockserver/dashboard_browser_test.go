package mockserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/browsertest"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// The dashboard in a real browser (Debian's chromium, headless, through
// internal/browsertest): each test drives the page against a TestServer,
// whose every exchange, the page's included, the validator checks against
// openapi.yaml. They skip under -short (each opens a tab, about half a
// second), and without chromium (failing with CI=true).

// ScreenshotEnv names the environment variable that makes
// TestDashboardScreenshot write the screenshot in docs/dashboard.md:
//
//	DASHBOARD_SCREENSHOT=../docs/dashboard.png go test ./mockserver -run TestDashboardScreenshot
const screenshotEnv = "DASHBOARD_SCREENSHOT"

// skipShortBrowser skips a browser test under -short, before it builds
// anything: each opens a tab (about half a second on a busy 2-core
// machine) and the short suite runs no browser test of this package.
func skipShortBrowser(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("drives the dashboard in a browser tab; -short runs no browser test")
	}
}

// dash is a dashboard open in a tab.
type dash struct {
	t   *testing.T
	ctx context.Context // the tab, with the test's time limit
	tab context.Context // the tab itself, for the console
	ts  *TestServer
}

// openDashboard opens ts's dashboard at the route fragment ("#/events…")
// and waits for its first list. ts, and every server the page's data
// points at, must be started before: the tab closes first.
func openDashboard(t *testing.T, ts *TestServer, fragment string) *dash {
	t.Helper()
	d := newDash(t, ts, nil)
	d.navigate(ts.HTTP.URL + "/_mock/ui/" + fragment)
	d.wait(`document.body.dataset.ready === 'true'`)
	return d
}

// newDash opens a tab for ts's dashboard without loading it, after setup
// (when given) has prepared the tab.
func newDash(t *testing.T, ts *TestServer, setup func(tab context.Context)) *dash {
	t.Helper()
	tab := browsertest.New(t)
	ctx := browsertest.Bounded(t, tab)
	if setup != nil {
		setup(tab)
	}
	return &dash{t: t, ctx: ctx, tab: tab, ts: ts}
}

// navigate loads url in the tab.
func (d *dash) navigate(url string) {
	d.t.Helper()
	if err := chromedp.Do(d.ctx, chromedp.Navigate(url)); err != nil {
		d.t.Fatal(err)
	}
}

// wait waits until the expression is truthy, checking on every change of
// the document (never on a timer), and returns its value: a string as it
// is, anything else as JSON. An expression that throws (an element not
// there yet) is not yet true.
func (d *dash) wait(expr string) string {
	d.t.Helper()
	guarded := "(() => { try { return (" + expr + "); } catch (e) { return false; } })()"
	v, err := chromedp.Run(d.ctx, chromedp.Poll[json.RawMessage](guarded, chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(20*time.Second)))
	if err != nil {
		// What the page shows says why, more often than not.
		text, _ := chromedp.Run(d.tab, chromedp.Evaluate[string](`location.hash + '\n' + document.body.innerText`))
		d.t.Fatalf("waiting for %s: %v\nthe page shows %s", expr, err, text)
	}
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s
	}
	return string(v)
}

// eval runs an expression and returns its value.
func evalAs[T any](d *dash, expr string) T {
	d.t.Helper()
	v, err := chromedp.Run(d.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		d.t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// route moves the page to another route, as a click on a link does.
func (d *dash) route(fragment string) {
	d.t.Helper()
	evalAs[chromedp.Void](d, fmt.Sprintf(`location.hash = %q`, fragment))
}

// click clicks the element css selects, once it is there.
func (d *dash) click(css string) {
	d.t.Helper()
	d.wait(fmt.Sprintf(`document.querySelector(%q) !== null`, css))
	if err := chromedp.Do(d.ctx, chromedp.Click(chromedp.CSS(css))); err != nil {
		d.t.Fatalf("click %s: %v", css, err)
	}
}

// noDialogs fails the test for each JavaScript dialog (alert, confirm,
// prompt) the page opens from now on, and closes it so the page goes on.
func noDialogs(t *testing.T, tab context.Context) {
	dialogs := chromedp.Events(tab, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			t.Errorf("the page opened a %s dialog: %q", ev.Type, ev.Message)
			_, _ = chromedp.Call(tab, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
}

// receiver is a webhook receiver for the browser tests: it answers what
// answer says, and sends each request's attempt number on hits.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	answer func(w http.ResponseWriter)
	hits   chan string
}

func newReceiver(t *testing.T, answer func(w http.ResponseWriter)) *receiver {
	rc := &receiver{answer: answer, hits: make(chan string, 100)}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		rc.mu.Lock()
		answer := rc.answer
		rc.mu.Unlock()
		answer(w)
		select {
		case rc.hits <- r.Header.Get("X-Service-Delivery-Attempt"):
		default:
		}
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) setAnswer(answer func(w http.ResponseWriter)) {
	rc.mu.Lock()
	rc.answer = answer
	rc.mu.Unlock()
}

// waitHit waits for the receiver's next request and returns its attempt
// number.
func (rc *receiver) waitHit(t *testing.T) string {
	t.Helper()
	return <-rc.hits
}

func answerStatus(status int, body string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// api sends a /v1 request with ts's key and fails the test unless it
// answers 2xx; it returns the body.
func apiCall(t testing.TB, ts *TestServer, key, method, path, body string) []byte {
	t.Helper()
	r := do(t, ts, call{method: method, path: path, body: body, key: key})
	if r.Status/100 != 2 {
		t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Body)
	}
	return r.Body
}

// demo is a server with a little of everything, as a developer's would
// hold after a morning of work: two accounts, contexts with versions,
// webhooks to a healthy receiver, a failing one and a dead one, events,
// and deliveries with retries on a fake clock.
type demo struct {
	ts      *TestServer
	clock   *FakeClock
	failing string // a delivery to the failing receiver, three attempts made
	search  string // the failing receiver's webhook
	context string // a context with three versions
	tokens  []string
}

func newDemo(t *testing.T, opts ...Option) *demo {
	t.Helper()
	clock := NewFakeClock(time.Date(2026, 11, 21, 9, 30, 0, 0, time.UTC))
	tokens := []string{"sk_test_51acmeWrite7d3f0c9e2b8a4d61f", "sk_test_51acmeRead0c1e7b99f3a2d8e40", "sk_test_51globexA9e4c2f7b1d6e3a08"}
	opts = append([]Option{WithClock(clock),
		WithKey(Key{Token: tokens[0], Account: "acme", Plan: PlanUnlimited}),
		WithKey(Key{Token: tokens[1], Account: "acme", Plan: PlanPro, Scope: ScopeRead}),
		WithKey(Key{Token: tokens[2], Account: "globex", Plan: PlanBusiness})}, opts...)
	ts := NewTestServer(t, opts...)
	ok := newReceiver(t, answerStatus(200, `{"received":true}`))
	failing := newReceiver(t, answerStatus(503, `{"error":"search index is rebuilding","retryAfterSeconds":30,"requestId":"rq_7f3a9c"}`))
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL + "/hooks/audit"
	dead.Close() // connection refused from now on

	hook := func(key, url string, events ...string) string {
		b, _ := json.Marshal(map[string]any{"url": url, "events": events, "secret": "whsec_demo"})
		var w model.WebhookJSON
		json.Unmarshal(apiCall(t, ts, key, "POST", "/v1/webhooks", string(b)), &w)
		return w.ID
	}
	hook(tokens[0], ok.URL+"/hooks/billing", "context.created", "context.updated", "context.deleted", "context.published")
	search := hook(tokens[0], failing.URL+"/webhooks/search-indexer", "context.created", "context.updated")
	hook(tokens[2], ok.URL+"/globex/team-sync", "team.member.added", "team.member.removed", "context.created")
	hook(tokens[2], deadURL, "context.created", "context.deleted")
	legacy := hook(tokens[0], ok.URL+"/legacy/notify", "export.completed")
	if _, err := ts.UpdateWebhook(legacy, WebhookUpdate{Active: new(false)}); err != nil {
		t.Fatal(err)
	}

	create := func(key, name, content string, tags ...string) string {
		b, _ := json.Marshal(map[string]any{"name": name, "content": content, "tags": append([]string{}, tags...)})
		var c model.ContextJSON
		json.Unmarshal(apiCall(t, ts, key, "POST", "/v1/contexts", string(b)), &c)
		return c.ID
	}
	runbook := create(tokens[0], "Runbook: payments outage",
		"# Payments outage\n\n## Detect\n\nPager alert `payments_5xx_rate > 2%`.\n\n## Mitigate\n\n1. Fail over to the standby region.\n2. Pause the retry queue.\n", "ops", "payments")
	advance := func(d time.Duration) {
		clock.Advance(d)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		if err := ts.WaitIdle(ctx); err != nil {
			t.Fatal(err)
		}
	}
	advance(0)
	advance(2 * time.Minute)
	apiCall(t, ts, tokens[0], "PUT", "/v1/contexts/"+runbook, `{"content":"# Payments outage\n\n## Detect\n\nPager alert `+"`payments_5xx_rate > 2%`"+` for 5 minutes.\n\n## Mitigate\n\n1. Fail over to the standby region.\n2. Pause the retry queue.\n3. Post in #incidents.\n"}`)
	create(tokens[0], "Onboarding checklist", "# Week one\n\n- Laptop\n- Accounts\n- Shadow an on-call shift\n", "people")
	create(tokens[2], "Quarterly roadmap", "# Q1\n\nShip the search rewrite.\n", "planning")
	advance(3 * time.Minute)
	apiCall(t, ts, tokens[0], "PUT", "/v1/contexts/"+runbook, `{"name":"Runbook: payments outage (v3)","tags":["ops","payments","sev1"]}`)
	create(tokens[0], "API style guide", "# Naming\n\nResources are plural nouns.\n", "engineering")
	ts.EmitEvent(context.Background(), "globex", contextsvc.EventTeamMemberAdded, json.RawMessage(`{"teamId":"team_4k2m9q7w1x8z3c5v6b0n","userId":"user_p3r7t2y9u4i1o6a8s5d0","role":"editor"}`))
	ts.Publish(context.Background(), runbook)
	advance(time.Minute)
	advance(time.Minute)
	advance(5 * time.Minute)
	advance(30 * time.Second)

	// The first delivery to the failing receiver: three attempts by now.
	var failingID string
	for _, dl := range ts.Deliveries(DeliveryFilter{WebhookID: search}) {
		if len(dl.Attempts) == 3 {
			failingID = dl.ID
			break
		}
	}
	if failingID == "" {
		t.Fatalf("no delivery to the failing receiver has three attempts: %+v", ts.Deliveries(DeliveryFilter{WebhookID: search}))
	}
	return &demo{ts: ts, clock: clock, failing: failingID, search: search, context: runbook, tokens: tokens}
}

// TestDashboardViews: every view loads with the demo's data and no console
// error, a failed delivery shows each attempt with the receiver's answer,
// a context its versions and diff, and a key only its masked token.
func TestDashboardViews(t *testing.T) {
	skipShortBrowser(t)
	t.Parallel()
	dm := newDemo(t)
	d := openDashboard(t, dm.ts, "#/deliveries?id="+dm.failing)

	got := d.wait(`(() => {
		const items = [...document.querySelectorAll('.attempts .attempt')];
		return items.length === 3 && items.map(li => li.querySelector('.attempt-head').textContent + ' | ' + li.querySelector('pre.answer').textContent);
	})()`)
	for _, n := range []string{"#1", "#2", "#3"} {
		if !strings.Contains(got, n) || strings.Count(got, "503") != 3 || strings.Count(got, "search index is rebuilding") != 3 {
			t.Fatalf("the attempts of a failing delivery: %s", got)
		}
	}
	next := d.wait(`document.querySelector('.detail dl.kv').textContent.includes('Next attempt') && document.querySelector('.detail dl.kv').textContent`)
	if !strings.Contains(next, "in 23m 30s") {
		t.Errorf("the next attempt: %s", next)
	}
	rows := evalAs[int](d, `document.querySelectorAll('table.list.deliveries tbody tr').length`)
	if want := len(dm.ts.Deliveries(DeliveryFilter{})); rows != want {
		t.Errorf("%d rows, want %d deliveries", rows, want)
	}

	for _, v := range []struct{ fragment, want string }{
		{"#/events", "team.member.added"},
		{"#/webhooks", "inactive"},
		{"#/accounts", "sk_test…"},
		{"#/faults", "No fault"},
		{"#/contexts?id=" + dm.context, "Runbook: payments outage (v3)"},
		{"#/deliveries?state=failed", "failed"},
	} {
		d.route(v.fragment)
		d.wait(fmt.Sprintf(`document.querySelector('main').textContent.includes(%q)`, v.want))
	}
	// The context: its versions, and the diff of the latest two (a rename
	// and new tags, the same content) shown, then of v1 and v3.
	d.route("#/contexts?id=" + dm.context)
	d.wait(`document.querySelectorAll('.versions tbody tr').length === 3 && document.querySelector('.diff-out').textContent.includes('is the same')`)
	evalAs[chromedp.Void](d, `document.querySelector('.diff-form input').value = '1'`)
	d.click(".diff-form button")
	diff := d.wait(`document.querySelector('.diff') && [...document.querySelectorAll('.diff .line-insert, .diff .line-delete')].map(l => l.textContent).join('\n')`)
	for _, want := range []string{"+3. Post in #incidents.", "−Pager alert `payments_5xx_rate > 2%`.", "+Pager alert `payments_5xx_rate > 2%` for 5 minutes."} {
		if !strings.Contains(diff, want) {
			t.Errorf("the diff of v1 and v3 lacks %q:\n%s", want, diff)
		}
	}
	// The deliveries' filters, set through the page's own controls: each
	// narrows the list to what the Go API's filter finds.
	d.route("#/deliveries")
	choose := func(name, value string) {
		d.t.Helper()
		d.wait(fmt.Sprintf(`document.querySelector('select[name=%s] option[value=%q]') !== null`, name, value))
		evalAs[chromedp.Void](d, fmt.Sprintf(`(() => { const s = document.querySelector('select[name=%s]'); s.value = %q; s.dispatchEvent(new Event('change')); })()`, name, value))
	}
	for _, step := range []struct {
		act  func()
		hash string
		f    DeliveryFilter
	}{
		{func() { choose("account", "globex") }, "account=globex", DeliveryFilter{Account: "globex"}},
		{func() { choose("type", "context.created") }, "type=context.created", DeliveryFilter{Account: "globex", EventType: contextsvc.EventContextCreated}},
		{func() { d.click(".segmented button[data-state=pending]") }, "state=pending", DeliveryFilter{Account: "globex", EventType: contextsvc.EventContextCreated, State: DeliveryPending}},
		{func() { d.route("#/deliveries"); choose("webhook", dm.search) }, "webhook=" + dm.search, DeliveryFilter{WebhookID: dm.search}},
	} {
		want := len(dm.ts.Deliveries(step.f))
		if want == 0 {
			t.Fatalf("the demo has no delivery for %+v", step.f)
		}
		step.act()
		d.wait(fmt.Sprintf(`location.hash.includes(%q) && document.querySelectorAll('table.list.deliveries tbody tr').length === %d`, step.hash, want))
	}

	// Keys: masked, never whole, anywhere on the page.
	d.route("#/accounts")
	text := d.wait(`document.querySelector('main').textContent.includes('globex') && document.body.textContent`)
	for _, tok := range dm.tokens {
		if strings.Contains(text, tok) {
			t.Errorf("the page shows a whole token")
		}
		if !strings.Contains(text, MaskToken(tok)) {
			t.Errorf("the page does not show %s", MaskToken(tok))
		}
	}
	browsertest.NoErrors(t, d.tab)
}

// TestDashboardRedeliver: the redeliver button makes a new attempt that
// the receiver sees, and the page shows it, live, without reloading.
func TestDashboardRedeliver(t *testing.T) {
	skipShortBrowser(t)
	t.Parallel()
	rc := newReceiver(t, answerStatus(500, `{"error":"database is down"}`))
	ts, _ := newFakeTestServer(t, WithRetrySchedule([]time.Duration{}))
	registerHook(t, ts, rc.URL+"/hook", "s", contextsvc.EventContextCreated)
	create(t, ts, `{"name":"Doc"}`)
	if n := rc.waitHit(t); n != "1" {
		t.Fatalf("attempt %s", n)
	}
	idle(t, ts)
	dl := ts.Deliveries(DeliveryFilter{})[0]
	if dl.State != DeliveryFailed {
		t.Fatalf("state %s", dl.State)
	}
	d := openDashboard(t, ts, "#/deliveries?id="+dl.ID)
	d.wait(`document.querySelectorAll('.attempts .attempt').length === 1 && document.querySelector('.detail .badge.state-failed')`)
	evalAs[chromedp.Void](d, `window.marker = 'no reload'`)
	rc.setAnswer(answerStatus(200, `{"ok":true}`))
	d.click("#redeliver")
	if n := rc.waitHit(t); n != "2" {
		t.Errorf("the receiver saw attempt %s, want 2", n)
	}
	d.wait(`document.querySelectorAll('.attempts .attempt').length === 2 && document.querySelector('.detail .badge.state-succeeded') &&
		document.querySelector('table.list tbody tr .badge.state-succeeded')`)
	if m := evalAs[string](d, `window.marker`); m != "no reload" {
		t.Error("the page reloaded")
	}
	browsertest.NoErrors(t, d.tab)
}

// TestDashboardClock: the clock's button moves the fake clock to the next
// due attempt; the receiver gets it, and the page shows the new time, the
// new attempt and how many attempts the advance ran. A day's advance runs
// each retry due within it, at its time.
func TestDashboardClock(t *testing.T) {
	skipShortBrowser(t)
	t.Parallel()
	rc := newReceiver(t, answerStatus(502, `bad gateway`))
	ts, clock := newFakeTestServer(t)
	registerHook(t, ts, rc.URL+"/hook", "s", contextsvc.EventContextCreated)
	create(t, ts, `{"name":"Doc"}`)
	rc.waitHit(t)
	idle(t, ts)
	d := openDashboard(t, ts, "#/deliveries")
	d.wait(`document.querySelector('#clock-next').textContent.includes('12:01:00') && !document.querySelector('#clock-to-next').disabled`)
	d.click("#clock-to-next")
	if n := rc.waitHit(t); n != "2" {
		t.Errorf("the receiver saw attempt %s, want 2", n)
	}
	if now := clock.Now(); !now.Equal(dlvT0.Add(time.Minute)) {
		t.Errorf("the clock is at %v, want %v", now, dlvT0.Add(time.Minute))
	}
	d.wait(`document.querySelector('#clock-now').textContent.includes('12:01:00') &&
		document.querySelector('#clock-next').textContent.includes('12:06:00') &&
		document.querySelector('table.list tbody tr td.num').textContent === '2'`)
	d.wait(`[...document.querySelectorAll('.toast')].some(t => t.textContent === 'Clock advanced to the next due attempt: 1 delivery attempt ran')`)
	// By a duration typed in: past the next retry.
	evalAs[chromedp.Void](d, `document.querySelector('#clock-duration').value = '5m'`)
	d.click("#clock-form button")
	if n := rc.waitHit(t); n != "3" {
		t.Errorf("the receiver saw attempt %s, want 3", n)
	}
	d.wait(`document.querySelector('#clock-now').textContent.includes('12:06:00') && document.querySelector('table.list tbody tr td.num').textContent === '3'`)
	// A day: the retries at 12:36 and 14:36 run, the next is due the day
	// after at 14:36.
	d.click(`[data-advance="24h"]`)
	for _, want := range []string{"4", "5"} {
		if n := rc.waitHit(t); n != want {
			t.Errorf("the receiver saw attempt %s, want %s", n, want)
		}
	}
	d.wait(`[...document.querySelectorAll('.toast')].some(t => t.textContent === 'Clock advanced by 24h: 2 delivery attempts ran')`)
	d.wait(`document.querySelector('#clock-now').textContent.includes('2026-11-22 12:06:00') &&
		document.querySelector('#clock-next').textContent.includes('14:36:00') &&
		document.querySelector('table.list tbody tr td.num').textContent === '5'`)
	dl := ts.Deliveries(DeliveryFilter{})[0]
	if len(dl.Attempts) != 5 {
		t.Fatalf("%d attempts, want 5", len(dl.Attempts))
	}
	for i, at := range []time.Duration{0, time.Minute, 6 * time.Minute, 36 * time.Minute, 2*time.Hour + 36*time.Minute} {
		if a := dl.Attempts[i]; !a.StartedAt.Equal(dlvT0.Add(at)) {
			t.Errorf("attempt %d started at +%v, want +%v", a.Number, a.StartedAt.Sub(dlvT0), at)
		}
	}
	browsertest.NoErrors(t, d.tab)
}

// TestDashboardTimesBeforeTheClock: a list drawn before the page knows the
// server's clock (its summary and its stream held back) shows each time
// with its date; once the clock is known, the times of the server's day
// are shown without it, as they are when the clock comes first.
func TestDashboardTimesBeforeTheClock(t *testing.T) {
	skipShortBrowser(t)
	t.Parallel()
	ts, _ := newFakeTestServer(t)
	create(t, ts, `{"name":"Doc"}`)
	var (
		mu       sync.Mutex
		held     []fetch.RequestID
		released bool
	)
	d := newDash(t, ts, func(tab context.Context) {
		paused := chromedp.Events(tab, fetch.RequestPaused)
		go func() {
			for ev, err := range paused {
				if err != nil {
					return
				}
				mu.Lock()
				if !released {
					held = append(held, ev.RequestID)
					mu.Unlock()
					continue
				}
				mu.Unlock()
				_, _ = chromedp.Call(tab, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
			}
		}()
		patterns := []*fetch.RequestPattern{{URLPattern: "*/_mock/summary*"}, {URLPattern: "*/_mock/stream*"}}
		if _, err := chromedp.Call(tab, fetch.Enable, fetch.EnableParams{Patterns: patterns}); err != nil {
			t.Fatal(err)
		}
	})
	d.navigate(ts.HTTP.URL + "/_mock/ui/#/contexts")
	dated, bare := dlvT0.Format("2006-01-02 15:04:05"), dlvT0.Format("15:04:05")
	cell := `document.querySelector('table.list tbody tr span[title^="` + dlvT0.Format("2006-01-02T15:04:05") + `"]').textContent`
	d.wait(cell + ` === '` + dated + `'`)
	mu.Lock()
	released = true
	for _, id := range held {
		if _, err := chromedp.Call(d.tab, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: id}); err != nil {
			t.Error(err)
		}
	}
	mu.Unlock()
	d.wait(cell + ` === '` + bare + `'`)
}

// TestDashboardLive: events, deliveries and counts appear as they happen,
// without a reload; reset (confirmed in the page) empties the page.
func TestDashboardLive(t *testing.T) {
	skipShortBrowser(t)
	t.Parallel()
	rc := newReceiver(t, answerStatus(200, `ok`))
	ts, _ := newFakeTestServer(t)
	d := openDashboard(t, ts, "#/events")
	d.wait(`document.querySelector('main .empty')`)
	evalAs[chromedp.Void](d, `window.marker = 'no reload'`)
	registerHook(t, ts, rc.URL, "s", contextsvc.EventContextCreated)
	c := create(t, ts, `{"name":"Live one"}`)
	d.wait(`document.querySelectorAll('table.list.events tbody tr').length === 2 && document.querySelector('main').textContent.includes('Live one')`)
	d.wait(`document.querySelector('#count-events').textContent === '2' && document.querySelector('#count-webhooks').textContent === '1'`)
	rc.waitHit(t)
	d.route("#/deliveries")
	d.wait(`document.querySelector('table.list.deliveries tbody tr .badge.state-succeeded')`)
	do(t, ts, call{method: "DELETE", path: "/v1/contexts/" + c.ID})
	create(t, ts, `{"name":"Live two"}`)
	d.wait(`document.querySelectorAll('table.list.deliveries tbody tr').length === 2`)
	if m := evalAs[string](d, `window.marker`); m != "no reload" {
		t.Error("the page reloaded")
	}
	// Reset asks first, in the page.
	d.click("#reset")
	d.wait(`document.querySelector('dialog.confirm[open]')`)
	d.click("#confirm-ok")
	d.wait(`document.querySelector('main .empty') && document.querySelector('#count-deliveries').textContent === '0'`)
	if n := len(ts.Events()); n != 0 {
		t.Errorf("%d events after the reset", n)
	}

	// Paged: 60 events are a page of 50, newest first, and one of 10.
	for i := range 60 {
		if _, err := ts.EmitEvent(t.Context(), "", contextsvc.EventTeamMemberAdded, json.RawMessage(fmt.Sprintf(`{"teamId":"team_1","userId":"user_%d","role":"editor"}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	d.route("#/events")
	d.wait(`document.querySelectorAll('table.list.events tbody tr').length === 50 && !document.querySelector('.page-next').disabled &&
		document.querySelector('table.list.events tbody tr').textContent.includes('user_59')`)
	d.click(".page-next")
	d.wait(`document.querySelectorAll('table.list.events tbody tr').length === 10 && document.querySelector('.page-next').disabled &&
		document.querySelector('.page-no').textContent === 'page 2' && document.querySelector('table.list.events tbody').textContent.includes('user_0')`)
	d.click(".page-prev")
	d.wait(`document.querySelectorAll('table.list.events tbody tr').length === 50 && document.querySelector('.page-no').textContent === 'page 1'`)
	browsertest.NoErrors(t, d.tab)
}

// TestDashboardActions: the page's actions change the server as the admin
// API does (they are its calls): a webhook disabled, enabled and deleted,
// a context published, an event emitted, faults added and cleared.
func TestDashboardActions(t *testing.T) {
	skipShortBrowser(t)
	t.Parallel()
	ts, _ := newFakeTestServer(t)
	hook := registerHook(t, ts, "https://hooks.example.com/in", "s", contextsvc.EventContextCreated)
	c := create(t, ts, `{"name":"Doc"}`)
	d := openDashboard(t, ts, "#/webhooks?id="+hook)

	d.wait(`document.querySelector('#webhook-toggle').textContent === 'Disable'`)
	d.click("#webhook-toggle")
	d.wait(`document.querySelector('#webhook-toggle').textContent === 'Enable'`)
	if w, _ := ts.Webhook(hook); w.Active {
		t.Error("disabled in the page, the webhook is still active")
	}
	d.click("#webhook-toggle")
	d.wait(`document.querySelector('#webhook-toggle').textContent === 'Disable'`)
	d.click("#webhook-delete")
	d.wait(`document.querySelector('dialog.confirm[open]')`)
	d.click("#confirm-ok")
	// Deleted, the webhook leaves the list and the page closes its detail.
	d.wait(`document.querySelector('main .empty') && location.hash === '#/webhooks'`)
	if _, ok := ts.Webhook(hook); ok {
		t.Error("deleted in the page, the webhook is still there")
	}

	d.route("#/contexts?id=" + c.ID)
	d.click("#publish")
	d.wait(`[...document.querySelectorAll('.toast')].some(t => t.textContent.includes('Published'))`)
	if n := countEvents(ts.Server)[contextsvc.EventContextPublished]; n != 1 {
		t.Errorf("%d context.published events", n)
	}

	d.route("#/events?emit=1")
	d.wait(`document.querySelector('#emit-data')`)
	evalAs[chromedp.Void](d, `document.querySelector('#emit-type').value = 'team.member.removed';
		document.querySelector('#emit-data').value = '{"teamId":"team_1","userId":"user_2","role":"viewer"}'`)
	d.click(".form button[type=submit]")
	d.wait(`location.hash.startsWith('#/events?id=evt_') && document.querySelector('.detail pre.payload') && document.querySelector('.detail pre.payload').textContent.includes('viewer')`)
	if n := countEvents(ts.Server)[contextsvc.EventTeamMemberRemoved]; n != 1 {
		t.Errorf("%d team.member.removed events", n)
	}

	d.route("#/faults")
	d.wait(`document.querySelector('.grid-form')`)
	evalAs[chromedp.Void](d, `document.querySelector('input[name=path]').value = '/v1/contexts/*';
		document.querySelector('input[name=status]').value = '503'; document.querySelector('input[name=times]').value = '2'`)
	d.click(".grid-form button[type=submit]")
	d.wait(`document.querySelectorAll('table.list.faults tbody tr').length === 1`)
	if diff := fmt.Sprint(ts.Faults()); !strings.Contains(diff, "/v1/contexts/*") || len(ts.Faults()) != 1 || ts.Faults()[0].Times != 2 {
		t.Errorf("faults %+v", ts.Faults())
	}
	d.click(".grid-form button.danger")
	d.wait(`document.querySelectorAll('table.list.faults tbody tr').length === 0`)
	if n := len(ts.Faults()); n != 0 {
		t.Errorf("%d faults after clearing", n)
	}
	browsertest.NoErrors(t, d.tab)
}

// TestDashboardEscapes: what users control (a context's name, content and
// tags, a receiver's answer, a webhook's url, event data, a fault's path)
// shows as text: no dialog opens, no element is made from it, and the
// text is there to read.
func TestDashboardEscapes(t *testing.T) {
	skipShortBrowser(t)
	t.Parallel()
	const name = `<img src=x onerror=alert(1)>`
	rc := newReceiver(t, answerStatus(500, `<script>alert(2)</script><img src=x onerror=alert(3)>`))
	ts, _ := newFakeTestServer(t, WithRetrySchedule([]time.Duration{}))
	hookURL := rc.URL + `/h?x=<svg/onload=alert(4)>`
	hook := registerHook(t, ts, hookURL, "s", contextsvc.EventContextCreated, contextsvc.EventTeamMemberAdded)
	c := create(t, ts, mustJSON(map[string]any{"name": name, "content": "<script>alert(5)</script>\n\n# <img src=x onerror=alert(6)>\n", "tags": []string{"<b onmouseover=alert(7)>t</b>"}}))
	apiCall(t, ts, "", "PUT", "/v1/contexts/"+c.ID, `{"content":"<iframe src=javascript:alert(8)>"}`)
	rc.waitHit(t)
	ev, err := ts.EmitEvent(context.Background(), "", contextsvc.EventTeamMemberAdded, json.RawMessage(`{"teamId":"<img src=x onerror=alert(9)>","userId":"u","role":"<script>alert(10)</script>"}`))
	if err != nil {
		t.Fatal(err)
	}
	rc.waitHit(t)
	idle(t, ts)
	if err := ts.AddFault(Fault{Path: "/v1/<svg/onload=alert(11)>*", Status: 500}); err != nil {
		t.Fatal(err)
	}
	dl := ts.Deliveries(DeliveryFilter{EventID: ev.ID})[0]

	d := openDashboard(t, ts, "#/contexts")
	noDialogs(t, d.tab)
	d.wait(fmt.Sprintf(`[...document.querySelectorAll('table.list td')].some(td => td.textContent === %q)`, name))
	for _, step := range []struct{ fragment, check string }{
		{"#/contexts?id=" + c.ID, fmt.Sprintf(`document.querySelector('.context-name').textContent === %q &&
			document.querySelector('pre.content').textContent.includes('<iframe src=javascript:alert(8)>') &&
			document.querySelector('.diff') && document.querySelector('.diff').textContent.includes('<script>alert(5)</script>') &&
			document.querySelector('.detail').textContent.includes('<b onmouseover=alert(7)>t</b>')`, name)},
		{"#/deliveries?id=" + dl.ID, `document.querySelector('pre.answer') && document.querySelector('pre.answer').textContent === '<script>alert(2)</script><img src=x onerror=alert(3)>' &&
			document.querySelector('.detail').textContent.includes('<svg/onload=alert(4)>') &&
			document.querySelector('pre.payload').textContent.includes('<img src=x onerror=alert(9)>')`},
		{"#/events?id=" + ev.ID, `document.querySelector('pre.payload') && document.querySelector('pre.payload').textContent.includes('<script>alert(10)</script>')`},
		{"#/webhooks?id=" + hook, `document.querySelector('.detail') && document.querySelector('.detail').textContent.includes('<svg/onload=alert(4)>')`},
		{"#/faults", `document.querySelector('table.list.faults') && document.querySelector('table.list.faults').textContent.includes('/v1/<svg/onload=alert(11)>*')`},
	} {
		d.route(step.fragment)
		d.wait(step.check)
		if n := evalAs[int](d, `document.querySelectorAll('main img, main script, main iframe, main svg, main b').length`); n != 0 {
			t.Errorf("%s: the page made %d elements from user strings", step.fragment, n)
		}
	}
	browsertest.NoErrors(t, d.tab)
	// The second wall: the page's policy (Trusted Types) makes the browser
	// refuse a string as HTML, were a script of the page ever to try (each
	// refusal is a console error, so after the check above).
	for _, sink := range []string{`document.body.insertAdjacentHTML('beforeend', '<b>x</b>')`, `document.querySelector('main').innerHTML = '<b>x</b>'`} {
		got := evalAs[string](d, `(() => { try { `+sink+`; return 'parsed'; } catch (e) { return e.name; } })()`)
		if got != "TypeError" {
			t.Errorf("%s: %s, want a TypeError (Trusted Types)", sink, got)
		}
	}
}

// TestDashboardScreenshot writes the screenshot in docs/dashboard.md of the demo's
// dashboard, a failing delivery open, when DASHBOARD_SCREENSHOT names the
// file:
//
//	DASHBOARD_SCREENSHOT=$PWD/docs/dashboard.png go test ./mockserver -run TestDashboardScreenshot
func TestDashboardScreenshot(t *testing.T) {
	path := os.Getenv(screenshotEnv)
	if path == "" {
		t.Skip(screenshotEnv + " is not set")
	}
	skipShortBrowser(t)
	dm := newDemo(t)
	d := openDashboard(t, dm.ts, "#/deliveries?id="+dm.failing)
	d.wait(`document.querySelectorAll('.attempts .attempt').length === 3 && document.querySelector('#live').textContent === 'live' && document.querySelector('pre.payload')`)
	// The toasts and the hover of the last click are not part of it.
	if err := chromedp.Do(d.ctx, browsertest.Screenshot(path)); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
	browsertest.NoErrors(t, d.tab)
}

// TestDashboardChoosersListEveryPage: the account and webhook choosers list
// past the admin API's page of 100, up to their limit of 1,000, and then
// say that more are left out; an account chosen past the limit still
// shows as chosen, and choosing an account lists all of its webhooks.
func TestDashboardChoosersListEveryPage(t *testing.T) {
	skipShortBrowser(t)
	t.Parallel()
	const (
		accounts    = 1001 // one past the choosers' limit
		hookOwners  = 11   // accounts with webhooks, Unlimited so none is paced
		hooksPerAcc = 91   // 11 × 91 = 1,001 webhooks, one past the limit
	)
	opts := make([]Option, 0, accounts)
	for i := range accounts {
		k := Key{Token: fmt.Sprintf("sk_test_chooser_%04d", i), Account: fmt.Sprintf("acct%04d", i)}
		if i < hookOwners {
			k.Plan = PlanUnlimited
		}
		opts = append(opts, WithKey(k))
	}
	ts := NewTestServer(t, opts...)
	for i := range hookOwners {
		for j := range hooksPerAcc {
			body := fmt.Sprintf(`{"url":"https://hooks.example.test/acct%04d/%02d","events":["context.created"],"secret":"whsec_chooser"}`, i, j)
			apiCall(t, ts, fmt.Sprintf("sk_test_chooser_%04d", i), "POST", "/v1/webhooks", body)
		}
	}
	// options lists a chooser's options as "value|text|disabled" lines once
	// its list has arrived (it ends with the disabled note, or has n).
	options := func(d *dash, name string, n int) []string {
		t.Helper()
		raw := d.wait(fmt.Sprintf(`(() => {
			const opts = [...document.querySelectorAll('.filters select[name=%q] option')];
			const done = opts.length >= %d || opts.some(o => o.disabled);
			return done && JSON.stringify(opts.map(o => o.value + '|' + o.textContent + '|' + o.disabled));
		})()`, name, n))
		var got []string
		if err := json.Unmarshal([]byte(raw), &got); err != nil {
			t.Fatalf("%s options: %v: %s", name, err, raw)
		}
		return got
	}

	d := openDashboard(t, ts, "#/deliveries")
	tests := []struct {
		route                  string
		chooser                string
		wantLen                int // "all", the items, the note if any
		wantFirst, wantLast    string
		wantNote, wantSelected string
	}{
		{"#/deliveries", "account", 1 + 1000 + 1, "acct0000", "acct0999", "only the first 1,000 accounts are listed", ""},
		{"#/deliveries", "webhook", 1 + 1000 + 1, "/acct0000/00 · hooks.example.test", "/acct0010/89 · hooks.example.test",
			"only the first 1,000 webhooks are listed: choose an account to see all of its own", ""},
		{"#/deliveries?account=acct0003", "webhook", 1 + hooksPerAcc, "/acct0003/00 · hooks.example.test", "/acct0003/90 · hooks.example.test", "", ""},
		{"#/deliveries?account=acct1000", "account", 1 + 1 + 1000 + 1, "acct1000", "acct0999", "only the first 1,000 accounts are listed", "acct1000"},
	}
	for _, tc := range tests {
		d.route(tc.route)
		d.wait(fmt.Sprintf(`location.hash === %q && document.body.dataset.ready === 'true'`, tc.route))
		got := options(d, tc.chooser, tc.wantLen)
		if len(got) != tc.wantLen {
			t.Errorf("%s, %s chooser: %d options, want %d: first %q, last %q", tc.route, tc.chooser, len(got), tc.wantLen, got[:min(3, len(got))], got[max(0, len(got)-3):])
			continue
		}
		if got[0] != "|all|false" {
			t.Errorf("%s, %s chooser: first option %q, want all", tc.route, tc.chooser, got[0])
		}
		items := got[1:]
		if tc.wantNote != "" {
			if note := items[len(items)-1]; note != "|"+tc.wantNote+"|true" {
				t.Errorf("%s, %s chooser: last option %q, want the disabled note %q", tc.route, tc.chooser, note, tc.wantNote)
			}
			items = items[:len(items)-1]
		}
		text := func(o string) string { return strings.Split(o, "|")[1] }
		if first, last := text(items[0]), text(items[len(items)-1]); first != tc.wantFirst || last != tc.wantLast {
			t.Errorf("%s, %s chooser: items %q to %q, want %q to %q", tc.route, tc.chooser, first, last, tc.wantFirst, tc.wantLast)
		}
		if tc.wantSelected != "" {
			if sel := evalAs[string](d, fmt.Sprintf(`document.querySelector('.filters select[name=%q]').value`, tc.chooser)); sel != tc.wantSelected {
				t.Errorf("%s, %s chooser: %q chosen, want %q", tc.route, tc.chooser, sel, tc.wantSelected)
			}
		}
	}
}

// TestDashboardSaysWhatHappened: a list's cell shows the end of a
// transport error, what happened ("connection refused"), with the whole
// error in its title and in the delivery's detail; a route that names no
// view says so (and links what it meant) instead of showing another; and
// every list's pager has the same words.
func TestDashboardSaysWhatHappened(t *testing.T) {
	skipShortBrowser(t)
	t.Parallel()
	ts, _ := newFakeTestServer(t, WithRetrySchedule([]time.Duration{}))
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL + "/down"
	dead.Close() // connection refused from now on
	registerHook(t, ts, deadURL, "s", contextsvc.EventContextCreated)
	c := create(t, ts, `{"name":"Doc"}`)
	idle(t, ts)
	dl := ts.Deliveries(DeliveryFilter{})[0]
	full := dl.Attempts[0].Error
	if !strings.HasPrefix(full, `Post "`+deadURL+`": dial tcp`) || !strings.HasSuffix(full, "connection refused") {
		t.Fatalf("the attempt's error %q", full)
	}

	d := openDashboard(t, ts, "#/deliveries")
	cell := d.wait(`(() => { const e = document.querySelector('table.list.deliveries tbody tr .error-text'); return e && JSON.stringify([e.textContent, e.title]); })()`)
	if want := mustJSON([]string{"connection refused", full}); cell != want {
		t.Errorf("the list's cell shows %s, want %s", cell, want)
	}
	d.route("#/deliveries?id=" + dl.ID)
	if got := d.wait(`document.querySelector('.attempts .error-text') && document.querySelector('.attempts .error-text').textContent`); got != full {
		t.Errorf("the detail shows %q, want the whole error %q", got, full)
	}

	for _, tc := range []struct{ hash, meant string }{
		{"#/contexts/" + c.ID, "#/contexts?id=" + c.ID},
		{"#/nope", ""},
		{"#/deliveries/x/y", ""},
	} {
		d.route(tc.hash)
		d.wait(`document.querySelector('main .no-view') !== null && !document.querySelector('main table.list')`)
		text := evalAs[string](d, `document.querySelector('main').textContent`)
		if !strings.Contains(text, "No such view") || !strings.Contains(text, tc.hash) {
			t.Errorf("%s: the page says %q", tc.hash, text)
		}
		meant := evalAs[string](d, `(() => { const a = document.querySelector('.no-view p a.mono'); return a ? a.getAttribute('href') : ''; })()`)
		if meant != tc.meant {
			t.Errorf("%s: links %q as what it meant, want %q", tc.hash, meant, tc.meant)
		}
	}
	d.click(".no-view a[href='#/contexts']")
	d.wait(`location.hash === '#/contexts' && document.querySelector('table.list.contexts tbody tr')`)

	// Newest-first lists and oldest-first ones: the same words.
	for _, view := range []string{"#/deliveries", "#/events", "#/contexts", "#/webhooks", "#/accounts", "#/faults"} {
		d.route(view)
		got := d.wait(fmt.Sprintf(`location.hash === %q && document.querySelector('.page-prev') && document.querySelector('.pager').textContent`, view))
		if got != "‹ Previouspage 1Next ›" {
			t.Errorf("%s: the pager says %q", view, got)
		}
	}
	browsertest.NoErrors(t, d.tab)
}
