package mockserver

import (
	_ "embed"
	"fmt"
	"io"
	"strings"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/access"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/adminapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/mockrules"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/service"
)

// This file is the admin routes' options and their wiring: the admin API
// (/_mock/, the dashboard with it) is the adminapi package's, admitted by
// the access package's checks, over the service's parts and actions.

// openAPIDocument is the OpenAPI 3.0.3 description of every endpoint of
// the mock server, the contract in machine-readable form.
//
//go:embed openapi.yaml
var openAPIDocument []byte

// OpenAPI returns the embedded OpenAPI document (a copy).
func OpenAPI() []byte { return append([]byte(nil), openAPIDocument...) }

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
// many times; a name that is not such a host name makes Open return an
// error wrapping [ErrInvalidOption] that says why.
//
// A test that calls [Server.ServeHTTP] with httptest.NewRequest, whose
// Host is example.com, sets the request's Host to 127.0.0.1 for the
// admin routes ([NewTestServer]'s requests need nothing: they go to
// 127.0.0.1).
func WithAdminHosts(names ...string) Option {
	return func(cf *config) error {
		for _, n := range names {
			if err := mockrules.AdminHost(n); err != nil {
				return invalidOption("WithAdminHosts: %s", err)
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
//
// Deprecated: it was made for the command contextsvc-mock, which checks
// its flags with rules of its own now. A program has no need of it:
// [Open] refuses a name [WithAdminHosts] cannot take, with an error
// wrapping [ErrInvalidOption] that says why.
func ValidAdminHost(name string) error {
	if err := mockrules.AdminHost(name); err != nil {
		return fmt.Errorf("mockserver: %w", err)
	}
	return nil
}

// WithAdminAuth makes the admin routes (/_mock/, the dashboard, its
// stream and its actions included) ask for a user name and password:
// HTTP Basic, which browsers prompt for and send with the page's every
// request, and curl sends with -u USER:PASSWORD. htpasswd is the text of
// an htpasswd file (the command's -admin-auth-file): one "user:hash" a
// line, each hash bcrypt's ($2a$, $2b$ or $2y$, cost 4 to 14) as the
// command's -hash-password USER, `htpasswd -nbBC 10 USER PASSWORD` or
// golang.org/x/crypto/bcrypt writes it; empty lines and lines starting
// with '#' are skipped. At most 1,000 users, 1 MiB. The server keeps the
// hashes, never a password.
//
// A request without credentials, or with wrong ones, is a 401 with
// WWW-Authenticate: Basic realm="contextsvc-mock admin" and changes
// nothing. Credentials are compared in constant time, and a check that
// succeeds is remembered (by a keyed hash), so only a new or wrong
// password costs a bcrypt check; those run one at a time, at most 20 a
// second, and past 16 waiting a request is a 429 with Retry-After. Use a
// cost of 10 or more: the cost is what a guess costs. The /v1 API keeps
// its bearer keys and is not affected; nor is [WithAdmin](false), which
// turns the admin routes off.
//
// htpasswd is read when WithAdminAuth is called. A text that is not such
// lines (or a nil htpasswd) makes [Open] return an error wrapping
// [ErrInvalidOption] that names the line at fault and what is wrong with
// it (never a hash).
func WithAdminAuth(htpasswd io.Reader) Option {
	var users []access.User
	var err error
	if htpasswd != nil {
		users, err = access.ParseUsers(htpasswd)
	}
	return func(cf *config) error {
		switch {
		case htpasswd == nil:
			return invalidOption("WithAdminAuth(nil): give the text of an htpasswd file")
		case err != nil:
			return invalidOption("WithAdminAuth: %s", strings.TrimPrefix(err.Error(), "mockserver: "))
		}
		// A checker of its own for each server the option is given to.
		cf.adminAuth = access.NewAuth(users)
		return nil
	}
}

// ValidAdminUser reports whether name can be a user of [WithAdminAuth]'s
// file (the command's -hash-password USER): 1 or more printable
// characters of valid UTF-8, without ':' (which ends the name in a line).
//
// Deprecated: it was made for the command contextsvc-mock, which checks
// its flags with rules of its own now. A program has no need of it:
// [Open] refuses a [WithAdminAuth] file naming such a user, with an error
// wrapping [ErrInvalidOption] that names the line.
func ValidAdminUser(name string) error {
	if err := mockrules.AdminUser(name); err != nil {
		return fmt.Errorf("mockserver: %w", err)
	}
	return nil
}

// MaskToken returns an API key's token as the dashboard and the admin API
// show it: its first characters and its last, never the whole of it. A
// token of 16 characters or more shows its first 7 and last 4 ("sk_test…
// 3f9a"); a shorter one shows at most a third of its start and a quarter
// of its end, and one of fewer than 3 characters shows nothing but "…".
// GET /_mock/accounts answers the tokens masked so; a program that holds a
// key finds its account there by comparing its own key, masked with this.
func MaskToken(token string) string { return mockrules.MaskToken(token) }

// newAdmin makes the admin API over svc, with cf's admin options.
func newAdmin(svc *service.Service, cf *config) *adminapi.Handler {
	adv, tells := clockAdvancer(cf.clock)
	return adminapi.New(adminapi.Config{
		Service:           svc,
		Advancer:          adv,
		ClockTellsChanges: tells,
		OpenAPI:           openAPIDocument,
		Hosts:             access.NewHosts(cf.adminHosts),
		Auth:              cf.adminAuth,
	})
}
