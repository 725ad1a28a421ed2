package mockserver

import (
	"encoding/json"
	"fmt"
	"net/http"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/changes"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/ids"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/rules"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/store"
)

// MaxWebhooksPerAccount is how many webhooks one account may have. A
// registration past it is a 400 (delete one first, DELETE
// /_mock/webhooks/{id} or [Server.DeleteWebhook]): each event is delivered
// to every subscribed webhook, so the number of webhooks multiplies the
// deliveries an event makes.
const MaxWebhooksPerAccount = 100

// webhookJSON is a registered webhook as the /v1 API answers it.
type webhookJSON struct {
	ID        string                 `json:"id"`
	URL       string                 `json:"url"`
	Events    []contextsvc.EventType `json:"events"`
	CreatedAt string                 `json:"createdAt"`
	Active    bool                   `json:"active"`
}

func (s *Server) registerWebhook(w http.ResponseWriter, r *http.Request, k *apiKey) {
	f, e := s.decodeWebhook(r)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	wh, e := s.addWebhook(k.acct, f)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	st := wh.State()
	b, _ := json.Marshal(webhookJSON{ID: wh.ID(), URL: st.URL, Events: st.Events, CreatedAt: jsonwire.FormatTime(wh.CreatedAt()), Active: true})
	httpapi.WriteJSON(w, http.StatusCreated, b)
}

// webhookFields are the validated fields of a registration.
type webhookFields struct {
	url    string
	events []contextsvc.EventType
	secret string
}

// addWebhook stores a new webhook of account a, unless a already has
// MaxWebhooksPerAccount.
func (s *Server) addWebhook(a *store.Account, f webhookFields) (*store.Webhook, *httpapi.Error) {
	wh, ok := s.store.AddWebhook(a, ids.New("wh_"), f.url, f.secret, f.events, s.now, MaxWebhooksPerAccount)
	if !ok {
		return nil, httpapi.BadRequest("", fmt.Sprintf("this account already has %d webhooks, the most it may have: "+
			"delete one first (DELETE /_mock/webhooks/{id}), or change one (PATCH /_mock/webhooks/{id})", MaxWebhooksPerAccount))
	}
	s.changes.Publish(changes.Change{Kind: changes.KindWebhook, ID: wh.ID(), Action: "created", Account: a.ID()})
	return wh, nil
}

func (s *Server) decodeWebhook(r *http.Request) (webhookFields, *httpapi.Error) {
	fields, e := httpapi.ReadObject(r, "url", "events", "secret")
	if e != nil {
		return webhookFields{}, e
	}
	for _, f := range []string{"url", "events", "secret"} {
		if _, ok := fields[f]; !ok {
			return webhookFields{}, httpapi.BadRequest(f, f+" is required")
		}
	}
	var wf webhookFields
	if wf.url, e = rules.DecodeWebhookURL(fields["url"], s.httpsOnly); e != nil {
		return webhookFields{}, e
	}
	if wf.events, e = rules.DecodeWebhookEvents(fields["events"]); e != nil {
		return webhookFields{}, e
	}
	if wf.secret, e = rules.DecodeWebhookSecret(fields["secret"]); e != nil {
		return webhookFields{}, e
	}
	return wf, nil
}
