package mockserver

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
)

// This file is the admin routes' Host check, against DNS rebinding: a web
// page on another site can re-point its own name (evil.example) at
// 127.0.0.1 once the page has loaded, and its later requests to
// http://evil.example:8080/_mock/… then reach the mock and are, to the
// browser, same-origin: the cross-origin check (handleAdmin) lets them
// through, and the page may read what they answer (GET /_mock/state holds
// the webhooks' secrets). What such a request cannot hide is its Host
// header, the attacker's own name. So every /_mock/ route (the dashboard
// included) answers only to a Host that is an IP address, localhost or a
// name under .localhost (names no site can point at this machine for a
// browser), or a name the user allowed (WithAdminHosts, the command's
// -admin-host), as Vite's server.allowedHosts and webpack-dev-server's
// allowedHosts do. The /v1 API needs a key, which such a page does not
// have, and is not checked.

// maxAdminHostLen is the longest admin host name (a DNS name's limit).
const maxAdminHostLen = 253

// WithAdminHosts lets the admin routes (/_mock/, the dashboard included)
// answer to requests whose Host is one of names, besides those they
// always answer to: an IP address (any port), "localhost" and names
// ending in ".localhost". Give the names you reach the mock by, such as a
// Docker Compose service name ("mock") or a machine's name on your
// network; a name starting with "." allows itself and every name under it
// (".dev.example.com"). Names are compared without case and without a
// port. Any other Host gets a 403: a web page on another site could
// otherwise point its own name at the mock's address (DNS rebinding) and
// read and change the mock through the visitor's browser. It may be given
// many times; a name that [ValidAdminHost] refuses makes Open return an
// error wrapping [ErrInvalidOption].
//
// A test that calls [Server.ServeHTTP] with httptest.NewRequest, whose
// Host is example.com, sets the request's Host to 127.0.0.1 for the
// admin routes ([NewTestServer]'s requests need nothing: they go to
// 127.0.0.1).
func WithAdminHosts(names ...string) Option {
	return func(cf *config) error {
		for _, n := range names {
			if err := ValidAdminHost(n); err != nil {
				return invalidOption("WithAdminHosts: %s", strings.TrimPrefix(err.Error(), "mockserver: "))
			}
		}
		cf.adminHosts = append(cf.adminHosts, names...)
		return nil
	}
}

// ValidAdminHost reports whether name can be given to [WithAdminHosts]
// (the command's -admin-host): a host name without a port, 1 to 253
// characters of A-Z, a-z, 0-9, '-', '_' and '.', optionally starting with
// "." (the name and every name under it).
func ValidAdminHost(name string) error {
	bare := strings.TrimPrefix(name, ".")
	if bare == "" || len(name) > maxAdminHostLen {
		return fmt.Errorf("mockserver: an admin host must be a host name of 1 to %d characters, got %q", maxAdminHostLen, name)
	}
	for i := 0; i < len(bare); i++ {
		c := bare[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.':
		case c == ':':
			return fmt.Errorf("mockserver: admin host %q: give the name without a port (every port is allowed)", name)
		default:
			return fmt.Errorf("mockserver: admin host %q: a host name holds only A-Z, a-z, 0-9, '-', '_' and '.' (and may start with '.')", name)
		}
	}
	return nil
}

// adminHosts are the names WithAdminHosts allowed, lowercase and without a
// trailing dot.
type adminHosts []string

// newAdminHosts normalises names, which WithAdminHosts has checked.
func newAdminHosts(names []string) adminHosts {
	out := make(adminHosts, 0, len(names))
	for _, n := range names {
		out = append(out, strings.TrimSuffix(strings.ToLower(n), "."))
	}
	return out
}

// hostName is the name of a Host header without its port (and an IPv6
// address without its brackets), lowercase, without a trailing dot.
func hostName(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	} else if len(host) > 1 && host[0] == '[' && host[len(host)-1] == ']' {
		host = host[1 : len(host)-1]
	}
	return strings.TrimSuffix(strings.ToLower(host), ".")
}

// allows reports whether the admin routes answer to a request with this
// Host header. An empty one (an HTTP/1.0 request) is allowed: every
// browser sends a Host.
func (hs adminHosts) allows(host string) bool {
	if host == "" {
		return true
	}
	name := hostName(host)
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

// isAdminPath reports whether p is under /_mock/.
func isAdminPath(p string) bool { return p == "/_mock" || strings.HasPrefix(p, "/_mock/") }

// checkAdminHost refuses an admin request whose Host the admin routes do
// not answer to, saying which flag (or option) allows it.
func (s *Server) checkAdminHost(r *http.Request) *httpapi.Error {
	if s.adminHosts.allows(r.Host) {
		return nil
	}
	name := hostName(r.Host)
	const why = "the admin routes (/_mock/ and the dashboard) answer only to IP addresses, localhost, names under .localhost " +
		"and the names the mock was started with, so that a web page on another site cannot reach them by pointing its own name " +
		"at this machine (DNS rebinding)"
	if len(name) > 100 || ValidAdminHost(name) != nil {
		return &httpapi.Error{Status: http.StatusForbidden, Type: httpapi.TypeForbidden,
			Message: "the request's Host is not a host name the admin routes answer to: " + why}
	}
	return &httpapi.Error{Status: http.StatusForbidden, Type: httpapi.TypeForbidden,
		Message: "Host " + strconv.Quote(name) + " is not allowed: " + why + ". If you reach the mock by this name, start it with " +
			"-admin-host " + name + " (in Go: mockserver.WithAdminHosts(" + strconv.Quote(name) + "))"}
}
