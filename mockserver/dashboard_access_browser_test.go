package mockserver

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/browsertest"
)

// The admin routes' guards in a real browser: a page of another site
// gets nothing from them, a link from it opens the dashboard, and with
// credentials the browser asks once and the page, its stream and its
// actions work.

// requestLog is a server's request log (WithRequestLog), to read which
// requests were answered with what.
type requestLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *requestLog) option() []Option {
	return []Option{WithRequestLog(true), WithLogger(slog.New(slog.NewTextHandler(lockedWriter{&l.mu, &l.buf}, nil)))}
}

// statuses returns the status of each logged request for method and
// path, in order.
func (l *requestLog) statuses(method, path string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for line := range strings.SplitSeq(l.buf.String(), "\n") {
		if strings.Contains(line, "method="+method+" ") && strings.Contains(line, "path="+path+" ") {
			_, status, _ := strings.Cut(line, "status=")
			status, _, _ = strings.Cut(status, " ")
			out = append(out, status)
		}
	}
	return out
}

// basicAuth answers the tab's HTTP authentication prompts as a user would:
// with user and pass the first times (every time when times is 0), then
// by canceling the prompt. Every other request goes on untouched. It
// returns how many prompts came so far.
func basicAuth(t *testing.T, tab context.Context, user, pass string, times int) (prompts func() int64) {
	t.Helper()
	var n atomic.Int64
	paused := chromedp.Events(tab, fetch.RequestPaused)
	auth := chromedp.Events(tab, fetch.AuthRequired)
	go func() {
		for ev, err := range paused {
			if err != nil {
				return
			}
			_, _ = chromedp.Call(tab, fetch.ContinueRequest, fetch.ContinueRequestParams{RequestID: ev.RequestID})
		}
	}()
	go func() {
		for ev, err := range auth {
			if err != nil {
				return
			}
			answer := &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseProvideCredentials, Username: user, Password: pass}
			if k := n.Add(1); times > 0 && k > int64(times) {
				answer = &fetch.AuthChallengeResponse{Response: fetch.AuthChallengeResponseResponseCancelAuth}
			}
			_, _ = chromedp.Call(tab, fetch.ContinueWithAuth, fetch.ContinueWithAuthParams{RequestID: ev.RequestID, AuthChallengeResponse: answer})
		}
	}()
	if _, err := chromedp.Call(tab, fetch.Enable, fetch.EnableParams{HandleAuthRequests: new(true)}); err != nil {
		t.Fatal(err)
	}
	return n.Load
}

// countStreamErrors makes every page the tab loads count its
// EventSources' errors in window.streamErrors.
func countStreamErrors(t *testing.T, tab context.Context) {
	t.Helper()
	const counter = `window.streamErrors = 0;
{
  const ES = window.EventSource;
  window.EventSource = class extends ES {
    constructor(...args) { super(...args); this.addEventListener('error', () => window.streamErrors++); }
  };
}`
	if _, err := chromedp.Call(tab, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: counter}); err != nil {
		t.Fatal(err)
	}
}

// TestDashboardRefusesOtherSites: a page on another site that points an
// <img> and fetches at the admin routes (the state, a reset) gets a 403
// for each, and nothing changes; a link on it opens the dashboard, which
// then works, live, from its own origin.
func TestDashboardRefusesOtherSites(t *testing.T) {
	skipShortBrowser(t)
	t.Parallel()
	var log requestLog
	ts, _ := newFakeTestServer(t, log.option()...)
	create(t, ts, `{"name":"Keep me"}`)
	mock := ts.HTTP.URL
	// Another site: localhost is another site than 127.0.0.1 to a browser.
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><link rel="icon" href="data:,"><a id="dash" href="%[1]s/_mock/ui/#/contexts">the dashboard</a>
<script>
const img = new Promise(done => { const i = new Image(); i.onload = i.onerror = done; i.src = '%[1]s/_mock/state'; });
Promise.allSettled([img,
  fetch('%[1]s/_mock/state', {mode: 'no-cors', credentials: 'include'}),
  fetch('%[1]s/_mock/reset', {mode: 'no-cors', method: 'POST'})]).then(() => { document.body.dataset.done = 'true'; });
</script>`, mock)
	}))
	t.Cleanup(evil.Close)
	d := newDash(t, ts, nil)
	d.navigate(strings.Replace(evil.URL, "127.0.0.1", "localhost", 1) + "/")
	d.wait(`document.body.dataset.done === 'true'`)
	if got := log.statuses("GET", "/_mock/state"); strings.Join(got, ",") != "403,403" {
		t.Errorf("GET /_mock/state from another site answered %v, want two 403s", got)
	}
	if got := log.statuses("POST", "/_mock/reset"); strings.Join(got, ",") != "403" {
		t.Errorf("POST /_mock/reset from another site answered %v, want a 403", got)
	}
	if n := len(ts.Snapshot().Contexts); n != 1 {
		t.Errorf("%d contexts after the other site's reset, want 1", n)
	}
	// The link: a navigation from the other site opens the dashboard.
	evalAs[chromedp.Void](d, `document.querySelector('#dash').click()`)
	if err := chromedp.Do(d.ctx, chromedp.WaitVisible(chromedp.CSS(`#live.live-on`))); err != nil {
		t.Fatalf("the dashboard opened from another site's link is not live: %v", err)
	}
	d.wait(`document.body.dataset.ready === 'true' && document.querySelector('main').textContent.includes('Keep me')`)
	if got := log.statuses("GET", "/_mock/ui/"); len(got) != 1 || got[0] != "200" {
		t.Errorf("the link to the dashboard answered %v, want a 200", got)
	}
	// The console's errors are the other site's refused requests, and no
	// more: the dashboard's own requests were all served.
	msgs, err := browsertest.Messages(d.tab)
	if err != nil {
		t.Error(err)
	}
	for _, m := range msgs {
		desc := browsertest.Describe(m)
		refused := strings.Contains(desc, "status of 403") && (strings.Contains(desc, mock+"/_mock/state:") || strings.Contains(desc, mock+"/_mock/reset:"))
		if browsertest.IsError(m) && !refused {
			t.Errorf("console error: %s", desc)
		}
	}
}

