package adminapi

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
)

// Key is a key of the server as GET /_mock/accounts shows it under its
// account: New masks its token (mockrules.MaskToken), and its rate limit is set
// only for a plan that has one of its own (enterprise).
type Key struct {
	Account   string `json:"-"`
	Token     string `json:"token"`
	User      string `json:"user"`
	Plan      string `json:"plan"`
	Scope     string `json:"scope"`
	PerMinute int    `json:"perMinute,omitempty"`
	Burst     int    `json:"burst,omitempty"`
}

// accountJSON is an account as GET /_mock/accounts shows it.
type accountJSON struct {
	ID       string   `json:"id"`
	Users    []string `json:"users"`
	Keys     []Key    `json:"keys"`
	Contexts int      `json:"contexts"`
	Webhooks int      `json:"webhooks"`
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
	limit, after, e := h.c.Cursors.PageParams(r.URL.Query(), httpapi.CursorAccounts, "")
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	// Positions count accounts from 1.
	accounts := h.c.Store.Accounts()
	start := int(min(after, uint64(len(accounts))))
	end := min(start+limit, len(accounts))
	items := make([]accountJSON, 0, end-start)
	for _, a := range accounts[start:end] {
		aj := accountJSON{ID: a.ID(), Users: []string{}, Keys: []Key{}}
		for _, k := range h.c.Keys {
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
	httpapi.WritePage(w, h.c.Cursors, httpapi.CursorAccounts, "", items, next)
}
