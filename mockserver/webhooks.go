package mockserver

import (
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"regexp"
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

// webhookURLPattern is the grammar of a webhook url, the same text as the
// url schema's pattern in openapi.yaml (TestDocumentPatternsAreTheServers
// compares them): an absolute http(s) URL in ASCII, with an optional
// user:password@, a host name (letters, digits, '.', '-', '_', '~'), an
// IPv4 address or [::1], an optional port, and a path, query and fragment
// of printable characters and well-formed %XX escapes. Plain http is
// allowed only to a loopback host: localhost, 127.0.0.0/8 or [::1].
// Anything it admits url.Parse parses (FuzzWebhookURL), so the document
// describes exactly what the server accepts.
const webhookURLPattern = `^(?:[Hh][Tt][Tt][Pp][Ss]://` + urlUserinfo + `(?:[A-Za-z0-9._~-]+|\[::1\])` +
	`|[Hh][Tt][Tt][Pp]://` + urlUserinfo + urlLoopbackHost + `)` +
	`(?::[0-9]*)?(?:[/?#](?:[!-$&-~]|%[0-9A-Fa-f]{2})*)?$`

const (
	urlUserinfo     = `(?:(?:[A-Za-z0-9._~!$&'()*+,;=:-]|%[0-9A-Fa-f]{2})*@)?`
	urlOctet        = `(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])`
	urlLoopbackHost = `(?:[Ll][Oo][Cc][Aa][Ll][Hh][Oo][Ss][Tt]|127(?:\.` + urlOctet + `){3}|\[::1\])`
)

var webhookURLRegexp = regexp.MustCompile(webhookURLPattern)

// validWebhookURL accepts a url that webhookURLPattern admits: https, or
// http to a loopback host unless the server refuses http altogether.
func (s *Server) validWebhookURL(raw string) *apiError {
	if len(raw) > maxURLLen {
		return badRequest("url", "url must be at most 2048 bytes")
	}
	if !webhookURLRegexp.MatchString(raw) {
		return badRequest("url", "url must be an absolute https URL (http only to localhost, 127.x.x.x or [::1]) "+
			"of printable ASCII characters, with well-formed %XX escapes")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		// The pattern admits nothing url.Parse refuses (FuzzWebhookURL).
		return badRequest("url", "url must be an absolute https URL")
	}
	if strings.EqualFold(u.Scheme, "http") {
		if s.httpsOnly {
			return badRequest("url", "url must use https")
		}
		if !isLoopback(u.Hostname()) {
			// The pattern admits only loopback hosts for http.
			return badRequest("url", "url must use https (http is accepted only for loopback hosts)")
		}
	}
	return nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
