package v1api

import (
	"fmt"
	"net/http"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/chaos"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/faults"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
)

// injectChaos answers a request the chaos mode fails, instead of running
// it: the drawn status with the contract's error body of its type (and
// Retry-After with a 429), as an injected fault's. The request's log line
// and span are marked, and the decision recorded.
func (h *Handler) injectChaos(w http.ResponseWriter, r *http.Request, draw chaos.RequestDraw) {
	e := faults.ErrorFor(w.Header(), faults.Fault{Status: draw.Status, RetryAfter: draw.RetryAfter()})
	e.Message = fmt.Sprintf("chaos: request %d failed with %d %s (seed %d); the request did not run",
		draw.N, draw.Status, http.StatusText(draw.Status), draw.Seed())
	if t, ok := w.(*httpapi.Tracker); ok {
		t.FailedByChaos()
	}
	httpapi.WriteError(w, e)
	var rid string
	if v := w.Header()["X-Request-Id"]; len(v) > 0 {
		rid = v[0]
	}
	draw.Failed(h.svc.Now(), r.Method, r.URL.Path, rid)
}
