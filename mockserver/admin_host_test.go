package mockserver

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/access"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
)

// TestAdminHostRebinding: a DNS rebinding attack, as the browser sends
// it: the hostile page's own name in Host, and, to the browser, the same
// origin (Origin and Sec-Fetch-Site say so, so the cross-origin check
// passes it). Every /_mock/ route refuses it with a 403 that changes
// nothing and names the flag that would allow the name; /v1 is not
// checked; the names the mock always answers to, and those it was
// started with, pass.
func TestAdminHostRebinding(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t, WithAdminHosts("mock", ".dev.example.com"))
	registerHook(t, ts, "https://hooks.example.com/in", "whsec_do_not_leak", contextsvc.EventContextCreated)
	c := create(t, ts, `{"name":"Secret plans"}`)
	rebound := func(host string) map[string]string {
		return map[string]string{"Host": host, "Origin": "http://" + host, "Sec-Fetch-Site": "same-origin"}
	}
	for _, tc := range []struct {
		method, path, body string
	}{
		{"GET", "/_mock/state", ""},
		{"POST", "/_mock/reset", ""},
		{"POST", "/_mock/faults", `{"status":500}`},
		{"PUT", "/_mock/state", `{"version":1}`},
		{"GET", "/_mock/contexts/" + c.ID, ""},
		{"GET", "/_mock/ui/", ""},
		{"GET", "/_mock/ui/app.js", ""},
		{"GET", "/_mock/stream", ""},
		{"GET", "/_mock/no-such-route", ""},
	} {
		for _, host := range []string{"evil.example:8080", "evil.example", "EVIL.example.:80", "mock.evil.example", "evil-dev.example.com", "dev.example.com.evil.example"} {
			r := do(t, ts, call{method: tc.method, path: tc.path, body: tc.body, key: "-", header: rebound(host)})
			if typ, _ := r.errorOf(t); r.Status != http.StatusForbidden || typ != "forbidden" {
				t.Errorf("%s %s with Host %s: %d %s, want a 403", tc.method, tc.path, host, r.Status, r.Body)
				continue
			}
			var e httpapi.ErrorBody
			r.json(t, &e)
			name := access.HostName(host)
			if want := "-admin-host " + name; !strings.Contains(e.Error.Message, want) || !strings.Contains(e.Error.Message, "DNS rebinding") {
				t.Errorf("%s %s with Host %s: the message does not say %q and why: %s", tc.method, tc.path, host, want, e.Error.Message)
			}
			if strings.Contains(string(r.Body), "whsec_do_not_leak") || strings.Contains(string(r.Body), "Secret plans") {
				t.Errorf("%s %s with Host %s: the refusal leaks the state: %s", tc.method, tc.path, host, r.Body)
			}
		}
	}
	if len(ts.Webhooks()) != 1 || len(ts.Faults()) != 0 {
		t.Errorf("refused requests changed the mock: %d webhooks, %d faults", len(ts.Webhooks()), len(ts.Faults()))
	}
	// The /v1 API is not the admin routes': its key protects it.
	if r := do(t, ts, call{method: "GET", path: "/v1/contexts/" + c.ID, header: map[string]string{"Host": "evil.example:8080"}}); r.Status != 200 {
		t.Errorf("/v1 with another Host: %d %s", r.Status, r.Body)
	}
	// A Host that is no host name is refused, and no flag is suggested
	// for it.
	r := do(t, ts, call{method: "GET", path: "/_mock/summary", key: "-", header: map[string]string{"Host": "ev!l.example"}})
	if r.Status != http.StatusForbidden || strings.Contains(string(r.Body), "ev!l") || strings.Contains(string(r.Body), "-admin-host") {
		t.Errorf("a Host that is no name: %d %s", r.Status, r.Body)
	}

	for _, host := range []string{
		strings.TrimPrefix(ts.HTTP.URL, "http://"), "127.0.0.1", "10.1.2.3:8080", "[::1]:8080", "[::1]", "[fe80::1]:80",
		"localhost", "localhost:8080", "LocalHost:1", "localhost.", "app.localhost:5173",
		"mock", "MOCK:8080", "dev.example.com", "api.dev.example.com:443",
	} {
		r := do(t, ts, call{method: "GET", path: "/_mock/state", key: "-", header: rebound(host)})
		if r.Status != 200 || !strings.Contains(string(r.Body), "whsec_do_not_leak") {
			t.Errorf("GET /_mock/state with Host %s: %d %.200s", host, r.Status, r.Body)
		}
	}
	if r := do(t, ts, call{method: "POST", path: "/_mock/reset", key: "-", header: rebound("mock:8080")}); r.Status != 204 {
		t.Errorf("POST /_mock/reset with an allowed Host: %d %s", r.Status, r.Body)
	}
}

// TestAdminHostEmpty: a request without a Host (HTTP/1.0; no browser sends
// one) is served.
func TestAdminHostEmpty(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	req := httptest.NewRequest("GET", "/_mock/clock", nil)
	req.Host = ""
	rec := httptest.NewRecorder()
	ts.ServeHTTP(rec, req)
	if rec.Code != 200 {
		t.Errorf("no Host: %d %s", rec.Code, rec.Body)
	}
}

// TestAdminHostOption: WithAdminHosts refuses a name that is no host
// name (mockrules.AdminHost holds the rule).
func TestAdminHostOption(t *testing.T) {
	t.Parallel()
	if s, err := Open(WithAdminHosts("mock", "mock:8080")); !errors.Is(err, ErrInvalidOption) || s != nil ||
		!strings.Contains(err.Error(), "without a port") {
		t.Errorf("Open took an admin host with a port: %v", err)
	}
}
