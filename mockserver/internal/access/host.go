// Package access decides who may use the mock server's admin routes
// (every path under /_mock/, the dashboard's included): the Host a
// request names ([Hosts], against DNS rebinding), the site a browser sent
// it from ([CheckCrossSite]), and, when the server has them, the user's
// credentials ([Auth]: HTTP Basic against the bcrypt hashes of an
// htpasswd file). A refusal is the admin API's error answer.
//
// It owns the allowed names, the credentials' hashes and the set of
// credentials already verified; it touches nothing of the server's state,
// and what an admitted request does is the admin API's. It imports
// httpapi, nothing else of the mock server, and mockrules for the names
// it takes.
package access

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/mockrules"
)

// The admin routes' Host check, against DNS rebinding: a web
// page on another site can re-point its own name (evil.example) at
// 127.0.0.1 once the page has loaded, and its later requests to
// http://evil.example:8080/_mock/… then reach the mock and are, to the
// browser, same-origin: the cross-site check (CheckCrossSite) lets them
// through, and the page may read what they answer (GET /_mock/state holds
// the webhooks' secrets). What such a request cannot hide is its Host
// header, the attacker's own name. So every /_mock/ route (the dashboard
// included) answers only to a Host that is an IP address, localhost or a
// name under .localhost (names no site can point at this machine for a
// browser), or a name the user allowed (mockserver.WithAdminHosts, the command's
// -admin-host), as Vite's server.allowedHosts and webpack-dev-server's
// allowedHosts do. The /v1 API needs a key, which such a page does not
// have, and is not checked.

// Hosts are the names the admin routes answer to besides IP addresses,
// localhost and names under .localhost: those the user allowed,
// lowercase and without a trailing dot.
type Hosts []string

// NewHosts normalises names, which mockrules.AdminHost has accepted.
func NewHosts(names []string) Hosts {
	out := make(Hosts, 0, len(names))
	for _, n := range names {
		out = append(out, strings.TrimSuffix(strings.ToLower(n), "."))
	}
	return out
}

// HostName is the name of a Host header without its port (and an IPv6
// address without its brackets), lowercase, without a trailing dot.
func HostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else if len(host) > 1 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1]
	}
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// Allows reports whether the admin routes answer to a request with this
// Host header. An empty one (an HTTP/1.0 request) is allowed: every
// browser sends a Host.
func (hs Hosts) Allows(host string) bool {
	if host == "" {
		return true
	}
	name := HostName(host)
	if _, err := netip.ParseAddr(name); err == nil {
		return true
	}
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return true
	}
	for _, n := range hs {
		if name == n || (n[0] == '.' && (name == n[1:] || strings.HasSuffix(name, n))) {
			return true
		}
	}
	return false
}

// Check refuses an admin request whose Host the admin routes do not
// answer to, saying which flag (or option) allows it.
func (hs Hosts) Check(r *http.Request) *httpapi.Error {
	if hs.Allows(r.Host) {
		return nil
	}
	name := HostName(r.Host)
	const why = "the admin routes (/_mock/ and the dashboard) answer only to IP addresses, localhost, names under .localhost " +
		"and the names the mock was started with, so that a web page on another site cannot reach them by pointing its own name " +
		"at this machine (DNS rebinding)"
	if len(name) > 100 || mockrules.AdminHost(name) != nil {
		return &httpapi.Error{Status: http.StatusForbidden, Type: httpapi.TypeForbidden,
			Message: "the request's Host is not a host name the admin routes answer to: " + why}
	}
	return &httpapi.Error{Status: http.StatusForbidden, Type: httpapi.TypeForbidden,
		Message: "Host " + strconv.Quote(name) + " is not allowed: " + why + ". If you reach the mock by this name, start it with " +
			"-admin-host " + name + " (in Go: mockserver.WithAdminHosts(" + strconv.Quote(name) + "))"}
}
