package browsertest

import (
	"bytes"
	"context"
	"fmt"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// pageServer serves each page of pages at /<name> as an HTML document,
// and 404 for anything else (a missing image). The pages link an empty
// icon: without one the browser asks for /favicon.ico after the load, and
// its 404 is a console error that may come before or after a check.
func pageServer(t testing.TB, pages map[string]string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	for name, body := range pages {
		mux.HandleFunc("GET /"+name, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!doctype html><html><head><title>%s</title><link rel="icon" href="data:,"></head><body>%s</body></html>`, name, body)
		})
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// skipShort skips t under -short, which keeps to one browser and the
// harness's core tests (a click, the console, live events): each other
// test opens a tab of its own, about half a second on a busy 2-core
// machine.
func skipShort(t *testing.T) {
	if testing.Short() {
		t.Skip("opens a tab of its own (about half a second); -short runs the core tests only")
	}
}

// timeout bounds one test's waits (see Bounded), so a page that never
// does what a test waits for fails the test instead of hanging the binary.
func timeout(t *testing.T, ctx context.Context) context.Context { return Bounded(t, ctx) }

// TestClickChangesTheDOM: a page loads, and a click on its button changes
// the document, each click again.
func TestClickChangesTheDOM(t *testing.T) {
	t.Parallel()
	srv := pageServer(t, map[string]string{"counter": `
		<button id="b">click</button><p id="out">none</p>
		<script>
			let n = 0;
			document.getElementById('b').onclick = () => {
				document.getElementById('out').textContent = 'clicked ' + (++n);
			};
		</script>`})
	ctx := New(t)
	tctx := timeout(t, ctx)
	if err := chromedp.Do(tctx, chromedp.Navigate(srv.URL+"/counter")); err != nil {
		t.Fatal(err)
	}
	title, err := chromedp.Run(tctx, chromedp.Title())
	if err != nil || title != "counter" {
		t.Fatalf("title %q, %v; want counter", title, err)
	}
	for _, want := range []string{"none", "clicked 1", "clicked 2"} {
		if want != "none" {
			if err := chromedp.Do(tctx, chromedp.Click(chromedp.ID("b"))); err != nil {
				t.Fatal(err)
			}
		}
		got, err := chromedp.Run(tctx, chromedp.Text(chromedp.ID("out")))
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("#out says %q, want %q", got, want)
		}
	}
	NoErrors(t, ctx)
}

// errorRecorder is a testing.TB that records Error and Errorf instead of
// failing, to test NoErrors.
type errorRecorder struct {
	testing.TB
	errors []string
}

func (r *errorRecorder) Helper()                   {}
func (r *errorRecorder) Error(args ...any)         { r.errors = append(r.errors, fmt.Sprint(args...)) }
func (r *errorRecorder) Errorf(f string, a ...any) { r.errors = append(r.errors, fmt.Sprintf(f, a...)) }

// TestConsole: every kind of console message reaches Messages, with its
// type, text and place, including an error a click causes just before the
// check; only errors, failed assertions and exceptions are errors. The
// cases share one tab (a tab costs more than a page load), each looking
// at the messages its page added.
func TestConsole(t *testing.T) {
	t.Parallel()
	type msg struct{ Type, Text string }
	tests := []struct {
		name  string
		body  string
		click bool  // click #b after the load
		want  []msg // every message the page writes, in order
	}{
		{name: "clean", body: `<p>fine</p>`},
		{
			name: "log-and-warning",
			body: `<script>console.log('hello', 42); console.warn('careful'); console.info({a: 1})</script>`,
			want: []msg{{"log", "hello 42"}, {"warning", "careful"}, {"info", "{a: 1}"}},
		},
		{
			name: "console-error",
			body: `<script>console.error('bad thing %d', 42)</script>`,
			want: []msg{{"error", "bad thing 42"}},
		},
		{
			name:  "console-error-on-click",
			body:  `<button id="b">b</button><script>document.getElementById('b').onclick = () => console.error('clicked wrong')</script>`,
			click: true,
			want:  []msg{{"error", "clicked wrong"}},
		},
		{
			name: "uncaught-exception",
			body: `<script>throw new Error('boom')</script>`,
			want: []msg{{"exception", "Uncaught Error: boom"}},
		},
		{
			name:  "uncaught-exception-on-click",
			body:  `<button id="b">b</button><script>document.getElementById('b').onclick = () => { null.x }</script>`,
			click: true,
			want:  []msg{{"exception", "Uncaught TypeError: Cannot read properties of null (reading 'x')"}},
		},
		{
			name: "unhandled-rejection",
			body: `<script>Promise.reject(new Error('nope'))</script>`,
			want: []msg{{"exception", "Uncaught (in promise) Error: nope"}},
		},
		{
			name: "failed-assert",
			body: `<script>console.assert(1 === 2, 'arithmetic')</script>`,
			want: []msg{{"assert", "arithmetic"}},
		},
		{
			name: "missing-image",
			body: `<img src="/missing.png" alt="">`,
			want: []msg{{"error", "Failed to load resource: the server responded with a status of 404 (Not Found)"}},
		},
	}
	pages := map[string]string{}
	for _, tt := range tests {
		pages[tt.name] = tt.body
	}
	srv := pageServer(t, pages)
	ctx := timeout(t, New(t))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { // in turn: they share the tab
			before, err := Messages(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"+tt.name)); err != nil {
				t.Fatal(err)
			}
			if tt.click {
				if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("b"))); err != nil {
					t.Fatal(err)
				}
			}
			msgs, err := Messages(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var got []msg
			for _, m := range msgs[len(before):] {
				got = append(got, msg{string(m.Type), m.Text})
				wantError := m.Type == "error" || m.Type == "exception" || m.Type == "assert"
				if IsError(m) != wantError {
					t.Errorf("IsError(%s) = %v", Describe(m), !wantError)
				}
				if !strings.Contains(Describe(m), srv.URL) {
					t.Errorf("%s does not say where it comes from", Describe(m))
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("console messages (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNoErrors: NoErrors reports each error of the page, saying where it
// comes from, and nothing for other messages.
func TestNoErrors(t *testing.T) {
	t.Parallel()
	srv := pageServer(t, map[string]string{"errors": `<script>
		console.log('fine'); console.warn('careful');
		console.error('first'); setTimeout(() => { throw new Error('second') })
	</script>`})
	ctx := timeout(t, New(t))
	if err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/errors"),
		// The exception comes a task after the load; wait for the task
		// after it.
		chromedp.Evaluate[chromedp.Void](`new Promise(r => setTimeout(r))`, chromedp.EvalAwaitPromise),
	); err != nil {
		t.Fatal(err)
	}
	rec := &errorRecorder{TB: t}
	NoErrors(rec, ctx)
	want := []string{
		"console error (" + srv.URL + "/errors:3:11): first",
		"console exception (" + srv.URL + "/errors:3:52): Uncaught Error: second",
	}
	if diff := cmp.Diff(want, rec.errors); diff != "" {
		t.Errorf("NoErrors reported (-want +got):\n%s", diff)
	}
}

// TestMessagesNeedsATab: a context that is no tab of this package is an
// error, so a check for "no console error" cannot pass by looking at the
// wrong context.
func TestMessagesNeedsATab(t *testing.T) {
	t.Parallel()
	if _, err := Messages(context.Background()); err == nil {
		t.Error("Messages on a plain context: no error")
	}
	rec := &errorRecorder{TB: t}
	NoErrors(rec, context.Background())
	if len(rec.errors) != 1 {
		t.Errorf("NoErrors on a plain context reported %q, want one error", rec.errors)
	}
}

// TestServerSentEvents: an EventSource in the page receives what the
// server sends, as it is sent, and the page updates in place (no reload).
func TestServerSentEvents(t *testing.T) {
	t.Parallel()
	send := make(chan string)
	connected := make(chan struct{}, 1)
	srv := pageServer(t, map[string]string{"live": `
		<ul id="events"></ul>
		<script>
			new EventSource('/events').onmessage = e => {
				const li = document.createElement('li');
				li.textContent = e.data;
				document.getElementById('events').append(li);
			};
		</script>`})
	srv.Config.Handler.(*http.ServeMux).HandleFunc("GET /events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		connected <- struct{}{}
		for {
			select {
			case <-r.Context().Done(): // the tab closed
				return
			case data := <-send:
				fmt.Fprintf(w, "data: %s\n\n", data)
				w.(http.Flusher).Flush()
			}
		}
	})
	ctx := New(t)
	tctx := timeout(t, ctx)
	if err := chromedp.Do(tctx,
		chromedp.Navigate(srv.URL+"/live"),
		chromedp.Evaluate[chromedp.Void](`window.marker = 'this document'`),
	); err != nil {
		t.Fatal(err)
	}
	select {
	case <-connected:
	case <-tctx.Done():
		t.Fatal("the page never opened its event stream")
	}
	var want []string
	for _, data := range []string{"first", "second <b>not bold</b>", "third"} {
		select {
		case send <- data:
		case <-tctx.Done():
			t.Fatal("the stream handler is gone")
		}
		want = append(want, data)
		// Re-evaluated on every change of the document, not on a timer.
		got, err := chromedp.Run(tctx, chromedp.Poll[[]string](
			fmt.Sprintf(`(() => { const li = [...document.querySelectorAll('#events li')].map(li => li.textContent); return li.length === %d && li })()`, len(want)),
			chromedp.WithPollingMutation()))
		if err != nil {
			t.Fatalf("after sending %q: %v", data, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the page's events (-want +got):\n%s", diff)
		}
	}
	marker, err := chromedp.Run(tctx, chromedp.Evaluate[string](`window.marker`))
	if err != nil || marker != "this document" {
		t.Errorf("window.marker = %q, %v: the page reloaded", marker, err)
	}
	NoErrors(t, ctx)
}

// TestScreenshot: the PNG holds the whole page, beyond the viewport, at
// the window's width: red at the top, blue at the bottom 3000 px down.
func TestScreenshot(t *testing.T) {
	skipShort(t)
	t.Parallel()
	srv := pageServer(t, map[string]string{"tall": `
		<style>body { margin: 0 } div { height: 1500px }</style>
		<div style="background: #f00"></div><div style="background: #00f"></div>`})
	ctx := New(t)
	tctx := timeout(t, ctx)
	path := filepath.Join(t.TempDir(), "page.png")
	if err := chromedp.Do(tctx, chromedp.Navigate(srv.URL+"/tall"), Screenshot(path)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s is no PNG: %v", path, err)
	}
	size := img.Bounds().Size()
	if size.X != 1280 || size.Y != 3000 {
		t.Errorf("the screenshot is %dx%d, want 1280x3000 (the window's width, the page's height)", size.X, size.Y)
	}
	rgba := func(x, y int) color.RGBA {
		r, g, b, a := img.At(x, y).RGBA()
		return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}
	}
	for _, p := range []struct {
		x, y int
		want color.RGBA
	}{
		{10, 10, color.RGBA{255, 0, 0, 255}},
		{size.X - 10, size.Y - 10, color.RGBA{0, 0, 255, 255}},
	} {
		if got := rgba(p.x, p.y); got != p.want {
			t.Errorf("pixel (%d, %d) is %v, want %v", p.x, p.y, got, p.want)
		}
	}
	NoErrors(t, ctx)
}

// TestPageTiming: the Performance API's figures arrive, and in the order
// a load has them.
func TestPageTiming(t *testing.T) {
	skipShort(t)
	t.Parallel()
	srv := pageServer(t, map[string]string{"text": `<h1>Deliveries</h1><p>Nothing failed.</p>`})
	ctx := New(t)
	tctx := timeout(t, ctx)
	if err := chromedp.Do(tctx, chromedp.Navigate(srv.URL+"/text")); err != nil {
		t.Fatal(err)
	}
	tm, err := chromedp.Run(tctx, PageTiming())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", tm)
	if tm.ResponseEnd <= 0 || tm.DOMContentLoaded < tm.ResponseEnd || tm.Load < tm.DOMContentLoaded ||
		tm.FirstPaint <= 0 || tm.FirstContentfulPaint < tm.FirstPaint || tm.FirstContentfulPaint > 20*time.Second {
		t.Errorf("timing %+v: want 0 < responseEnd <= domContentLoaded <= load and 0 < firstPaint <= firstContentfulPaint", tm)
	}
}

// TestHermetic: no host name resolves, so nothing the browser or a page
// tries to fetch leaves this machine (on a machine with internet, too);
// localhost and 127.0.0.1 still work.
func TestHermetic(t *testing.T) {
	skipShort(t)
	t.Parallel()
	srv := pageServer(t, map[string]string{"here": `<p>here</p>`})
	ctx := New(t)
	tctx := timeout(t, ctx)
	for _, url := range []string{"http://www.google.com/", "https://clients2.google.com/service/update2/crx", "http://example.com/"} {
		err := chromedp.Do(tctx, chromedp.Navigate(url))
		if err == nil || !strings.Contains(err.Error(), "ERR_NAME_NOT_RESOLVED") {
			t.Errorf("navigating to %s: %v, want net::ERR_NAME_NOT_RESOLVED", url, err)
		}
	}
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	for _, url := range []string{srv.URL + "/here", "http://localhost:" + port + "/here"} {
		if err := chromedp.Do(tctx, chromedp.Navigate(url)); err != nil {
			t.Errorf("navigating to %s: %v", url, err)
		}
	}
}

// TestTabsAreIsolated: each tab has a browser context of its own, so a
// cookie or a localStorage item one test sets is not there for another.
func TestTabsAreIsolated(t *testing.T) {
	skipShort(t)
	t.Parallel()
	srv := pageServer(t, map[string]string{"store": `<p>store</p>`})
	const read = `document.cookie + '|' + (localStorage.getItem('k') || '')`
	first, second := New(t), New(t)
	for _, ctx := range []context.Context{first, second} {
		if err := chromedp.Do(timeout(t, ctx), chromedp.Navigate(srv.URL+"/store")); err != nil {
			t.Fatal(err)
		}
	}
	if err := chromedp.Do(timeout(t, first), chromedp.Evaluate[chromedp.Void](`document.cookie = 'c=1'; localStorage.setItem('k', 'v')`)); err != nil {
		t.Fatal(err)
	}
	for _, tab := range []struct {
		ctx  context.Context
		want string
	}{{first, "c=1|v"}, {second, "|"}} {
		got, err := chromedp.Run(timeout(t, tab.ctx), chromedp.Evaluate[string](read))
		if err != nil {
			t.Fatal(err)
		}
		if got != tab.want {
			t.Errorf("cookie|localStorage = %q, want %q", got, tab.want)
		}
	}
}
