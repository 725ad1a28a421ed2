package mockserver

import (
	"net/http"
	"time"
)

// Limits of the idempotency store. Every key expires IdempotencyTTL after
// its first request; besides, the store holds at most MaxIdempotencyKeys
// keys and MaxIdempotencyBytes of stored answers (over all accounts) and
// forgets the oldest finished key first when a new one would pass either
// limit (a key whose request is still running is kept, so its repeat is
// still a 409). A repeat of a forgotten key runs afresh, as after 24 hours.
const (
	IdempotencyTTL      = 24 * time.Hour
	MaxIdempotencyKeys  = 10_000
	MaxIdempotencyBytes = 64 << 20
)

// serveIdempotent runs a POST through the idempotency store when it
// carries an Idempotency-Key, and runs it plainly otherwise (see
// idempotency.Store.Serve).
func (s *Server) serveIdempotent(w http.ResponseWriter, r *http.Request, k *apiKey, h apiHandler) {
	s.idem.Serve(w, r, s.clk, k.acct.ID(), func(w http.ResponseWriter, r *http.Request) { h(w, r, k) })
}
