// Package rules holds the contract's rules for what the mock server
// stores and takes: a context's name, content and tags, a webhook's url,
// events and secret, an account's name, an emitted event's type, each with
// the API's words for what is wrong (the 400 naming the field), and the
// reading of a webhook's fields from a request body. The /v1
// handlers, the admin API and the state document's reader all hold their
// input to them, so a state file can hold nothing a request could not
// store.
//
// It owns the rules and their messages (an account's name is mockrules',
// which the command shares); it stores nothing and imports httpapi alone
// of the mock server.
package rules

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/mockrules"
)

// Field limits of the contract.
const (
	MaxNameRunes   = 200
	MaxContentLen  = 1_000_000
	MaxTags        = 20
	MaxTagRunes    = 50
	MaxSecretRunes = 256
	MaxURLLen      = 2048
)

// Name checks a context's name: 1 to MaxNameRunes characters, not only
// white space.
func Name(name string) *httpapi.Error {
	n := utf8.RuneCountInString(name)
	if n < 1 || n > MaxNameRunes {
		return httpapi.BadRequest("name", fmt.Sprintf("name must be 1 to %d characters, got %d", MaxNameRunes, n))
	}
	if strings.TrimFunc(name, unicode.IsSpace) == "" {
		return httpapi.BadRequest("name", "name must not be only white space")
	}
	return nil
}

// Content checks a context's content: at most MaxContentLen bytes.
func Content(content string) *httpapi.Error {
	if len(content) > MaxContentLen {
		return httpapi.BadRequest("content", fmt.Sprintf("content must be at most %d bytes, got %d", MaxContentLen, len(content)))
	}
	return nil
}

// Tags drops duplicates (first kept, order kept) and checks the
// limits; the count limit applies after duplicates are dropped, as that is
// what would be stored. It stops at the first distinct tag past the limit,
// so the duplicate check never scans more than MaxTags kept tags: a 2 MiB
// body holds some 300,000 short tags, and checking each against all the
// ones before it took minutes of CPU.
func Tags(tags []string) ([]string, *httpapi.Error) {
	out := make([]string, 0, min(len(tags), MaxTags))
	for i, t := range tags {
		n := utf8.RuneCountInString(t)
		if n < 1 || n > MaxTagRunes {
			return nil, httpapi.BadRequest("tags", fmt.Sprintf("tags[%d] must be 1 to %d characters, got %d", i, MaxTagRunes, n))
		}
		if slices.Contains(out, t) {
			continue
		}
		if len(out) == MaxTags {
			return nil, httpapi.BadRequest("tags", fmt.Sprintf("at most %d tags (after duplicates are dropped), got %d", MaxTags, distinctCount(tags)))
		}
		out = append(out, t)
	}
	return out, nil
}

// distinctCount counts the distinct strings of l, in linear time.
func distinctCount(l []string) int {
	seen := make(map[string]struct{}, len(l))
	for _, s := range l {
		seen[s] = struct{}{}
	}
	return len(seen)
}

