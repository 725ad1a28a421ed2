package httpapi

import "net/http"

// Tracker is the writer every request of the server is answered through:
// it remembers whether the header was written and with what status, so
// that a panic's handler knows whether it can still answer, and the
// request's log and span say how it was answered.
type Tracker struct {
	http.ResponseWriter
	wrote bool
	// chaos is set when the chaos mode failed the request. A bool beside
	// wrote keeps the Tracker, allocated for every request, at 32 bytes.
	chaos  bool
	status int
}

// WriteHeader writes the header once, remembering its status.
func (t *Tracker) WriteHeader(code int) {
	if !t.wrote {
		t.wrote, t.status = true, code
	}
	t.ResponseWriter.WriteHeader(code)
}

// Write writes the body, a 200 unless a status was written.
func (t *Tracker) Write(b []byte) (int, error) {
	if !t.wrote {
		t.wrote, t.status = true, http.StatusOK
	}
	return t.ResponseWriter.Write(b)
}

// FailedByChaos notes that the chaos mode failed the request (its
// api-error), for the request's log line and span.
func (t *Tracker) FailedByChaos() { t.chaos = true }

// ChaosFailed reports whether the chaos mode failed the request.
func (t *Tracker) ChaosFailed() bool { return t.chaos }

// Wrote reports whether the header was written (or the connection closed
// unanswered).
func (t *Tracker) Wrote() bool { return t.wrote }

// Answered is the status the request was answered with: 200 when the
// handler wrote nothing, 0 when its connection was closed unanswered.
func (t *Tracker) Answered() int {
	if !t.wrote {
		return http.StatusOK
	}
	return t.status
}

// Unanswered notes that the connection was closed without an answer (an
// injected fault that drops it): the log shows status 0.
func (t *Tracker) Unanswered() { t.wrote, t.status = true, 0 }

// Unwrap lets http.ResponseController reach the real writer.
func (t *Tracker) Unwrap() http.ResponseWriter { return t.ResponseWriter }
