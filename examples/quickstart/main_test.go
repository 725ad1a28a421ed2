package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/contextsvc/contextsvc-go/mockserver"
)

// TestEmbedded runs the quickstart as `go run ./examples/quickstart -pdf
// FILE` does and checks that the output shows every step and every event.
// It waits for the deliveries as long as they take: how fast they arrive
// depends on the machine, not on the code.
func TestEmbedded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pdfPath := filepath.Join(dir, "runbook.pdf")
	var out strings.Builder
	if err := run(t.Context(), &out, config{pdfPath: pdfPath}); err != nil {
		t.Fatalf("run: %v\noutput:\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{
		"Mock server   http://127.0.0.1:",
		"Receiver      http://127.0.0.1:",
		"Registered webhook wh_",
		"for all 8 event types",
		"1. Created   ctx_",
		"2. Updated   the content: version 2",
		"3. Updated   the name and tags: version 3",
		"4. Listed    1 context(s) tagged quickstart",
		"5. Versions",
		"     v1 ", "     v2 ", "     v3 ",
		"6. Exported  Markdown: ",
		"7. Exported  PDF: ",
		"8. Deleted   ctx_",
		"All 9 events delivered, verified and handled once each",
		"Done in ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	// Each event, as the receiver verified it: create (2 events), two
	// updates (2 each), two exports, delete.
	for typ, n := range map[string]int{
		"context.created ": 1, "context.updated ": 2, "context.version.created ": 3,
		"export.completed ": 2, "context.deleted ": 1,
	} {
		if got := strings.Count(text, "<- webhook verified: "+typ); got != n {
			t.Errorf("%d %q events shown, want %d:\n%s", got, typ, n, text)
		}
	}
	// The content update changed the Deploy section and added Contacts.
	if !regexp.MustCompile(`context\.updated\s+evt_\w+  ctx_\w+ v2: sections modified \[Deploy Contacts\], words \+\d+`).MatchString(text) {
		t.Errorf("the content update's event does not show its sections and word delta:\n%s", text)
	}
	if !strings.Contains(text, "v3: sections modified [], words +0") {
		t.Errorf("the name/tags update's event does not show an empty change:\n%s", text)
	}

	// The PDF is where the output says, as large as it says.
	m := regexp.MustCompile(`PDF: (\d+) bytes, written to (\S+)`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no PDF line:\n%s", text)
	}
	fi, err := os.Stat(m[2])
	if err != nil {
		t.Fatalf("the PDF: %v", err)
	}
	if size, _ := strconv.ParseInt(m[1], 10, 64); fi.Size() != size || size < 100 {
		t.Errorf("PDF %s is %d bytes, output says %s", m[2], fi.Size(), m[1])
	}
	if m[2] != pdfPath {
		t.Errorf("PDF written to %s, want %s", m[2], pdfPath)
	}
}

// TestLeavesNoFile: without -pdf, the PDF is exported and counted but not
// written anywhere.
func TestLeavesNoFile(t *testing.T) {
	t.Parallel()
	ts := mockserver.NewTestServer(t)
	var out strings.Builder
	if err := run(t.Context(), &out, config{baseURL: ts.URL, apiKey: ts.APIKey}); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if !regexp.MustCompile(`7\. Exported  PDF: \d+ bytes \(Quickstart runbook \(reviewed\)-v3\.pdf; not saved: give -pdf FILE to keep it\)`).MatchString(out.String()) ||
		strings.Contains(out.String(), "written to") {
		t.Errorf("the output does not say the PDF was only counted:\n%s", out.String())
	}
}

// TestRemote runs the quickstart against a server given by base URL and key,
// as CONTEXTSVC_BASE_URL and CONTEXTSVC_API_KEY do: without a receiver URL it
// registers no webhook and says why.
func TestRemote(t *testing.T) {
	t.Parallel()
	ts := mockserver.NewTestServer(t)
	var out strings.Builder
	err := run(context.Background(), &out, config{baseURL: ts.URL, apiKey: ts.APIKey})
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{
		"Server        " + ts.URL,
		"Webhooks      not registered: a server elsewhere cannot reach a receiver on this machine.",
		"-receiver-url", "1. Created", "8. Deleted",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, ts.APIKey) {
		t.Errorf("the output shows the API key:\n%s", text)
	}
	if len(ts.Webhooks()) != 0 {
		t.Errorf("webhooks registered without a receiver URL: %+v", ts.Webhooks())
	}
	if n := len(ts.Events()); n != 9 {
		t.Errorf("the remote server recorded %d events, want the 9 of the steps", n)
	}

	// With a receiver URL and its secret, the webhook is registered there.
	out.Reset()
	err = run(context.Background(), &out, config{baseURL: ts.URL, apiKey: ts.APIKey,
		receiverURL: "http://127.0.0.1:9/hook", webhookSecret: "whsec_remote"})
	if err != nil {
		t.Fatalf("run with a receiver: %v\n%s", err, out.String())
	}
	m := regexp.MustCompile(`Registered webhook (wh_\w+) for all 8 event types`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no webhook registered:\n%s", out.String())
	}
	// On a mock server the run removes it through the admin API at the end.
	if !strings.Contains(out.String(), "Removed webhook "+m[1]+" (through the mock server's admin API)") {
		t.Errorf("the output does not say the webhook was removed:\n%s", out.String())
	}
	if wh := ts.Webhooks(); len(wh) != 0 {
		t.Errorf("webhooks %+v left registered on the mock", wh)
	}
	if strings.Contains(out.String(), "whsec_remote") {
		t.Errorf("the output shows the webhook secret:\n%s", out.String())
	}
}

// TestRemoteWebhookStays: on a server whose admin API does not delete the
// webhook (a deployment answers its route 404; a mock with admin
// credentials, 401), the webhook stays and the output says how to remove it.
func TestRemoteWebhookStays(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		status int
		want   string
	}{
		{"deployment", http.StatusNotFound, "stays registered: the /v1 API cannot delete a webhook."},
		{"mock with admin credentials", http.StatusUnauthorized, "remove it with: curl -u USER -X DELETE http://"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := mockserver.NewTestServer(t)
			target, err := url.Parse(ts.URL)
			if err != nil {
				t.Fatal(err)
			}
			target.Path = "" // ts.URL ends in /v1, as a base URL does
			proxy := httputil.NewSingleHostReverseProxy(target)
			front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasPrefix(r.URL.Path, "/_mock/") {
					http.Error(w, "no", tc.status)
					return
				}
				proxy.ServeHTTP(w, r)
			}))
			defer front.Close()
			var out strings.Builder
			err = run(context.Background(), &out, config{baseURL: front.URL + "/v1", apiKey: ts.APIKey,
				receiverURL: "http://127.0.0.1:9/hook", webhookSecret: "whsec_remote"})
			if err != nil {
				t.Fatalf("run: %v\n%s", err, out.String())
			}
			if !strings.Contains(out.String(), tc.want) || strings.Contains(out.String(), "Removed webhook") {
				t.Errorf("the output does not say the webhook stays (%q):\n%s", tc.want, out.String())
			}
			if wh := ts.Webhooks(); len(wh) != 1 {
				t.Errorf("webhooks %+v, want the one registered", wh)
			}
		})
	}
}

func TestRefusesHalfAConfiguration(t *testing.T) {
	t.Parallel()
	for _, cfg := range []config{
		{baseURL: "http://127.0.0.1:9/v1"},
		{apiKey: "sk_test_x"},
		{baseURL: "http://127.0.0.1:9/v1", apiKey: "sk_test_x", receiverURL: "https://example.com/hook"},
	} {
		var out strings.Builder
		if err := run(context.Background(), &out, cfg); err == nil {
			t.Errorf("run(%+v) = nil, want an error", cfg)
		} else if strings.Contains(err.Error(), "sk_test_x") {
			t.Errorf("the error shows the key: %v", err)
		}
	}
}
