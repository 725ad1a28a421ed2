package adminapi

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/mockrules"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// keyJSON is a key of the server as GET /_mock/accounts shows it under
// its account: its token masked (mockrules.MaskToken), and its rate limit
// set only for a plan that has one of its own (enterprise).
type keyJSON struct {
	Account   string `json:"-"`
	Token     string `json:"token"`
	User      string `json:"user"`
	Plan      string `json:"plan"`
	Scope     string `json:"scope"`
	PerMinute int    `json:"perMinute,omitempty"`
	Burst     int    `json:"burst,omitempty"`
}

// newKeyJSON is k as GET /_mock/accounts shows it.
func newKeyJSON(k model.Key) keyJSON {
	kj := keyJSON{Account: k.Account, Token: mockrules.MaskToken(k.Token), User: k.User, Plan: string(k.Plan), Scope: string(k.Scope)}
	if k.Plan == model.PlanEnterprise {
		kj.PerMinute, kj.Burst = k.PerMinute, k.Burst
	}
	return kj
}

// accountJSON is an account as GET /_mock/accounts shows it.
type accountJSON struct {
	ID       string    `json:"id"`
	Users    []string  `json:"users"`
	Keys     []keyJSON `json:"keys"`
	Contexts int       `json:"contexts"`
	Webhooks int       `json:"webhooks"`
}

// MarshalJSON is the default encoding; it lets httpapi.WritePage encode accounts.
func (a accountJSON) MarshalJSON() ([]byte, error) {
	type plain accountJSON
	return json.Marshal(plain(a))
}

// listAccounts pages through the server's accounts in the order of
// their first key, with their keys (tokens masked) and how many contexts
// and webhooks each holds.
func (h *Handler) listAccounts(w http.ResponseWriter, r *http.Request) {
	limit, after, e := h.svc.Cursors.PageParams(r.URL.Query(), httpapi.CursorAccounts, "")
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	// Positions count accounts from 1.
	accounts := h.svc.Store.Accounts()
	start := int(min(after, uint64(len(accounts))))
	end := min(start+limit, len(accounts))
	items := make([]accountJSON, 0, end-start)
	for _, a := range accounts[start:end] {
		aj := accountJSON{ID: a.ID(), Users: []string{}, Keys: []keyJSON{}}
		for _, k := range h.keys {
			if k.Account != a.ID() {
				continue
			}
			if !slices.Contains(aj.Users, k.User) {
				aj.Users = append(aj.Users, k.User)
			}
			aj.Keys = append(aj.Keys, k)
		}
		aj.Contexts, aj.Webhooks = a.Counts()
		items = append(items, aj)
	}
	var next uint64
	if end < len(accounts) {
		next = uint64(end)
	}
	httpapi.WritePage(w, h.svc.Cursors, httpapi.CursorAccounts, "", items, next)
}
