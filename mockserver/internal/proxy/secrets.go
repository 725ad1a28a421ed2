package proxy

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/contextsvc/contextsvc-go/internal/redact"
)

// masker hides an exchange's secrets in what the proxy logs and keeps:
// the token of its Authorization header, the "secret" of a JSON body (a
// webhook's, in a registerWebhook request, or one an upstream echoes),
// and what redact.URL hides of a body's "url" (a receiver URL's userinfo
// and query values). Each is replaced by redact.Mask wherever it
// appears, in a mismatch's message as in the target.
type masker struct{ secrets []string }

func newMasker(header http.Header, reqBody, respBody []byte) masker {
	var m masker
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(m.secrets, s) {
			m.secrets = append(m.secrets, s)
		}
	}
	for _, v := range header.Values("Authorization") {
		add(v)
		if _, token, ok := strings.Cut(v, " "); ok {
			add(token)
		}
	}
	m.fromBody(reqBody, add)
	m.fromBody(respBody, add)
	// The longest first, so that a secret holding another is masked whole.
	slices.SortFunc(m.secrets, func(a, b string) int { return len(b) - len(a) })
	return m
}

// fromBody adds the secrets of a JSON object body: its "secret", and the
// parts of its "url" that redact.URL hides (also as they are escaped).
func (masker) fromBody(body []byte, add func(string)) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return
	}
	var s string
	if json.Unmarshal(fields["secret"], &s) == nil {
		add(s)
	}
	if json.Unmarshal(fields["url"], &s) != nil {
		return
	}
	u, err := url.Parse(s)
	if err != nil {
		add(s) // any part of it may be the secret
		return
	}
	if u.User != nil {
		add(u.User.String())
		add(u.User.Username())
		if _, escaped, ok := strings.Cut(u.User.String(), ":"); ok {
			add(escaped)
		}
		if p, ok := u.User.Password(); ok {
			add(p)
		}
	}
	for _, part := range strings.Split(u.RawQuery, "&") {
		name, value, ok := strings.Cut(part, "=")
		if !ok {
			add(name)
			continue
		}
		add(value)
		if v, err := url.QueryUnescape(value); err == nil {
			add(v)
		}
	}
}

// mask replaces every secret in s.
func (m masker) mask(s string) string {
	for _, secret := range m.secrets {
		s = strings.ReplaceAll(s, secret, redact.Mask)
	}
	return s
}
