package redact

import (
	"net/url"
	"strings"
)

// secretWords are what a parameter's name holds when its value is a
// secret: api_key, access_token, client_secret, sig, X-Amz-Signature,
// password, auth, credential, and their spellings in any case.
var secretWords = []string{"key", "token", "secret", "sig", "password", "auth", "credential"}

// SecretParam reports whether a query parameter named name, as written in
// a raw query (percent-encoded or not), carries a secret: its name, decoded
// and in any case, contains key, token, secret, sig (signature too),
// password, auth or credential. A name that does not decode is taken for
// a secret one, since what it says cannot be told.
func SecretParam(name string) bool {
	decoded, err := url.QueryUnescape(name)
	if err != nil {
		return true
	}
	decoded = strings.ToLower(decoded)
	for _, w := range secretWords {
		if strings.Contains(decoded, w) {
			return true
		}
	}
	return false
}

// SecretParams returns a raw query with the value of each parameter that
// [SecretParam] names replaced by [Mask]: the other parameters, the names,
// the order and the escapes stay as they were written, so the query still
// says what was asked. A parameter without "=" has no value to mask.
//
//	limit=3&api_key=QUERYKEY&%74oken=abc
//	limit=3&api_key=xxxxx&%74oken=xxxxx
func SecretParams(rawQuery string) string {
	var b strings.Builder
	b.Grow(len(rawQuery))
	for i, part := range strings.Split(rawQuery, "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		name, value, ok := strings.Cut(part, "=")
		if !ok || value == "" || !SecretParam(name) {
			b.WriteString(part)
			continue
		}
		b.WriteString(name)
		b.WriteByte('=')
		b.WriteString(Mask)
	}
	return b.String()
}
