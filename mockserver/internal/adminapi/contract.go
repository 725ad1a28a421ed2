package adminapi

import (
	"net/http"
	"strconv"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/proxy"
	"github.com/contextsvc/contextsvc-go/redact"
)

// contractJSON is GET /_mock/contract (components/schemas/MockContract):
// whether the server is a validating proxy, to what, and what it saw.
type contractJSON struct {
	Proxy            bool        `json:"proxy"`
	Upstream         *string     `json:"upstream"`
	MaxValidatedBody int         `json:"maxValidatedBody"`
	Operations       []countJSON `json:"operations"`
	Total            countJSON   `json:"total"`
	Kept             int         `json:"kept"`
	KeptBytes        int         `json:"keptBytes"`
	Limit            int         `json:"limit"`
	MaxBytes         int         `json:"maxBytes"`
}

// countJSON is what the proxy saw of an operation (proxy.Count) on the
// wire.
type countJSON struct {
	Operation        string `json:"operation"`
	Exchanges        int    `json:"exchanges"`
	Mismatched       int    `json:"mismatched"`
	Mismatches       int    `json:"mismatches"`
	NotTolerated     int    `json:"notTolerated"`
	Unvalidated      int    `json:"unvalidated"`
	Refused          int    `json:"refused"`
	UpstreamFailures int    `json:"upstreamFailures"`
}

// getContract answers what the validating proxy saw, per operation and in
// all; a server that is no proxy says so, with nothing seen.
func (h *Handler) getContract(w http.ResponseWriter, r *http.Request) {
	out := contractJSON{MaxValidatedBody: proxy.MaxValidatedBody, Operations: []countJSON{}, Total: countJSON{Operation: "all"}}
	if p := h.svc.Proxy; p != nil {
		up := redact.URL(p.Upstream())
		out.Proxy, out.Upstream = true, &up
		for _, c := range p.Log().Counts() {
			out.Operations = append(out.Operations, countJSON{Operation: c.Operation, Exchanges: c.Exchanges, Mismatched: c.Mismatched,
				Mismatches: c.Mismatches, NotTolerated: c.NotTolerated, Unvalidated: c.Unvalidated, Refused: c.Refused,
				UpstreamFailures: c.UpstreamFailures})
		}
		for _, c := range out.Operations {
			out.Total.Exchanges += c.Exchanges
			out.Total.Mismatched += c.Mismatched
			out.Total.Mismatches += c.Mismatches
			out.Total.NotTolerated += c.NotTolerated
			out.Total.Refused += c.Refused
			out.Total.Unvalidated += c.Unvalidated
			out.Total.UpstreamFailures += c.UpstreamFailures
		}
		out.Kept, out.KeptBytes = p.Log().Stats()
		out.Limit, out.MaxBytes = p.Log().Limits()
	}
	httpapi.WriteValue(w, http.StatusOK, out)
}

// listMismatches pages through the kept findings, oldest first (order=desc:
// newest first), like the /v1 lists (limit, cursor), optionally of one
// operation (an operation id, or "off the API"). A server that is no
// proxy lists none.
func (h *Handler) listMismatches(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	op, e := filterParam(q, "operation")
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	limit, start, scope, e := h.svc.Cursors.ListParams(q, httpapi.CursorContract, httpapi.ListScope(op))
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	var items []*proxy.Finding
	var next uint64
	if h.svc.Proxy != nil {
		items, next = h.svc.Proxy.Log().Page(start, limit, op)
	}
	httpapi.WritePage(w, h.svc.Cursors, httpapi.CursorContract, scope, items, next)
}

func (h *Handler) getMismatch(w http.ResponseWriter, r *http.Request) {
	var f *proxy.Finding
	ok := false
	if h.svc.Proxy != nil {
		f, ok = h.svc.Proxy.Log().Get(r.PathValue("id"))
	}
	if !ok {
		httpapi.WriteError(w, httpapi.NotFound("no kept finding with id "+strconv.Quote(r.PathValue("id"))))
		return
	}
	httpapi.WriteValue(w, http.StatusOK, f)
}
