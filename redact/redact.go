// Package redact hides the secrets a URL can carry before the URL is
// logged, formatted or put in an error text. A webhook receiver's URL
// often holds one: a password in its userinfo
// (https://user:token@hooks.example.com/in) or a token in its query
// (https://hooks.example.com/in?token=…, as Slack-style receivers take
// it). The SDK masks the receiver URLs it prints with it (the String of
// a webhook registration request); so do the mock server, the
// OpenTelemetry instrumentation and the commands, and so can a program
// that logs a receiver's URL of its own.
//
// Masking goes by the URL's structure (its user info, the values of its
// query), never by searching the text for a known secret.
package redact

import (
	"net/url"
	"strings"
)

// Mask replaces each hidden part of a URL.
const Mask = "xxxxx"

// URL returns raw with its userinfo (user name and password) replaced by
// [Mask] and the value of each query parameter replaced by [Mask] (a
// parameter without "=" is replaced whole): the scheme, host, path,
// parameter names and fragment stay, so the URL still says where it
// points. A raw that does not parse as a URL is "(unparsable url)",
// since any part of it might be the secret.
//
//	https://bot:s3cret@hooks.example.com/in?token=abc&channel=ops
//	https://xxxxx@hooks.example.com/in?token=xxxxx&channel=xxxxx
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable url)"
	}
	return Parsed(u)
}

// Parsed is [URL] for a URL already parsed, which it does not modify.
func Parsed(u *url.URL) string {
	if u.User == nil && u.RawQuery == "" && !u.ForceQuery {
		return u.String()
	}
	c := *u
	if c.User != nil {
		c.User = url.User(Mask)
	}
	if c.RawQuery != "" || c.ForceQuery {
		c.RawQuery = query(c.RawQuery)
	}
	return c.String()
}

// query masks the values of a raw query string, keeping its parameters'
// names and order as they were written.
func query(raw string) string {
	var b strings.Builder
	b.Grow(len(raw))
	for i, part := range strings.Split(raw, "&") {
		if i > 0 {
			b.WriteByte('&')
		}
		name, value, ok := strings.Cut(part, "=")
		switch {
		case !ok && part != "":
			b.WriteString(Mask)
		case !ok:
		case value == "":
			b.WriteString(name)
			b.WriteByte('=')
		default:
			b.WriteString(name)
			b.WriteByte('=')
			b.WriteString(Mask)
		}
	}
	return b.String()
}
