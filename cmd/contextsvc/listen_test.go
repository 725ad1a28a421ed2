package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// appDelivery is what the app behind listen received.
type appDelivery struct {
	event    *contextsvc.Event // nil when the signature did not verify
	header   http.Header
	path     string
	verified error
}

// newApp starts the app listen forwards to: it verifies each delivery
// with secret, as a real receiver does, and answers status (401 when the
// signature does not verify) with a body of its own.
func newApp(t *testing.T, secret string, status *atomic.Int32) (*httptest.Server, <-chan appDelivery) {
	t.Helper()
	got := make(chan appDelivery, 16)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ev, err := contextsvc.ConstructEvent(body, r.Header.Get("X-Service-Signature"), secret)
		got <- appDelivery{event: ev, header: r.Header.Clone(), path: r.URL.Path, verified: err}
		w.Header().Set("X-App", "yes")
		if err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		w.WriteHeader(int(status.Load()))
		io.WriteString(w, "the app's answer")
	}))
	t.Cleanup(app.Close)
	return app, got
}

// TestListen forwards deliveries to the app as they came, prints a line
// for each, passes the app's answer back to the service, and removes its
// webhook on Ctrl-C.
func TestListen(t *testing.T) {
	t.Parallel()
	c, ts := newCLI(t)
	var status atomic.Int32
	status.Store(http.StatusOK)
	app, got := newApp(t, "whsec_listen_test", &status)
	b := c.background("listen", "--forward-to", app.URL+"/hooks", "--secret", "whsec_listen_test", "--event", "context.created", "--event", "context.updated")
	b.wait("Ready.")
	hooks := ts.Webhooks()
	if len(hooks) != 1 || len(hooks[0].Events) != 2 || !strings.HasPrefix(hooks[0].URL, "http://127.0.0.1:") {
		t.Fatalf("webhooks: %+v", hooks)
	}
	start := b.out.String()
	for _, want := range []string{"Webhook " + hooks[0].ID + " registered for context.created, context.updated\n", "Signing secret: whsec_listen_test (--secret)\n",
		"to " + app.URL + "/hooks\n", "Ctrl-C removes the webhook"} {
		if !strings.Contains(start, want) {
			t.Errorf("the start lacks %q:\n%s", want, start)
		}
	}

	// A delivery the app takes: the app gets it signed with the secret,
	// its headers kept; listen prints its line.
	id := strings.TrimSpace(c.ok("contexts", "create", "--name", "Heard", "-q"))
	d := <-got
	if d.verified != nil || d.event.Type != contextsvc.EventContextCreated || d.path != "/hooks" ||
		d.header.Get("X-Service-Delivery") == "" || d.header.Get("X-Service-Delivery-Attempt") != "1" || d.header.Get("X-Service-Event") != "context.created" {
		t.Fatalf("the app got %+v", d)
	}
	if data, _ := d.event.ContextCreated(); data.ContextID != id {
		t.Errorf("the event is about %s, want %s", data.ContextID, id)
	}
	b.wait(d.event.ID + "  attempt 1  signature verified  200 OK  ")
	if !regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  context\.created  ` + d.event.ID + `  attempt 1  signature verified  200 OK  \S+$`).MatchString(b.out.String()) {
		t.Errorf("the delivery's line:\n%s", b.out)
	}

	// The app fails the next one: its status and body are the delivery's
	// answer, so the service will retry it.
	status.Store(http.StatusServiceUnavailable)
	c.ok("contexts", "update", id, "--content", "changed")
	d = <-got
	b.wait(d.event.ID + "  attempt 1  signature verified  503 Service Unavailable")
	dl, err := ts.WaitForDelivery(t.Context(), func(x mockserver.Delivery) bool { return x.EventID == d.event.ID && len(x.Attempts) == 1 })
	if err != nil || dl.Attempts[0].StatusCode != http.StatusServiceUnavailable || dl.Attempts[0].ResponseSnippet != "the app's answer" || dl.State != mockserver.DeliveryPending {
		t.Errorf("the service saw %+v: %v", dl, err)
	}

	// Signed with another secret: forwarded all the same, marked.
	status.Store(http.StatusOK)
	if _, err := ts.UpdateWebhook(hooks[0].ID, mockserver.WebhookUpdate{Secret: contextsvc.Ptr("whsec_rotated")}); err != nil {
		t.Fatal(err)
	}
	c.ok("contexts", "update", id, "--content", "changed again")
	d = <-got
	if d.verified == nil {
		t.Fatal("the app verified a delivery signed with another secret")
	}
	b.wait("  context.updated  ")
	b.wait("signature NOT verified  401 Unauthorized")

	if code := b.stop(); code != exitOK {
		t.Errorf("exit %d\n%s", code, b.errOut)
	}
	if !strings.Contains(b.out.String(), "Removed the webhook "+hooks[0].ID+".\n") || len(ts.Webhooks()) != 0 {
		t.Errorf("after Ctrl-C: %d webhooks\n%s", len(ts.Webhooks()), b.out)
	}
	if strings.Contains(b.errOut.String(), "Error") {
		t.Errorf("stderr: %s", b.errOut)
	}
}

// TestListenJSON prints the start and each delivery as JSON lines, and
// makes up a secret when none is given.
func TestListenJSON(t *testing.T) {
	t.Parallel()
	c, ts := newCLI(t)
	b := c.background("listen", "--forward-to", "http://127.0.0.1:1/unreachable", "--json")
	b.wait(`"kind":"ready"`)
	var ready struct {
		WebhookID string `json:"webhookId"`
		Secret    string `json:"secret"`
		Mock      bool   `json:"mock"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(b.out.String(), "\n", 2)[0]), &ready); err != nil || !ready.Mock ||
		!regexp.MustCompile(`^whsec_[a-z2-7]{32}$`).MatchString(ready.Secret) || len(ts.Webhooks()) != 1 {
		t.Fatalf("ready %+v %v:\n%s", ready, err, b.out)
	}
	// The app is not there: the service gets a 502, the line says why.
	c.ok("trigger", "team.member.added")
	b.wait(`"kind":"delivery"`)
	var line struct {
		EventType string `json:"eventType"`
		Verified  bool   `json:"signatureVerified"`
		Status    int    `json:"status"`
		Error     string `json:"error"`
	}
	lines := strings.Split(b.out.String(), "\n")
	if err := json.Unmarshal([]byte(lines[1]), &line); err != nil || line.EventType != "team.member.added" || !line.Verified ||
		line.Status != http.StatusBadGateway || !strings.Contains(line.Error, "the app did not answer") {
		t.Errorf("the delivery %+v %v:\n%s", line, err, b.out)
	}
	b.stop()
	if !strings.Contains(b.out.String(), `{"kind":"note","message":"Removed the webhook `+ready.WebhookID+`."}`) {
		t.Errorf("the end:\n%s", b.out)
	}
}

