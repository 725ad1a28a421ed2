package v1api

import (
	"net/http"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/faults"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
)

// injectFault applies the first fault matching r: it waits the fault's
// latency, then, in mode instead, writes its status if it has one. It
// returns the fault (the zero Fault when none matched) and reports whether
// the request is done (answered, or canceled while waiting); a fault that
// loses the answer is left to serveLosingAnswer.
func (h *Handler) injectFault(w http.ResponseWriter, r *http.Request) (faults.Fault, bool) {
	f, ok := h.svc.Faults.Take(r)
	if !ok {
		return faults.Fault{}, false
	}
	if f.Latency > 0 {
		// Real time on purpose: the client waits on a real network.
		t := time.NewTimer(f.Latency)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return f, true
		}
		// The body's time-out counts from when the server starts reading
		// it, which is now.
		httpapi.ArmBodyDeadline(w, r, h.readBodyTimeout)
	}
	if f.Status == 0 || faults.LosesAnswer(f) {
		return f, false
	}
	httpapi.WriteError(w, faults.ErrorFor(w.Header(), f))
	return f, true
}

// serveLosingAnswer runs the request through serve with a writer that
// throws its answer away, then loses the answer as f says: FaultAfter
// answers f's status instead, FaultDrop closes the connection unanswered.
func (h *Handler) serveLosingAnswer(w http.ResponseWriter, r *http.Request, f faults.Fault, serve func(http.ResponseWriter)) {
	// The operation's error bodies quote the request id, so its header
	// map starts as a copy of the real one.
	serve(&lostAnswerWriter{header: w.Header().Clone()})
	if f.Mode == faults.After {
		httpapi.WriteError(w, faults.ErrorFor(w.Header(), f))
		return
	}
	if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
		_ = conn.Close()
		if t, ok := w.(*httpapi.Tracker); ok {
			// The request log shows status 0: no answer was sent.
			t.Unanswered()
		}
		return
	}
	// A connection that cannot be taken over (HTTP/2): abort the
	// response, which net/http turns into a reset stream.
	panic(http.ErrAbortHandler)
}

// lostAnswerWriter is the writer of a request whose answer a fault loses.
type lostAnswerWriter struct{ header http.Header }

func (l *lostAnswerWriter) Header() http.Header         { return l.header }
func (l *lostAnswerWriter) Write(b []byte) (int, error) { return len(b), nil }
func (l *lostAnswerWriter) WriteHeader(int)             {}
