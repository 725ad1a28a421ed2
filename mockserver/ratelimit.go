package mockserver

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
)

// allow takes one token from k's bucket at the server clock's now and sets
// the X-RateLimit-* headers. It writes the 429 and reports false when the
// bucket is empty. Unlimited keys pass without headers.
func (s *Server) allow(w http.ResponseWriter, k *apiKey) bool {
	lim := k.limiter.Load()
	if lim == nil {
		return true
	}
	now := s.clock.Now()
	res := lim.ReserveN(now, 1)
	delay := res.DelayFrom(now)
	if delay > 0 {
		res.CancelAt(now)
	}
	tokens := lim.TokensAt(now)
	h := w.Header()
	h["X-Ratelimit-Limit"] = k.limitHdr
	remaining := int(math.Floor(tokens))
	if remaining < 0 {
		remaining = 0
	}
	h["X-Ratelimit-Remaining"] = []string{strconv.Itoa(remaining)}
	perSec := float64(k.perMinute) / 60
	reset := int(math.Ceil((float64(k.burst) - tokens) / perSec))
	if reset < 0 {
		reset = 0
	}
	h["X-Ratelimit-Reset"] = []string{strconv.Itoa(reset)}
	if delay <= 0 {
		return true
	}
	secs := int(math.Ceil(delay.Seconds()))
	if secs < 1 {
		secs = 1
	}
	h["Retry-After"] = []string{strconv.Itoa(secs)}
	httpapi.WriteError(w, &httpapi.Error{Status: http.StatusTooManyRequests, Type: httpapi.TypeRateLimited,
		Message: "rate limit exceeded; retry after " + (time.Duration(secs) * time.Second).String()})
	return false
}