// TestListenDeployment: where /v1 alone serves (no mock's admin API),
// the webhook stays at Ctrl-C and listen says how to remove it; a server
// on another machine needs --public-url.
func TestListenDeployment(t *testing.T) {
	t.Parallel()
	c, ts := newCLI(t, mockserver.WithAdmin(false))
	b := c.background("listen", "--forward-to", "http://127.0.0.1:1/")
	b.wait("Ready.")
	if !strings.Contains(b.out.String(), "Ctrl-C stops (the webhook stays registered: the /v1 API cannot delete one).") {
		t.Errorf("the start:\n%s", b.out)
	}
	b.stop()
	if !strings.Contains(b.out.String(), "stays registered: the /v1 API cannot delete a webhook") || len(ts.Webhooks()) != 1 {
		t.Errorf("after Ctrl-C: %d webhooks\n%s", len(ts.Webhooks()), b.out)
	}

	c.env["CONTEXTSVC_BASE_URL"] = "https://api.example.com/v1"
	r := c.run("listen", "--forward-to", "http://127.0.0.1:3000/")
	if r.code != exitUsage || !strings.Contains(r.errOut, "is not on this machine") || !strings.Contains(r.errOut, "--public-url") {
		t.Errorf("a remote server: exit %d, %q", r.code, r.errOut)
	}
}
