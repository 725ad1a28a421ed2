package v1api

import (
	"net/http"
	"strconv"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/keys"
)

// allow takes one token from k's bucket at the server clock's now and sets
// the X-RateLimit-* headers. It writes the 429 and reports false when the
// bucket is empty. Unlimited keys pass without headers.
func (h *Handler) allow(w http.ResponseWriter, k *keys.Key) bool {
	t, ok := k.Take(h.svc.Clock.Now())
	if t.Limit == nil {
		return true
	}
	hdr := w.Header()
	hdr["X-Ratelimit-Limit"] = t.Limit
	hdr["X-Ratelimit-Remaining"] = []string{strconv.Itoa(t.Remaining)}
	hdr["X-Ratelimit-Reset"] = []string{strconv.Itoa(t.Reset)}
	if ok {
		return true
	}
	hdr["Retry-After"] = []string{strconv.Itoa(t.RetryAfter)}
	httpapi.WriteError(w, &httpapi.Error{Status: http.StatusTooManyRequests, Type: httpapi.TypeRateLimited,
		Message: "rate limit exceeded; retry after " + (time.Duration(t.RetryAfter) * time.Second).String()})
	return false
}
