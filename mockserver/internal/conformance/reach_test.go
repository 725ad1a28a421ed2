package conformance_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/contextsvc/contextsvc-go/mockserver"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/conformance"
)

// closedPort returns a loopback address nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// noDNS is a client whose resolver has no server: every host name fails
// to resolve, as on a machine whose DNS does not know the host, without
// asking the network.
func noDNS() *http.Client {
	resolver := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS server in this test")
	}}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = (&net.Dialer{Resolver: resolver}).DialContext
	return &http.Client{Transport: tr}
}

// TestRunUnreachable runs against servers that cannot be reached: the
// report says why, once, runs no check (each skipped, none passed), and
// does not pass; its JSON lists are [] where empty.
func TestRunUnreachable(t *testing.T) {
	t.Parallel()
	tlsServer := httptest.NewTLSServer(mockserver.New())
	t.Cleanup(tlsServer.Close)
	plain := mockserver.NewTestServer(t)
	for _, tt := range []struct {
		name, baseURL string
		client        *http.Client
		reason, says  string
	}{
		{"a closed port", "http://" + closedPort(t) + "/v1", nil, conformance.ReasonConnectionRefused, "connection refused: nothing listens at 127.0.0.1:"},
		{"a host name that does not resolve", "http://api.contextsvc.invalid/v1", noDNS(), conformance.ReasonDNS, `the host name "api.contextsvc.invalid" does not resolve`},
		{"a certificate not trusted", tlsServer.URL + "/v1", nil, conformance.ReasonTLS, "TLS: the server's certificate is not trusted"},
		{"https to a server without TLS", strings.Replace(plain.URL, "http://", "https://", 1), nil, conformance.ReasonTLS, "does not speak TLS"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rep := run(t, conformance.Config{BaseURL: tt.baseURL, APIKey: writeKey, ReadKey: readKey, Document: mockserver.OpenAPI(), HTTPClient: tt.client})
			txt, js := text(t, rep)
			if rep.Unreachable == nil || rep.Unreachable.Reason != tt.reason || !strings.Contains(rep.Unreachable.Message, tt.says) {
				t.Fatalf("unreachable %+v, want %s saying %q:\n%s", rep.Unreachable, tt.reason, tt.says, txt)
			}
			if rep.Passed() || rep.Count(conformance.Passed) != 0 || rep.Count(conformance.Failed) != 0 || rep.Count(conformance.Skipped) != len(rep.Checks) || len(rep.Checks) < 20 {
				t.Errorf("passed %t, %d passed, %d failed, %d skipped of %d", rep.Passed(), rep.Count(conformance.Passed),
					rep.Count(conformance.Failed), rep.Count(conformance.Skipped), len(rep.Checks))
			}
			if rep.Requests != 1 {
				t.Errorf("%d requests sent to a server that cannot be reached, want the one that found it out", rep.Requests)
			}
			if strings.Count(txt, "cannot reach the server: "+rep.Unreachable.Message) != 1 || strings.Contains(txt, "PASS") || strings.Contains(txt, "FAIL") {
				t.Errorf("the report does not say once that the server cannot be reached, or shows checks:\n%s", txt)
			}
			if strings.Index(txt, "cannot reach") > strings.Index(txt, "No check ran") {
				t.Errorf("the report says why after the outcome:\n%s", txt)
			}
			var doc struct {
				Passed      bool
				Unreachable struct{ Reason string }
				Coverage    []struct{ Statuses json.RawMessage }
				Tolerance   json.RawMessage
				LeftBehind  json.RawMessage
			}
			if err := json.Unmarshal([]byte(js), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Passed || doc.Unreachable.Reason != tt.reason || len(doc.Coverage) == 0 || string(doc.Tolerance) != "[]" || string(doc.LeftBehind) != "[]" {
				t.Errorf("JSON report:\n%s", js)
			}
			for _, cv := range doc.Coverage {
				if string(cv.Statuses) != "[]" {
					t.Errorf("an operation without requests has statuses %s, want []", cv.Statuses)
				}
			}
		})
	}
}

// TestRunNoAnswers runs against a server that answers the first request
// and then closes every connection unanswered: each check that sent
// requests fails with "no answer", and the checks over every answer,
// which have none to check, are skipped saying so, never passed.
func TestRunNoAnswers(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			http.Error(w, `{"error":{"type":"unauthorized"}}`, http.StatusUnauthorized)
			return
		}
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
	}))
	t.Cleanup(hs.Close)
	rep := run(t, conformance.Config{BaseURL: hs.URL + "/v1", APIKey: writeKey, ReadOnly: true, Document: mockserver.OpenAPI()})
	txt, _ := text(t, rep)
	if rep.Unreachable != nil || rep.Passed() || rep.Count(conformance.Passed) != 0 {
		t.Fatalf("unreachable %+v, passed %t, %d checks passed:\n%s", rep.Unreachable, rep.Passed(), rep.Count(conformance.Passed), txt)
	}
	for _, c := range rep.Checks {
		switch c.ID {
		case "headers.request-id", "headers.rate-limit":
			if c.Status != conformance.Skipped || !strings.Contains(c.Note, "answer came to check") {
				t.Errorf("%s: %s (%s), want skipped with nothing to check", c.ID, c.Status, c.Note)
			}
		case "auth", "contexts.list":
			if c.Status != conformance.Failed || c.Differences[0].Kind != conformance.KindNoAnswer {
				t.Errorf("%s: %s, want failed with no answer", c.ID, c.Status)
			}
		}
	}
}