// WebhookEvents checks a webhook's event types (at least one, each
// one of the eight) and returns them without duplicates, first
// occurrence first.
func WebhookEvents(types []contextsvc.EventType) ([]contextsvc.EventType, *httpapi.Error) {
	if len(types) == 0 {
		return nil, httpapi.BadRequest("events", "events must name at least one event type")
	}
	out := make([]contextsvc.EventType, 0, len(types))
	for i, t := range types {
		if !t.Known() {
			return nil, httpapi.BadRequest("events", fmt.Sprintf("unknown event type %q (events[%d]): each must be one of %s", t, i, knownEventTypes))
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// knownEventTypes lists the event types a webhook subscribes to, for the
// message that refuses another.
var knownEventTypes = func() string {
	names := make([]string, 0, 8)
	for _, t := range contextsvc.AllEventTypes() {
		names = append(names, string(t))
	}
	return strings.Join(names, ", ")
}()

// WebhookSecret checks a secret: 1 to 256 characters of valid UTF-8,
// no control characters. Its messages never repeat the secret.
func WebhookSecret(secret string) *httpapi.Error {
	if !utf8.ValidString(secret) {
		return httpapi.BadRequest("secret", "secret must be valid UTF-8")
	}
	if n := utf8.RuneCountInString(secret); n < 1 || n > MaxSecretRunes {
		return httpapi.BadRequest("secret", "secret must be 1 to 256 characters")
	}
	for _, r := range secret {
		if unicode.IsControl(r) {
			return httpapi.BadRequest("secret", "secret must not contain control characters")
		}
	}
	return nil
}

// WebhookURLPattern is the grammar of a webhook url, the same text as the
// url schema's pattern in openapi.yaml (TestDocumentPatternsAreTheServers
// compares them): an absolute http(s) URL in ASCII, with an optional
// user:password@, a host name (letters, digits, '.', '-', '_', '~'), an
// IPv4 address or [::1], an optional port, and a path, query and fragment
// of printable characters and well-formed %XX escapes. Plain http is
// allowed only to a loopback host: localhost, 127.0.0.0/8 or [::1].
// Anything it admits url.Parse parses (FuzzWebhookURL), so the document
// describes exactly what the server accepts.
const WebhookURLPattern = `^(?:[Hh][Tt][Tt][Pp][Ss]://` + urlUserinfo + `(?:[A-Za-z0-9._~-]+|\[::1\])` +
	`|[Hh][Tt][Tt][Pp]://` + urlUserinfo + urlLoopbackHost + `)` +
	`(?::[0-9]*)?(?:[/?#](?:[!-$&-~]|%[0-9A-Fa-f]{2})*)?$`

const (
	urlUserinfo     = `(?:(?:[A-Za-z0-9._~!$&'()*+,;=:-]|%[0-9A-Fa-f]{2})*@)?`
	urlOctet        = `(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])`
	urlLoopbackHost = `(?:[Ll][Oo][Cc][Aa][Ll][Hh][Oo][Ss][Tt]|127(?:\.` + urlOctet + `){3}|\[::1\])`
)

// WebhookURLRegexp is WebhookURLPattern compiled.
var WebhookURLRegexp = regexp.MustCompile(WebhookURLPattern)

// WebhookURL accepts a url that WebhookURLPattern admits: https, or
// http to a loopback host unless httpsOnly refuses http altogether.
func WebhookURL(raw string, httpsOnly bool) *httpapi.Error {
	if len(raw) > MaxURLLen {
		return httpapi.BadRequest("url", "url must be at most 2048 bytes")
	}
	if !WebhookURLRegexp.MatchString(raw) {
		return httpapi.BadRequest("url", "url must be an absolute https URL (http only to localhost, 127.x.x.x or [::1]) "+
			"of printable ASCII characters, with well-formed %XX escapes")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		// The pattern admits nothing url.Parse refuses (FuzzWebhookURL).
		return httpapi.BadRequest("url", "url must be an absolute https URL")
	}
	if strings.EqualFold(u.Scheme, "http") {
		if httpsOnly {
			return httpapi.BadRequest("url", "url must use https")
		}
		if !IsLoopback(u.Hostname()) {
			// The pattern admits only loopback hosts for http.
			return httpapi.BadRequest("url", "url must use https (http is accepted only for loopback hosts)")
		}
	}
	return nil
}

// IsLoopback reports whether host is localhost or a loopback address.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// MaxAccountLen bounds an account name; AccountPattern is its grammar,
// as openapi.yaml states it (TestDocumentPatternsAreTheServers).
const (
	MaxAccountLen  = mockrules.MaxAccountLen
	AccountPattern = mockrules.AccountPattern
)

// Account checks an account name (mockrules.Account).
func Account(name string) error { return mockrules.Account(name) }

// MaxEventTypeLen bounds an emitted event type; it travels in a header.
const MaxEventTypeLen = 100

// EventTypePattern is what EventType accepts, as the document states
// it (TestDocumentPatternsAreTheServers, FuzzDurationPattern).
const EventTypePattern = `^[!-~]{1,100}$`

// EventType checks an emitted event type: 1 to 100 printable ASCII
// characters without spaces (EventTypePattern).
func EventType(t string) error {
	if t == "" || len(t) > MaxEventTypeLen {
		return fmt.Errorf("type must be 1 to %d characters", MaxEventTypeLen)
	}
	for i := 0; i < len(t); i++ {
		if t[i] <= ' ' || t[i] > '~' {
			return fmt.Errorf("type %q must be printable ASCII without spaces", t)
		}
	}
	return nil
}

// DecodeWebhookURL reads a body's url field and holds it to WebhookURL.
func DecodeWebhookURL(raw json.RawMessage, httpsOnly bool) (string, *httpapi.Error) {
	u, e := httpapi.DecodeString("url", raw)
	if e != nil {
		return "", e
	}
	return u, WebhookURL(u, httpsOnly)
}

// DecodeWebhookEvents reads a body's events field and holds it to
// WebhookEvents.
func DecodeWebhookEvents(raw json.RawMessage) ([]contextsvc.EventType, *httpapi.Error) {
	evs, e := httpapi.DecodeStrings("events", raw)
	if e != nil {
		return nil, e
	}
	types := make([]contextsvc.EventType, len(evs))
	for i, ev := range evs {
		types[i] = contextsvc.EventType(ev)
	}
	return WebhookEvents(types)
}

// DecodeWebhookSecret reads a body's secret field and holds it to
// WebhookSecret.
func DecodeWebhookSecret(raw json.RawMessage) (string, *httpapi.Error) {
	secret, e := httpapi.DecodeString("secret", raw)
	if e != nil {
		return "", e
	}
	return secret, WebhookSecret(secret)
}

// WebhookNotFound is the answer for a webhook id that names none (or a
// deleted one).
func WebhookNotFound(id string) *httpapi.Error {
	return httpapi.NotFound("no webhook with id " + fmt.Sprintf("%q", id))
}
