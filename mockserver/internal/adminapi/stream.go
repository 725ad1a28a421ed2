package adminapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
)

// StreamKeepAlive is how often an idle stream sends a comment line, so
// that proxies and browsers keep the connection and a closed page is
// noticed (its write fails); Config.KeepAlive changes it.
const StreamKeepAlive = 15 * time.Second

// streamFullRetryAfter is the Retry-After of a stream refused because
// changes.MaxSubscribers are open: the dashboard tries again later by itself.
const streamFullRetryAfter = 30

// streamWriteTimeout bounds each write to a stream: a page that stops
// reading (a frozen tab, a dead connection) ends its stream instead of
// holding a goroutine. Its changes meanwhile are bounded by changes.Buffer.
const streamWriteTimeout = 10 * time.Second

// streamRetryMs is the reconnection delay the stream asks browsers for.
const streamRetryMs = 2000

// stream serves GET /_mock/stream: the server's changes as
// Server-Sent Events, as they happen. Each change is an event "change"
// whose data is a MockChange object; a subscriber that fell more than
// changes.Buffer changes behind gets one event "resync" instead of what it
// missed, and reloads what it shows. The first event, "hello", carries
// the clock, so a page knows the stream is live. Nothing polls: the
// stream waits for changes, and writes a comment every Config.KeepAlive
// when there are none.
func (h *Handler) stream(w http.ResponseWriter, r *http.Request) {
	sub, closed := h.svc.Changes.Subscribe()
	switch {
	case closed:
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusServiceUnavailable, Type: httpapi.TypeUnavailable,
			Message: "the mock server is shutting down: its event streams are closed"})
		return
	case sub == nil:
		w.Header()["Retry-After"] = []string{strconv.Itoa(streamFullRetryAfter)}
		httpapi.WriteError(w, &httpapi.Error{Status: http.StatusServiceUnavailable, Type: httpapi.TypeUnavailable,
			Message: "too many event streams: " + strconv.Itoa(changes.MaxSubscribers) + " dashboards are open on this mock server; close one (a tab in the background closes its own)"})
		return
	}
	defer h.svc.Changes.Unsubscribe(sub)
	hd := w.Header()
	hd["Content-Type"] = []string{"text/event-stream; charset=utf-8"}
	hd["Cache-Control"] = []string{"no-store"}
	hd["X-Content-Type-Options"] = []string{"nosniff"}
	// The stream is for the dashboard, on this origin only.
	hd["Content-Security-Policy"] = []string{"default-src 'none'; frame-ancestors 'none'"}
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)

	var buf []byte
	send := func() bool {
		_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
		if _, err := w.Write(buf); err != nil {
			return false
		}
		buf = buf[:0]
		return rc.Flush() == nil
	}
	hello, _ := json.Marshal(h.clockState())
	buf = append(buf, "retry: "+strconv.Itoa(streamRetryMs)+"\n"...)
	buf = appendStreamEvent(buf, "hello", hello)
	if !send() {
		return
	}
	keepAlive := time.NewTicker(h.c.KeepAlive)
	defer keepAlive.Stop()
	var changes []changes.Change
	for {
		select {
		case <-r.Context().Done():
			return
		case <-sub.Done():
			return
		case <-keepAlive.C:
			buf = append(buf, ": keep-alive\n\n"...)
		case <-sub.Ready():
			var resync bool
			changes, resync = h.svc.Changes.Take(sub, changes[:0])
			if resync {
				buf = appendStreamEvent(buf, "resync", []byte("{}"))
			}
			for _, c := range changes {
				data, _ := json.Marshal(c)
				buf = appendStreamEvent(buf, "change", data)
			}
			clear(changes)
		}
		if !send() {
			return
		}
	}
}

// appendStreamEvent appends one Server-Sent Event: its name and its data,
// JSON on one line (encoding/json escapes every newline).
func appendStreamEvent(b []byte, event string, data []byte) []byte {
	b = append(b, "event: "...)
	b = append(b, event...)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}
