package mockserver

import (
	"testing"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/dashboard"
)

// TestDashboardErrorsCarryCSP: every answer under /_mock/ui/, its errors
// included (an unknown file, a path with a slash more, a method it does
// not serve, a malformed query, a refused Host), carries the dashboard's
// Content-Security-Policy and its other security headers: an error page
// is a page too.
func TestDashboardErrorsCarryCSP(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	for _, tc := range []struct {
		method, path string
		header       map[string]string
		status       int
	}{
		{"GET", "/_mock/ui/missing.js", nil, 404},
		{"GET", "/_mock/ui/a/b.js", nil, 404},
		{"GET", "/_mock/ui//app.js", nil, 404},
		{"POST", "/_mock/ui/", nil, 405},
		{"GET", "/_mock/ui/?a=%zz", nil, 400},
		{"GET", "/_mock/ui/app.js", map[string]string{"Host": "evil.example:8080"}, 403},
		{"GET", "/_mock/ui", map[string]string{"Host": "evil.example"}, 403},
	} {
		r := do(t, ts, call{method: tc.method, path: tc.path, key: "-", header: tc.header})
		if r.Status != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, r.Status, tc.status)
		}
		if got := r.Header.Get("Content-Security-Policy"); got != dashboard.ContentSecurityPolicy {
			t.Errorf("%s %s (%d): Content-Security-Policy %q", tc.method, tc.path, r.Status, got)
		}
		if r.Header.Get("X-Content-Type-Options") != "nosniff" || r.Header.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s %s (%d): headers %v", tc.method, tc.path, r.Status, r.Header)
		}
	}
}
