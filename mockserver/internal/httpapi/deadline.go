package httpapi

import (
	"io"
	"net/http"
	"time"
)

// ArmBodyDeadline gives the client d from now to send r's body, if it has
// one: past it a read of the body fails, and the server answers and
// closes the connection instead of waiting for ever (see DeadlineBody).
// The server arms it as a request comes in, and again after an injected
// latency, when it starts reading.
func ArmBodyDeadline(w http.ResponseWriter, r *http.Request, d time.Duration) {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
}

// DeadlineBody lifts the body's read deadline once the body has been read
// to its end: net/http then starts a background read of the connection,
// and a deadline passing under it would cancel the request's context while
// the handler still runs (a long fault latency, a large export).
type DeadlineBody struct {
	io.ReadCloser
	// W is the request's writer, whose connection holds the deadline.
	W      http.ResponseWriter
	lifted bool
}

func (b *DeadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.lifted {
		b.lifted = true
		_ = http.NewResponseController(b.W).SetReadDeadline(time.Time{})
	}
	return n, err
}
