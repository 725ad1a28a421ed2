package redact

import (
	"net/url"
	"strings"
)

// secretWords are the words that make a query parameter's name secret:
// its value is then a key, a token, a signature, a password or other
// credential. "sig" also covers "signature"; the semantic conventions'
// AWSAccessKeyId, Signature, sig and X-Goog-Signature are all among them.
var secretWords = [...]string{"key", "token", "secret", "sig", "password", "auth", "credential"}

// SecretParam reports whether a query parameter's name, as written in a
// URL, says its value is secret: once percent-decoded ("%53ignature" is
// "Signature"; "+" is a space), it contains key, token, secret, sig
// (signature), password, auth or credential, in any case. A name that does
// not decode is secret too, since what it would name cannot be known.
func SecretParam(name string) bool {
	decoded, err := url.QueryUnescape(name)
	if err != nil {
		return true
	}
	for _, w := range secretWords {
		if containsFold(decoded, w) {
			return true
		}
	}
	return false
}

// containsFold reports whether s contains the lower-case ASCII word w in
// any case, without allocating.
func containsFold(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		j := 0
		for ; j < len(w); j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != w[j] {
				break
			}
		}
		if j == len(w) {
			return true
		}
	}
	return false
}

// SecretValues returns a raw query string with the value of each
// parameter that [SecretParam] names replaced by mask (a secret-named
// parameter without "=" gets "=" and the mask), every other part as it was
// written: names, order, other values, empty parts.
//
//	limit=5&%53ignature=abc&api_key=k  →  limit=5&%53ignature=REDACTED&api_key=REDACTED
func SecretValues(rawQuery, mask string) string {
	if rawQuery == "" {
		return ""
	}
	var b strings.Builder
	changed := false
	rest := rawQuery
	for first := true; ; first = false {
		part, more, found := strings.Cut(rest, "&")
		name, value, hasValue := strings.Cut(part, "=")
		secret := name != "" && SecretParam(name) && (!hasValue || value != mask)
		if secret && !changed {
			// The parts before, with the "&" before this one, as written.
			changed = true
			b.Grow(len(rawQuery) + len(mask))
			b.WriteString(rawQuery[:len(rawQuery)-len(rest)])
		} else if changed && !first {
			b.WriteByte('&')
		}
		if changed {
			if secret {
				b.WriteString(name)
				b.WriteByte('=')
				b.WriteString(mask)
			} else {
				b.WriteString(part)
			}
		}
		if !found {
			break
		}
		rest = more
	}
	if !changed {
		return rawQuery
	}
	return b.String()
}
