package proxy

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
	"github.com/contextsvc/contextsvc-go/redact"
)

// The secrets an exchange carries are kept out of what the proxy logs and
// keeps by where they are, never by looking for their text: a secret may
// be one letter, and replacing every "e" of a finding shows the secret and
// leaves the finding unreadable. The places are:
//
//   - the Authorization header (and Proxy-Authorization, cookies): never
//     given to the checks (exchange.record), so no mismatch names it;
//   - the query: the value of each parameter whose name says it is a
//     secret (redact.SecretParam) is masked in the target, and a mismatch
//     about such a parameter keeps only a message that cannot show it;
//   - the bodies: a value the document marks secret (a webhook's secret,
//     a receiver URL, which holds secrets in its user info and query), or
//     held by a field named so (secret, url: an upstream's answer may not
//     follow the document), is never quoted: a mismatch about it keeps
//     only a message that cannot show it.
//
// The checks' messages name rules, never values, but for a few (a
// parameter that does not parse, a format): those are the messages a
// mismatch about a secret does not keep. And the dump of the schema and
// the value some schema errors end with is cut from every message.
//
// An upstream may also echo a secret where none belongs (a webhook's id,
// an error's param), and the SDK's verdict quotes such fields: a quoted
// value ("…", as %q writes it) of a message or a verdict that is, whole,
// one of the exchange's secrets is masked, and so is an X-Request-Id that
// is one. A secret is only ever matched whole, as a value.

// secretSchemas are the document's schemas whose values are secrets.
var secretSchemas = []string{"#/components/schemas/WebhookSecret", "#/components/schemas/WebhookURL"}

// secretFields are the names of the body fields whose values are secrets
// wherever they are.
var secretFields = []string{"secret", "url"}

// secretHeaders are the headers whose values are secrets.
var secretHeaders = []string{"authorization", "proxy-authorization", "cookie", "set-cookie"}

// plainKeywords are the schema keywords whose messages never show the
// value checked (they name the rule: its type, bounds, pattern, allowed
// values, properties).
var plainKeywords = []string{
	"type", "nullable", "enum", "const", "not", "oneOf", "anyOf", "allOf",
	"minLength", "maxLength", "pattern",
	"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
	"minItems", "maxItems", "uniqueItems",
	"required", "properties", "additionalProperties", "minProperties", "maxProperties",
	"allowEmptyValue",
}

// withheld replaces the message of a mismatch about a secret that could
// show it.
const withheld = "breaks the rule (the message is not shown: it could show the secret value)"

// maskTarget is a request's path and query as a finding shows it, the
// values of the parameters named as secrets masked.
func maskTarget(path, rawQuery string) string {
	if rawQuery == "" {
		return path
	}
	return path + "?" + redact.SecretValues(rawQuery, redact.Mask)
}

// maskMismatch returns m as a finding keeps it: its message without the
// dump of the schema and the value, and, about a secret, only if it
// cannot show the secret.
func maskMismatch(m contract.Mismatch) contract.Mismatch {
	if msg, _, cut := strings.Cut(m.Message, "\nSchema:\n"); cut {
		m.Message = msg
	}
	if aboutSecret(m) && !slices.Contains(plainKeywords, keyword(m.Rule)) {
		m.Message = withheld
	}
	return m
}

// aboutSecret reports whether a mismatch is about a value that is a
// secret, from where it is (its Where) and the rule it breaks.
func aboutSecret(m contract.Mismatch) bool {
	for _, s := range secretSchemas {
		if m.Rule == s || strings.HasPrefix(m.Rule, s+"/") {
			return true
		}
	}
	kind, place, _ := strings.Cut(m.Where, " ")
	switch kind {
	case "query":
		return redact.SecretParam(place)
	case "header":
		return slices.Contains(secretHeaders, strings.ToLower(place))
	case "body", "event":
		// The pointer's last segment is the field (or index) the value
		// is at: "body /data/0/secret".
		field := place[strings.LastIndexByte(place, '/')+1:]
		return slices.Contains(secretFields, strings.ToLower(field))
	}
	return false
}

