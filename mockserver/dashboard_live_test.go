package mockserver

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/browsertest"
)

// The dashboard's live updates across what a day brings: the mock
// restarted under an open page, a stream refused for a while, a tab in
// the background.

// frontServer serves whichever Server is current on one address, as a
// mock restarted on the same port does, and tells refused of each stream
// it answered with a 503.
type frontServer struct {
	*httptest.Server
	current atomic.Pointer[Server]
	refused chan struct{}
}

// statusWriter remembers the status of an answer.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func newFrontServer(t *testing.T, first *TestServer, others ...*TestServer) *frontServer {
	f := &frontServer{refused: make(chan struct{}, 16)}
	f.current.Store(first.Server)
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		f.current.Load().ServeHTTP(sw, r)
		if r.URL.Path == "/_mock/stream" && sw.status == http.StatusServiceUnavailable {
			select {
			case f.refused <- struct{}{}:
			default:
			}
		}
	}))
	t.Cleanup(func() {
		first.CloseStreams()
		for _, o := range others {
			o.CloseStreams()
		}
		f.Close()
	})
	return f
}

// TestDashboardReconnects: the page follows the mock again after its
// stream was refused (a 503: the mock shutting down, or too many streams
// open), after which a browser's EventSource gives up for good; and after
// the mock restarted on the same port. Each time it shows what the mock
// now holds without a reload.
func TestDashboardReconnects(t *testing.T) {
	skipShortBrowser(t)
	t.Parallel()
	t.Run("refused", func(t *testing.T) {
		t.Parallel()
		a, b := NewTestServer(t), NewTestServer(t)
		create(t, b, `{"name":"Only on the second mock"}`)
		front := newFrontServer(t, a, b)
		d := openDashboard(t, &TestServer{Server: a.Server, HTTP: front.Server}, "#/contexts")
		d.wait(`document.querySelector('#live').textContent === 'live'`)
		evalAs[any](d, `window.marker = 'no reload'`)
		// The mock shuts down: its stream ends, and the browser's
		// reconnection is refused.
		a.CloseStreams()
		<-front.refused
		front.current.Store(b.Server)
		d.wait(`document.querySelector('#live').textContent === 'live' && document.querySelector('main').textContent.includes('Only on the second mock')`)
		if m := evalAs[string](d, `window.marker`); m != "no reload" {
			t.Error("the page reloaded")
		}
		onlyStreamErrors(t, d)
	})
	t.Run("restarted", func(t *testing.T) {
		t.Parallel()
		a, b := NewTestServer(t), NewTestServer(t)
		create(t, b, `{"name":"Only after the restart"}`)
		// The mock on a port of its own, stopped and started again on it.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		first := httptest.NewUnstartedServer(a)
		first.Listener.Close()
		first.Listener = ln
		first.Start()
		t.Cleanup(func() { a.CloseStreams(); first.Close() })
		d := openDashboard(t, &TestServer{Server: a.Server, HTTP: first}, "#/contexts")
		d.wait(`document.querySelector('#live').textContent === 'live'`)
		a.CloseStreams()
		first.Close()
		d.wait(`document.querySelector('#live').textContent !== 'live'`)
		ln2, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		second := httptest.NewUnstartedServer(b)
		second.Listener.Close()
		second.Listener = ln2
		second.Start()
		t.Cleanup(func() { b.CloseStreams(); second.Close() })
		d.wait(`document.querySelector('#live').textContent === 'live' && document.querySelector('main').textContent.includes('Only after the restart')`)
		// The browser asks for the page's icon when it likes, after the
		// load: on a busy machine that may be while the mock is stopped.
		onlyStreamErrors(t, d, "/_mock/ui/favicon.svg")
	})
}

// onlyStreamErrors fails the test for each console error of the tab but
// the failed loads that the test caused on purpose (a 503, a refused
// connection) of the stream and of the paths given: no exception, no
// other failed request.
func onlyStreamErrors(t *testing.T, d *dash, alsoRefused ...string) {
	t.Helper()
	msgs, err := browsertest.Messages(d.tab)
	if err != nil {
		t.Error(err)
	}
	for _, m := range msgs {
		if !browsertest.IsError(m) || strings.Contains(m.URL, "/_mock/stream") {
			continue
		}
		if slices.ContainsFunc(alsoRefused, func(p string) bool { return strings.HasSuffix(m.URL, p) }) && strings.Contains(m.Text, "ERR_CONNECTION_REFUSED") {
			continue
		}
		t.Errorf("console %s", browsertest.Describe(m))
	}
}

// setHidden makes the tab hidden or shown, as switching tabs does (a
// headless tab is always shown otherwise).
func (d *dash) setHidden(hidden bool) {
	d.t.Helper()
	state := "visible"
	if hidden {
		state = "hidden"
	}
	evalAs[any](d, fmt.Sprintf(`Object.defineProperty(document, 'hidden', {value: %v, configurable: true});
		Object.defineProperty(document, 'visibilityState', {value: %q, configurable: true});
		document.dispatchEvent(new Event('visibilitychange'))`, hidden, state))
}

// TestDashboardHiddenTab: a tab in the background gives its stream back
// (browsers allow an origin six connections over HTTP/1.1, every tab
// together, and six open dashboards would leave none for requests); shown
// again, it follows the mock again and shows what happened meanwhile.
func TestDashboardHiddenTab(t *testing.T) {
	skipShortBrowser(t)
	t.Parallel()
	ts, _ := newFakeTestServer(t)
	d := openDashboard(t, ts, "#/events")
	d.wait(`document.querySelector('#live').textContent === 'live'`)
	eventually(t, "one stream open", func() bool { return ts.svc.Changes.Subscribers() == 1 })
	d.setHidden(true)
	eventually(t, "the hidden tab's stream closed", func() bool { return ts.svc.Changes.Subscribers() == 0 })
	create(t, ts, `{"name":"Made while the tab was hidden"}`)
	d.setHidden(false)
	d.wait(`document.querySelector('#live').textContent === 'live' && document.querySelector('main').textContent.includes('Made while the tab was hidden')`)
	if n := ts.svc.Changes.Subscribers(); n != 1 {
		t.Errorf("%d streams open once the tab is shown", n)
	}
	browsertest.NoErrors(t, d.tab)
}
