package v1api

import (
	"encoding/json"
	"net/http"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/ids"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/jsonwire"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/keys"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/rules"
)

// registerWebhook answers POST /v1/webhooks: a webhook of the key's
// account, checked as the contract says.
func (h *Handler) registerWebhook(w http.ResponseWriter, r *http.Request, k *keys.Key, _ string) {
	f, e := h.decodeWebhook(r)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	wh, e := h.svc.AddWebhook(k.Data, ids.New("wh_"), f.url, f.secret, f.events)
	if e != nil {
		httpapi.WriteError(w, e)
		return
	}
	st := wh.State()
	b, _ := json.Marshal(model.WebhookJSON{ID: wh.ID(), URL: st.URL, Events: st.Events, CreatedAt: jsonwire.FormatTime(wh.CreatedAt()), Active: true})
	httpapi.WriteJSON(w, http.StatusCreated, b)
}

// webhookFields are the validated fields of a registration.
type webhookFields struct {
	url    string
	events []contextsvc.EventType
	secret string
}

// decodeWebhook reads and checks a registration's body.
func (h *Handler) decodeWebhook(r *http.Request) (webhookFields, *httpapi.Error) {
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
	if wf.url, e = rules.DecodeWebhookURL(fields["url"], h.svc.HTTPSOnly); e != nil {
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