// TestDashboardWithCredentials: with admin credentials, the browser asks
// for them on the first request; given, the dashboard loads, its stream
// is live and its actions (disable a webhook, reset) change the server.
func TestDashboardWithCredentials(t *testing.T) {
	skipShortBrowser(t)
	t.Parallel()
	var log requestLog
	ts, _ := newFakeTestServer(t, append(log.option(), withTestAdminAuth("admin:"+testHash("correct horse")))...)
	hook := registerHook(t, ts, "https://hooks.example.com/in", "s", contextsvc.EventContextCreated)
	create(t, ts, `{"name":"Doc"}`)

	var prompts func() int64
	d := newDash(t, ts, func(tab context.Context) {
		prompts = basicAuth(t, tab, "admin", "correct horse", 0)
		countStreamErrors(t, tab)
	})
	d.navigate(ts.HTTP.URL + "/_mock/ui/#/webhooks?id=" + hook)
	d.wait(`document.body.dataset.ready === 'true' && document.querySelector('#live').textContent === 'live'`)
	if n := prompts(); n < 1 {
		t.Errorf("the browser asked for credentials %d times, want at least once", n)
	}
	// The page's stream was never refused: a refusal reaches the page as
	// the EventSource's error (and a new stream a second later). The
	// server's log cannot say it: the browser may first send a request
	// without the credentials and answer the 401 itself (it sends them
	// unasked only under the path it was first asked for, /_mock/ui/),
	// which the page never sees.
	if n := evalAs[int](d, `window.streamErrors`); n != 0 {
		t.Errorf("the page's stream met %d errors before it was live (the stream's requests were answered %v)", n, log.statuses("GET", "/_mock/stream"))
	}
	d.click("#webhook-toggle")
	d.wait(`document.querySelector('#webhook-toggle').textContent === 'Enable'`)
	if w, _ := ts.Webhook(hook); w.Active {
		t.Error("disabled in the page, the webhook is still active")
	}
	// A change made elsewhere reaches the page through its stream.
	create(t, ts, `{"name":"Made in Go"}`)
	d.route("#/contexts")
	d.wait(`document.querySelector('main').textContent.includes('Made in Go')`)
	d.click("#reset")
	d.wait(`document.querySelector('dialog.confirm[open]')`)
	d.click("#confirm-ok")
	d.wait(`document.querySelector('main .empty') && document.querySelector('#count-contexts').textContent === '0'`)
	if n := len(ts.Snapshot().Contexts); n != 0 {
		t.Errorf("%d contexts after the page's reset", n)
	}
	browsertest.NoErrors(t, d.tab)
}

// TestDashboardWrongPassword: a wrong password gets the 401 and no page:
// nothing of the admin API is served, and nothing changes.
func TestDashboardWrongPassword(t *testing.T) {
	skipShortBrowser(t)
	t.Parallel()
	var log requestLog
	ts, _ := newFakeTestServer(t, append(log.option(), withTestAdminAuth("admin:"+testHash("correct horse")))...)
	create(t, ts, `{"name":"Keep me"}`)
	d := newDash(t, ts, func(tab context.Context) { basicAuth(t, tab, "admin", "wrong horse", 2) })
	d.navigate(ts.HTTP.URL + "/_mock/ui/")
	text := d.wait(`document.body.innerText.includes('unauthorized') && document.body.innerText`)
	if !strings.Contains(text, "wrong user name or password") {
		t.Errorf("the page shows %q, want the 401's message", text)
	}
	if ready := evalAs[string](d, `document.body.dataset.ready || ''`); ready != "" {
		t.Error("the dashboard loaded with a wrong password")
	}
	got := log.statuses("GET", "/_mock/ui/")
	if len(got) == 0 {
		t.Error("the page was not asked for")
	}
	for _, status := range got {
		if status != "401" {
			t.Errorf("the page was answered %v, want only 401s", got)
			break
		}
	}
	if n := len(ts.Snapshot().Contexts); n != 1 {
		t.Errorf("%d contexts, want the one kept", n)
	}
}