// keyword is the schema keyword a rule ends with ("#/…/WebhookSecret/
// maxLength": maxLength).
func keyword(rule string) string { return rule[strings.LastIndexByte(rule, '/')+1:] }

// secrets are the exchange's secret values, each whole: the Authorization
// header's value and its credentials, the values of the query's secret
// parameters, and in the bodies (JSON) each "secret" and each "url"'s
// user info, password and query values, and the url itself.
type secrets map[string]bool

// exchangeSecrets collects the secrets of an exchange.
func exchangeSecrets(header http.Header, rawQuery string, bodies ...[]byte) secrets {
	s := make(secrets)
	for _, name := range []string{"Authorization", "Proxy-Authorization"} {
		for _, v := range header.Values(name) {
			s.add(v)
			if _, cred, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
				s.add(cred)
			}
		}
	}
	for _, part := range strings.Split(rawQuery, "&") {
		if name, value, ok := strings.Cut(part, "="); ok && redact.SecretParam(name) {
			s.addEscaped(value)
		}
	}
	for _, b := range bodies {
		var v any
		if len(b) > 0 && json.Unmarshal(b, &v) == nil {
			s.fromJSON(v, 0)
		}
	}
	return s
}

func (s secrets) add(v string) {
	if v = strings.TrimSpace(v); v != "" {
		s[v] = true
	}
}

// addEscaped adds a value as written in a URL, and decoded.
func (s secrets) addEscaped(v string) {
	s.add(v)
	if d, err := url.QueryUnescape(v); err == nil {
		s.add(d)
	}
}

// maxDepth bounds the walk of a body (the contract's are a few levels
// deep).
const maxDepth = 32

// fromJSON adds the secrets of a JSON value: each member "secret" (a
// string), and the secrets of each member "url" (a string).
func (s secrets) fromJSON(v any, depth int) {
	if depth > maxDepth {
		return
	}
	switch v := v.(type) {
	case map[string]any:
		for k, m := range v {
			str, isString := m.(string)
			switch {
			case isString && strings.EqualFold(k, "secret"):
				s.add(str)
			case isString && strings.EqualFold(k, "url"):
				s.fromURL(str)
			default:
				s.fromJSON(m, depth+1)
			}
		}
	case []any:
		for _, m := range v {
			s.fromJSON(m, depth+1)
		}
	}
}

// fromURL adds the secrets of a receiver URL, what redact.URL hides: its
// user info (whole, the user, the password) and its query's values; and
// the URL itself, which holds them.
func (s secrets) fromURL(raw string) {
	s.add(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return
	}
	if u.User != nil {
		s.add(u.User.String())
		s.add(u.User.Username())
		if p, ok := u.User.Password(); ok {
			s.add(p)
		}
		if _, escaped, ok := strings.Cut(u.User.String(), ":"); ok {
			s.add(escaped)
		}
	}
	for _, part := range strings.Split(u.RawQuery, "&") {
		name, value, ok := strings.Cut(part, "=")
		if !ok {
			value = name
		}
		s.addEscaped(value)
	}
}

// maskQuoted returns text with each quoted value ("…", Go's quoting) that
// is one of the secrets, whole, replaced by a quoted redact.Mask. The
// rest of the text is left as it is.
func (s secrets) maskQuoted(text string) string {
	if len(s) == 0 || !strings.Contains(text, `"`) {
		return text
	}
	var b strings.Builder
	for {
		i := strings.IndexByte(text, '"')
		if i < 0 {
			break
		}
		b.WriteString(text[:i])
		text = text[i:]
		q, err := strconv.QuotedPrefix(text)
		if err != nil {
			b.WriteByte('"')
			text = text[1:]
			continue
		}
		text = text[len(q):]
		if v, err := strconv.Unquote(q); err == nil && s[strings.TrimSpace(v)] {
			q = strconv.Quote(redact.Mask)
		}
		b.WriteString(q)
	}
	b.WriteString(text)
	return b.String()
}
