package adminapi

import (
	"net/http"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/delivery"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
)

// summaryJSON is what the server holds, in numbers, and its clock.
type summaryJSON struct {
	Accounts   int             `json:"accounts"`
	Contexts   int             `json:"contexts"`
	Webhooks   int             `json:"webhooks"`
	Events     int             `json:"events"`
	Deliveries delivery.Counts `json:"deliveries"`
	Faults     int             `json:"faults"`
	Chaos      summaryChaos    `json:"chaos"`
	Clock      clockJSON       `json:"clock"`
}

// summaryChaos says whether the chaos mode is on, and its SPEC.
type summaryChaos struct {
	On   bool   `json:"on"`
	Spec string `json:"spec,omitempty"`
}

// summary counts what the server holds: a lock and a length per
// store, whatever they hold.
func (h *Handler) summary(w http.ResponseWriter, r *http.Request) {
	sum := summaryJSON{Accounts: len(h.svc.Store.Accounts()), Deliveries: h.svc.Deliveries.Counts(), Clock: h.clockState()}
	sum.Contexts, sum.Webhooks = h.svc.Store.Counts()
	sum.Events, _ = h.svc.Events.Stats()
	sum.Faults = h.svc.Faults.Len()
	if run := h.svc.Chaos.Current(); run != nil {
		sum.Chaos = summaryChaos{On: true, Spec: run.Settings().String()}
	}
	httpapi.WriteValue(w, http.StatusOK, sum)
}
