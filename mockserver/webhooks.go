package mockserver

import (
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// webhook is a stored registration; secret never leaves the package except
// to the delivery engine through webhookTarget.
type webhook struct {
	id        string
	url       string
	events    []contextsvc.EventType
	secret    string
	createdAt time.Time
	active    bool
	account   string
}

func (w *webhook) public() Webhook {
	return Webhook{ID: w.id, Account: w.account, URL: w.url, Events: slices.Clone(w.events), CreatedAt: w.createdAt, Active: w.active}
}

type webhookJSON struct {
	ID        string                 `json:"id"`
	URL       string                 `json:"url"`
	Events    []contextsvc.EventType `json:"events"`
	CreatedAt string                 `json:"createdAt"`
	Active    bool                   `json:"active"`
}

func (s *Server) registerWebhook(w http.ResponseWriter, r *http.Request, k *apiKey) {
	wh, e := s.decodeWebhook(r)
	if e != nil {
		writeError(w, e)
		return
	}
	wh.id, wh.account, wh.active = newID("wh_"), k.Account, true
	a := k.acct
	a.mu.Lock()
	wh.createdAt = s.now()
	a.webhooks = append(a.webhooks, wh)
	a.mu.Unlock()
	b, _ := json.Marshal(webhookJSON{ID: wh.id, URL: wh.url, Events: wh.events, CreatedAt: formatTime(wh.createdAt), Active: true})
	writeJSON(w, http.StatusCreated, b)
}

func (s *Server) decodeWebhook(r *http.Request) (*webhook, *apiError) {
	fields, e := readObject(r, "url", "events", "secret")
	if e != nil {
		return nil, e
	}
	for _, f := range []string{"url", "events", "secret"} {
		if _, ok := fields[f]; !ok {
			return nil, badRequest(f, f+" is required")
		}
	}
	wh := &webhook{}
	u, e := decodeString("url", fields["url"])
	if e != nil {
		return nil, e
	}
	if e := s.validWebhookURL(u); e != nil {
		return nil, e
	}
	wh.url = u
	evs, e := decodeStrings("events", fields["events"])
	if e != nil {
		return nil, e
	}
	if len(evs) == 0 {
		return nil, badRequest("events", "events must name at least one event type")
	}
	for _, ev := range evs {
		t := contextsvc.EventType(ev)
		if !t.Known() {
			return nil, badRequest("events", "unknown event type "+ev)
		}
		if !slices.Contains(wh.events, t) {
			wh.events = append(wh.events, t)
		}
	}
	secret, e := decodeString("secret", fields["secret"])
	if e != nil {
		return nil, e
	}
	if n := utf8.RuneCountInString(secret); n < 1 || n > maxSecretRunes {
		// The message never echoes the secret.
		return nil, badRequest("secret", "secret must be 1 to 256 characters")
	}
	wh.secret = secret
	return wh, nil
}

// validWebhookURL accepts an absolute https URL, or http for a loopback
// host unless the server refuses http altogether.
func (s *Server) validWebhookURL(raw string) *apiError {
	if len(raw) > maxURLLen {
		return badRequest("url", "url must be at most 2048 bytes")
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" || u.Hostname() == "" {
		return badRequest("url", "url must be an absolute https URL")
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		if !s.httpsOnly && isLoopback(u.Hostname()) {
			return nil
		}
		if s.httpsOnly {
			return badRequest("url", "url must use https")
		}
		return badRequest("url", "url must use https (http is accepted only for loopback hosts)")
	}
	return badRequest("url", "url must be an absolute https URL")
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
