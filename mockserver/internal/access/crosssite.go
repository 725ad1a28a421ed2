package access

import (
	"net/http"
	"slices"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
)

// The admin routes' cross-site check. A page on another site
// that the user visits can make the user's browser send requests to the
// mock: a form or fetch that resets it or redelivers, and, as cheaply, an
// <img> or EventSource that reads GET /_mock/state (every webhook secret,
// the whole state serialised again on each request) or holds the
// stream's slots. The browser hides the answers of a read from that page,
// but not its cost, and the request itself is the harm of a write. So
// every /_mock/ request, reads, the dashboard and its stream included,
// that a browser sends from a page of another origin is a 403. The check
// is http.CrossOriginProtection's (Sec-Fetch-Site, and without it Origin
// against Host), asked about every method: a request with neither header
// (curl, Go's client, a test) is no browser's cross-site request and
// passes.
//
// One request passes from anywhere: a top-level navigation to the
// dashboard's page (a link to http://127.0.0.1:8080/_mock/ui/ followed
// from a chat or a wiki), which only loads the page in a tab of its own.
// The page then reads and acts from its own origin, which passes; its
// files, stream and API calls are checked as any other request, and no
// other site may frame it (frame-ancestors 'none').

// crossOrigin is the check, with the standard library's rules.
var crossOrigin = http.NewCrossOriginProtection()

// dashboardPages are the paths a navigation from another site may open.
var dashboardPages = []string{"/_mock/ui/", "/_mock/ui"}

// CheckCrossSite refuses an admin request a browser sent from a page of
// another origin.
func CheckCrossSite(r *http.Request) *httpapi.Error {
	if isDashboardNavigation(r) {
		return nil
	}
	// http.CrossOriginProtection passes every GET, HEAD and OPTIONS, so
	// it is asked about the same request as a POST: one rule for all.
	asWrite := *r // a shallow copy: Check reads only the method and headers
	asWrite.Method = http.MethodPost
	if err := crossOrigin.Check(&asWrite); err != nil {
		return &httpapi.Error{Status: http.StatusForbidden, Type: httpapi.TypeForbidden,
			Message: "cross-site request refused: the admin routes serve the dashboard on their own origin and programs (curl, a test), " +
				"never a page of another site, which could read or change the mock through your browser (" + err.Error() + ")"}
	}
	return nil
}

// isDashboardNavigation reports whether r is a browser's top-level
// navigation to the dashboard's page: a GET (or HEAD) of a document in a
// tab, as Sec-Fetch-Mode and Sec-Fetch-Dest say.
func isDashboardNavigation(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && slices.Contains(dashboardPages, r.URL.Path) &&
		r.Header.Get("Sec-Fetch-Mode") == "navigate" && r.Header.Get("Sec-Fetch-Dest") == "document"
}
