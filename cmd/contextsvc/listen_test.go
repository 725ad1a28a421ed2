package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/cmd/internal/syncbuf"
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
		w.Header().Set("Set-Cookie", "session=app")
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

// deliveryLine matches a delivery's line: its columns aligned.
func deliveryLine(eventType, eventID, attempt, signature, status string) *regexp.Regexp {
	pad := func(s string, w int) string { return regexp.QuoteMeta(s) + strings.Repeat(" ", max(w-len(s), 0)) }
	return regexp.MustCompile(`(?m)^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d  ` + pad(eventType, colType) + `  ` + pad(eventID, colEventID) + `  ` +
		pad("attempt "+attempt, colAttempt) + `  ` + pad(signature, colSignature) + `  ` + regexp.QuoteMeta(status) + ` +\S+`)
}

// TestListen forwards deliveries to the app as they came, prints a line
// for each, passes the app's answer back to the service, refuses one
// that does not verify, and removes its webhook on Ctrl-C.
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
	for _, want := range []string{"Webhook " + hooks[0].ID + " registered for context.created, context.updated\n", "Signing secret: from --secret\n",
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
		d.header.Get("X-Service-Delivery") == "" || d.header.Get("X-Service-Delivery-Attempt") != "1" || d.header.Get("X-Service-Event") != "context.created" ||
		d.header.Get("Content-Type") != "application/json" {
		t.Fatalf("the app got %+v", d)
	}
	if data, _ := d.event.ContextCreated(); data.ContextID != id {
		t.Errorf("the event is about %s, want %s", data.ContextID, id)
	}
	b.wait(d.event.ID)
	if !deliveryLine("context.created", d.event.ID, "1", "signature verified", "200 OK").MatchString(b.out.String()) {
		t.Errorf("the delivery's line:\n%s", b.out)
	}

	// The app fails the next one: its status and body are the delivery's
	// answer, so the service will retry it, and the line says when.
	status.Store(http.StatusServiceUnavailable)
	c.ok("contexts", "update", id, "--content", "changed")
	d = <-got
	b.wait(d.event.ID)
	if !deliveryLine("context.updated", d.event.ID, "1", "signature verified", "503 Service Unavailable").MatchString(b.out.String()) ||
		!strings.Contains(b.out.String(), "the service tries again in 1m (attempt 2)\n") {
		t.Errorf("the failed delivery's line:\n%s", b.out)
	}
	dl, err := ts.WaitForDelivery(t.Context(), func(x mockserver.Delivery) bool { return x.EventID == d.event.ID && len(x.Attempts) == 1 })
	if err != nil || dl.Attempts[0].StatusCode != http.StatusServiceUnavailable || dl.Attempts[0].ResponseSnippet != "the app's answer" || dl.State != mockserver.DeliveryPending {
		t.Errorf("the service saw %+v: %v", dl, err)
	}

	// Signed with another secret: not forwarded, answered 401, marked.
	status.Store(http.StatusOK)
	if _, err := ts.UpdateWebhook(hooks[0].ID, mockserver.WebhookUpdate{Secret: contextsvc.Ptr("whsec_rotated")}); err != nil {
		t.Fatal(err)
	}
	c.ok("contexts", "update", id, "--content", "changed again")
	b.wait("not forwarded: the signature does not verify with the secret (--forward-unverified forwards it)")
	if !regexp.MustCompile(`  context\.updated +evt_\w+  attempt 1 +signature NOT verified  401 Unauthorized `).MatchString(b.out.String()) {
		t.Errorf("the unverified delivery's line:\n%s", b.out)
	}
	select {
	case d := <-got:
		t.Errorf("the app got a delivery that does not verify: %+v", d)
	default:
	}

	if code := b.stop(); code != exitOK {
		t.Errorf("exit %d\n%s", code, b.errOut)
	}
	if !strings.Contains(b.out.String(), "Removed the webhook "+hooks[0].ID+".\n") || len(ts.Webhooks()) != 0 {
		t.Errorf("after Ctrl-C: %d webhooks\n%s", len(ts.Webhooks()), b.out)
	}
	if strings.Contains(b.out.String(), "whsec_listen_test") || b.errOut.String() != "" {
		t.Errorf("the secret given was printed, or stderr holds %q:\n%s", b.errOut, b.out)
	}
}

// TestListenJSON prints the start and each delivery as JSON lines, and
// makes up a secret when none is given, which it prints.
func TestListenJSON(t *testing.T) {
	t.Parallel()
	c, ts := newCLI(t)
	b := c.background("listen", "--forward-to", "http://127.0.0.1:1/unreachable", "--json")
	b.wait(`"kind":"ready"`)
	var ready struct {
		WebhookID  string `json:"webhookId"`
		Secret     string `json:"secret"`
		SecretFrom string `json:"secretFrom"`
		Mock       bool   `json:"mock"`
	}
	if err := json.Unmarshal([]byte(strings.SplitN(b.out.String(), "\n", 2)[0]), &ready); err != nil || !ready.Mock || ready.SecretFrom != "generated" ||
		!regexp.MustCompile(`^whsec_[a-z2-7]{32}$`).MatchString(ready.Secret) || len(ts.Webhooks()) != 1 {
		t.Fatalf("ready %+v %v:\n%s", ready, err, b.out)
	}
	// The app is not there: the service gets a 502, the line says why.
	c.ok("trigger", "team.member.added")
	b.wait(`"kind":"delivery"`)
	var line struct {
		EventType      string `json:"eventType"`
		Verified       bool   `json:"signatureVerified"`
		Forwarded      bool   `json:"forwarded"`
		Status         int    `json:"status"`
		Error          string `json:"error"`
		RetryInSeconds int    `json:"retryInSeconds"`
	}
	lines := strings.Split(b.out.String(), "\n")
	if err := json.Unmarshal([]byte(lines[1]), &line); err != nil || line.EventType != "team.member.added" || !line.Verified || !line.Forwarded ||
		line.Status != http.StatusBadGateway || !strings.Contains(line.Error, "the app did not answer") || line.RetryInSeconds != 60 {
		t.Errorf("the delivery %+v %v:\n%s", line, err, b.out)
	}
	b.stop()
	if !strings.Contains(b.out.String(), `{"kind":"note","message":"Removed the webhook `+ready.WebhookID+`."}`) {
		t.Errorf("the end:\n%s", b.out)
	}
}

// TestListenSecretFromEnvironment: the secret comes from
// CONTEXTSVC_WEBHOOK_SECRET, out of the process list, and a secret given
// is never printed, on the start's lines or in the ready object.
func TestListenSecretFromEnvironment(t *testing.T) {
	t.Parallel()
	c, _ := newCLI(t)
	const secret = "whsec_from_the_environment"
	c.env[envWebhookSecret] = secret
	var status atomic.Int32
	status.Store(http.StatusOK)
	app, got := newApp(t, secret, &status)
	for _, args := range [][]string{{}, {"--json"}} {
		b := c.background(append([]string{"listen", "--forward-to", app.URL}, args...)...)
		b.wait("eady")
		c.ok("trigger", "context.created")
		if d := <-got; d.verified != nil {
			t.Errorf("%q: the app could not verify with the variable's secret: %v", args, d.verified)
		}
		if len(args) == 0 {
			b.wait("signature verified")
		} else {
			b.wait(`"signatureVerified":true`)
		}
		b.stop()
		out := b.out.String()
		if strings.Contains(out, secret) || strings.Contains(b.errOut.String(), secret) {
			t.Errorf("%q: the secret was printed:\n%s", args, out)
		}
		if len(args) == 0 && !strings.Contains(out, "Signing secret: from $CONTEXTSVC_WEBHOOK_SECRET\n") ||
			len(args) > 0 && !strings.Contains(out, `"secretFrom":"env"`) {
			t.Errorf("%q: the start does not say where the secret came from:\n%s", args, out)
		}
	}
	// --secret wins over the variable.
	b := c.background("listen", "--forward-to", app.URL, "--secret", "whsec_flag")
	b.wait("Ready.")
	c.ok("trigger", "context.created")
	if d := <-got; d.verified == nil {
		t.Error("the variable's secret signed, not --secret's")
	}
	b.stop()

	c.env[envWebhookSecret] = strings.Repeat("x", 300)
	if r := c.run("listen", "--forward-to", app.URL); r.code != exitUsage || !strings.Contains(r.errOut, "$CONTEXTSVC_WEBHOOK_SECRET: must be 1 to 256 characters") {
		t.Errorf("a bad secret in the variable: exit %d, %q", r.code, r.errOut)
	}
}

// receiverAddr is the address listen's receiver listens on, from its
// start.
func receiverAddr(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`\(listening on ([^)]+)\)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no receiver address in:\n%s", out)
	}
	return m[1]
}

// post sends a request to listen's receiver as a sender other than the
// service would, and returns the answer's status and headers.
func post(t *testing.T, addr, body string, header http.Header) (int, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://"+addr+"/", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}

// signed is the header of a delivery of body signed with secret.
func signedHeader(body, secret, eventType, attempt string, more ...string) http.Header {
	h := http.Header{
		"Content-Type":               {"application/json"},
		"X-Service-Signature":        {contextsvc.Sign([]byte(body), secret)},
		"X-Service-Event":            {eventType},
		"X-Service-Delivery":         {"dlv_test"},
		"X-Service-Delivery-Attempt": {attempt},
	}
	for i := 0; i+1 < len(more); i += 2 {
		h.Add(more[i], more[i+1])
	}
	return h
}

// eventBody is an event's envelope, of now (the app refuses an old one).
func eventBody(id, typ string) string {
	return `{"id":"` + id + `","type":"` + typ + `","timestamp":"` + time.Now().UTC().Format(time.RFC3339) + `","data":{}}`
}

// TestListenRefuses: what the service never sends is not forwarded (a
// request that does not verify, a browser's cross-site request, a body
// that is not JSON, one that came round), and a delivery reaches the app
// with a delivery's headers alone; --forward-unverified forwards what
// does not verify, never with credentials.
func TestListenRefuses(t *testing.T) {
	t.Parallel()
	const secret = "whsec_refuse"
	credentials := []string{"Authorization", "Bearer forged", "Cookie", "session=stolen", "Proxy-Authorization", "Basic eA=="}
	for _, unverified := range []bool{false, true} {
		t.Run(fmt.Sprint("--forward-unverified=", unverified), func(t *testing.T) {
			t.Parallel()
			c, _ := newCLI(t)
			var status atomic.Int32
			status.Store(http.StatusOK)
			app, got := newApp(t, secret, &status)
			args := []string{"listen", "--forward-to", app.URL, "--secret", secret}
			if unverified {
				args = append(args, "--forward-unverified")
			}
			b := c.background(args...)
			b.wait("Ready.")
			addr := receiverAddr(t, b.out.String())

			forged := eventBody("evt_forged", "context.deleted")
			for _, tt := range []struct {
				name    string
				body    string
				header  http.Header
				status  int // without --forward-unverified
				line    string
				forward bool // with --forward-unverified
			}{
				{"unsigned, with credentials", forged, http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer forged"}, "Cookie": {"session=stolen"}},
					http.StatusUnauthorized, "not forwarded: the signature does not verify", true},
				{"badly signed", forged, signedHeader(forged, "whsec_other", "context.deleted", "1"),
					http.StatusUnauthorized, "not forwarded: the signature does not verify", true},
				{"cross-site", forged, http.Header{"Content-Type": {"text/plain"}, "Origin": {"https://evil.example"}, "Sec-Fetch-Site": {"cross-site"}},
					http.StatusForbidden, "refused: a browser's request from a page of another site", false},
				{"cross-site, signed JSON", forged, signedHeader(forged, secret, "context.deleted", "1", "Sec-Fetch-Site", "cross-site"),
					http.StatusForbidden, "refused: a browser's request from a page of another site", false},
				{"another origin", forged, signedHeader(forged, secret, "context.deleted", "1", "Origin", "https://evil.example"),
					http.StatusForbidden, "refused: a browser's request from a page of another site", false},
				{"a form", "a=b", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}},
					http.StatusUnsupportedMediaType, "refused: a body that is not JSON", false},
				{"text", forged, http.Header{"Content-Type": {"text/plain"}},
					http.StatusUnsupportedMediaType, "refused: a body that is not JSON", false},
				{"through too many receivers", forged, signedHeader(forged, secret, "context.deleted", "1", viaHeader, "a, b, c, d, e, f, g, h"),
					http.StatusLoopDetected, "refused: the request came round", false},
			} {
				before := strings.Count(b.out.String(), "\n")
				st, _ := post(t, addr, tt.body, tt.header)
				forwarded := unverified && tt.forward
				if !forwarded && st != tt.status {
					t.Errorf("%s: answered %d, want %d", tt.name, st, tt.status)
				}
				if forwarded {
					d := <-got
					for i := 0; i < len(credentials); i += 2 {
						if d.header.Get(credentials[i]) != "" {
							t.Errorf("%s: the app got %s", tt.name, credentials[i])
						}
					}
					continue
				}
				// The line is printed before the answer.
				if out := b.out.String(); strings.Count(out, "\n") != before+1 || !strings.Contains(out[strings.LastIndex(strings.TrimSuffix(out, "\n"), "\n"):], tt.line) {
					t.Errorf("%s: the line:\n%s", tt.name, out)
				}
				select {
				case d := <-got:
					t.Errorf("%s: forwarded to the app: %+v", tt.name, d.header)
				default:
				}
			}

			// A delivery signed with the secret: forwarded with the
			// delivery's headers alone.
			body := eventBody("evt_real", "context.created")
			st, hdr := post(t, addr, body, signedHeader(body, secret, "context.created", "1", append(credentials, "X-Other", "x", "Traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")...))
			d := <-got
			if st != http.StatusOK || d.verified != nil || hdr.Get("X-App") != "" || hdr.Get("Set-Cookie") != "" {
				t.Errorf("a delivery: answered %d %v, the app's verification %v", st, hdr, d.verified)
			}
			for i := 0; i < len(credentials); i += 2 {
				if d.header.Get(credentials[i]) != "" {
					t.Errorf("a delivery: the app got %s", credentials[i])
				}
			}
			if d.header.Get("X-Other") != "" && !unverified || d.header.Get("Traceparent") == "" || d.header.Get("X-Service-Delivery") != "dlv_test" {
				t.Errorf("a delivery: the app got the headers %v", d.header)
			}
			b.stop()
		})
	}
}

// TestListenPrints: without --forward-to, each delivery is printed (with
// --print-json its body) and answered 200; a duplicate is marked; the
// columns align.
func TestListenPrints(t *testing.T) {
	t.Parallel()
	c, ts := newCLI(t)
	b := c.background("listen", "--print-json", "--secret", "whsec_print")
	b.wait("Ready.")
	if !strings.Contains(b.out.String(), "Printing deliveries from http://127.0.0.1:") {
		t.Errorf("the start:\n%s", b.out)
	}
	addr := receiverAddr(t, b.out.String())
	id := strings.TrimSpace(c.ok("contexts", "create", "--name", "Printed", "-q"))
	dl, err := ts.WaitForDelivery(t.Context(), func(x mockserver.Delivery) bool {
		return x.EventType == contextsvc.EventContextCreated && x.State == mockserver.DeliverySucceeded
	})
	if err != nil {
		t.Fatal(err)
	}
	b.wait(dl.EventID) // the line and its body come in one write
	out := b.out.String()
	if !deliveryLine("context.created", dl.EventID, "1", "signature verified", "200 OK").MatchString(out) ||
		!strings.Contains(out, "\n{\n  \"id\": \""+dl.EventID+"\",\n  \"type\": \"context.created\",") || !strings.Contains(out, id) {
		t.Errorf("the delivery and its body:\n%s", out)
	}

	// The same event again (the service's redelivery): a duplicate. A
	// team event, whose type is shorter: the columns still align.
	body := eventBody(dl.EventID, "context.created")
	if st, _ := post(t, addr, body, signedHeader(body, "whsec_print", "context.created", "1")); st != http.StatusOK {
		t.Errorf("the duplicate: %d", st)
	}
	b.wait("duplicate: its event was taken already")
	team := eventBody("evt_team", "team.member.added")
	post(t, addr, team, signedHeader(team, "whsec_print", "team.member.added", "2"))
	b.wait("evt_team")
	var starts []int
	for l := range strings.Lines(b.out.String()) {
		if i := strings.Index(l, "  attempt "); i > 0 {
			starts = append(starts, i)
		}
	}
	if len(starts) < 3 || slices.Min(starts) != slices.Max(starts) {
		t.Errorf("the attempt column at %v:\n%s", starts, b.out)
	}
	b.stop()
}

// TestListenDuplicatesAndRetries: a delivery of an event the app took is
// a duplicate, one of an event whose deliveries failed is not; a failed
// answer says when the service tries again, by the contract's schedule.
func TestListenDuplicatesAndRetries(t *testing.T) {
	t.Parallel()
	c, _ := newCLI(t)
	var status atomic.Int32
	app, got := newApp(t, "whsec_dup", &status)
	b := c.background("listen", "--forward-to", app.URL, "--secret", "whsec_dup", "--json")
	b.wait(`"kind":"ready"`)
	var ready struct{ Listen string }
	json.Unmarshal([]byte(strings.SplitN(b.out.String(), "\n", 2)[0]), &ready)
	for i, tt := range []struct {
		event, attempt string
		status         int
		duplicate      bool
		retryIn        int
		last           bool
	}{
		{"evt_a", "1", http.StatusServiceUnavailable, false, 60, false},
		{"evt_a", "2", http.StatusInternalServerError, false, 300, false},
		{"evt_a", "3", http.StatusOK, false, 0, false},
		{"evt_a", "4", http.StatusOK, true, 0, false},
		{"evt_b", "5", http.StatusBadGateway, false, 24 * 3600, false},
		{"evt_b", "6", http.StatusBadGateway, false, 0, true},
	} {
		status.Store(int32(tt.status))
		body := eventBody(tt.event, "context.updated")
		post(t, ready.Listen, body, signedHeader(body, "whsec_dup", "context.updated", tt.attempt))
		<-got
		b.wait(`"attempt":` + tt.attempt + `,`)
		var line struct {
			Duplicate      bool
			Status         int
			RetryInSeconds int
			LastAttempt    bool
		}
		lines := strings.Split(strings.TrimSpace(b.out.String()), "\n")
		if err := json.Unmarshal([]byte(lines[1+i]), &line); err != nil || line.Duplicate != tt.duplicate || line.Status != tt.status ||
			line.RetryInSeconds != tt.retryIn || line.LastAttempt != tt.last {
			t.Errorf("%s attempt %s: %+v %v; want %+v", tt.event, tt.attempt, line, err, tt)
		}
	}
	b.stop()
}

// TestSeenEventsBound: the ids remembered are at most the limit, the
// oldest forgotten first.
func TestSeenEventsBound(t *testing.T) {
	t.Parallel()
	s := newSeenEvents(3)
	for _, id := range []string{"a", "b", "c", "d"} {
		_, e := s.begin(id)
		s.end(e, true)
	}
	if s.len() != 3 {
		t.Errorf("%d ids remembered", s.len())
	}
	if dup, _ := s.begin("a"); dup {
		t.Error("the oldest id is still remembered")
	}
	if dup, _ := s.begin("d"); !dup {
		t.Error("the newest id was forgotten")
	}
	if dup, _ := s.begin(strings.Repeat("x", maxSeenID+1)); dup || s.len() != 3 {
		t.Error("a long id was remembered")
	}
}

// TestListenInFlight: past its bound of deliveries in hand, the receiver
// answers 503 with Retry-After at once, and takes deliveries again once
// the app answers.
func TestListenInFlight(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	arrived := make(chan struct{}, 4)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived <- struct{}{}
		<-release
	}))
	defer app.Close()
	target, _ := url.Parse(app.URL)
	s := &streams{in: strings.NewReader(""), out: &syncbuf.Buffer{}, err: io.Discard, getenv: func(string) string { return "" }}
	l := newListener(s, &listenOptions{secret: "whsec_busy", forwardTimeout: defaultForwardTimeout}, target, secretFlag)
	l.inFlight = make(chan struct{}, 2)
	recv := httptest.NewServer(l)
	defer recv.Close()
	addr := strings.TrimPrefix(recv.URL, "http://")

	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range 2 {
		wg.Go(func() {
			body := eventBody(fmt.Sprint("evt_", i), "context.updated")
			codes[i], _ = post(t, addr, body, signedHeader(body, "whsec_busy", "context.updated", "1"))
		})
	}
	<-arrived
	<-arrived
	body := eventBody("evt_2", "context.updated")
	st, hdr := post(t, addr, body, signedHeader(body, "whsec_busy", "context.updated", "1"))
	if st != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" {
		t.Errorf("past the bound: %d, Retry-After %q", st, hdr.Get("Retry-After"))
	}
	close(release)
	wg.Wait()
	if codes[0] != http.StatusOK || codes[1] != http.StatusOK {
		t.Errorf("the deliveries in hand: %v", codes)
	}
	if st, _ := post(t, addr, body, signedHeader(body, "whsec_busy", "context.updated", "2")); st != http.StatusOK {
		t.Errorf("after: %d", st)
	}
	if !strings.Contains(s.out.(*syncbuf.Buffer).String(), "busy: 2 deliveries in hand already") {
		t.Errorf("the lines:\n%s", s.out)
	}
}

// TestListenLoop: a request that comes round to the receiver again,
// through a proxy its own address check cannot see, is refused at once.
func TestListenLoop(t *testing.T) {
	t.Parallel()
	c, _ := newCLI(t)
	var back atomic.Pointer[url.URL]
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(back.Load()) }})
	defer proxy.Close()
	b := c.background("listen", "--forward-to", proxy.URL, "--secret", "whsec_loop")
	b.wait("Ready.")
	addr := receiverAddr(t, b.out.String())
	back.Store(&url.URL{Scheme: "http", Host: addr})
	body := eventBody("evt_loop", "context.updated")
	if st, _ := post(t, addr, body, signedHeader(body, "whsec_loop", "context.updated", "1")); st != http.StatusLoopDetected {
		t.Errorf("answered %d", st)
	}
	b.wait("refused: the request came round to this receiver again")
	b.stop()
}

// TestListenForwardTo: --forward-to takes host:port/path, and refuses
// this receiver itself however it is named.
func TestListenForwardTo(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want, err string }{
		{"localhost:3000/hooks", "http://localhost:3000/hooks", ""},
		{"127.0.0.1:3000", "http://127.0.0.1:3000", ""},
		{":3000/hooks", "http://localhost:3000/hooks", ""},
		{"https://app.example/hooks", "https://app.example/hooks", ""},
		{"http://[::1]:8080/", "http://[::1]:8080/", ""},
		{"ftp://app.example/", "", "must be an http or https URL"},
		{"http://", "", "must be an http or https URL"},
		{"localhost:99999/x", "", "the port must be 1 to 65535"},
		{"", "", "must be an http or https URL"},
	} {
		u, err := forwardTarget(tt.in)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || u.String() != tt.want {
			t.Errorf("%q: %v %v, want %s", tt.in, u, err, tt.want)
		}
	}

	local := func() []netip.Addr {
		return []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("192.168.1.7")}
	}
	resolve := func(_ context.Context, _, host string) ([]netip.Addr, error) {
		switch host {
		case "me.example":
			return []netip.Addr{netip.MustParseAddr("192.168.1.7")}, nil
		case "loop.example":
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("203.0.113.9")}, nil
	}
	for _, tt := range []struct {
		listen, target string
		self           bool
	}{
		{"127.0.0.1:9000", "http://127.0.0.1:9000/", true},
		{"127.0.0.1:9000", "http://localhost:9000/hooks", true},
		{"127.0.0.1:9000", "http://app.localhost:9000/hooks", true},
		{"127.0.0.1:9000", "http://0.0.0.0:9000/", true},
		{"127.0.0.1:9000", "http://[::]:9000/", true},
		{"127.0.0.1:9000", "http://[::ffff:127.0.0.1]:9000/", true},
		{"127.0.0.1:9000", "http://loop.example:9000/", true},
		{"127.0.0.1:80", "http://localhost/", true},
		{"127.0.0.1:443", "https://localhost/", true},
		{"0.0.0.0:9000", "http://192.168.1.7:9000/", true},
		{"0.0.0.0:9000", "http://me.example:9000/", true},
		{"0.0.0.0:9000", "http://127.0.0.1:9000/", true},
		{"[::]:9000", "http://[::1]:9000/", true},
		{"127.0.0.1:9000", "http://127.0.0.1:9001/", false},
		{"127.0.0.1:9000", "http://127.0.0.2:9000/", false},
		{"127.0.0.1:9000", "http://192.168.1.7:9000/", false},
		{"127.0.0.1:9000", "http://other.example:9000/", false},
		{"0.0.0.0:9000", "http://other.example:9000/", false},
		{"127.0.0.1:80", "https://localhost/", false},
	} {
		target, _ := url.Parse(tt.target)
		addr, _ := net.ResolveTCPAddr("tcp", tt.listen)
		if got := forwardsToItself(t.Context(), target, addr, resolve, local); got != tt.self {
			t.Errorf("listening on %s, --forward-to %s: itself %t, want %t", tt.listen, tt.target, got, tt.self)
		}
	}

	// The command refuses it before registering anything.
	c, ts := newCLI(t)
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := free.Addr().(*net.TCPAddr).Port
	free.Close()
	r := c.run("listen", "--listen", fmt.Sprint("127.0.0.1:", port), "--forward-to", fmt.Sprint("localhost:", port, "/hooks"))
	if r.code != exitUsage || !strings.Contains(r.errOut, "is this receiver itself") || len(ts.Webhooks()) != 0 {
		t.Errorf("forwarding to itself: exit %d, %q, %d webhooks", r.code, r.errOut, len(ts.Webhooks()))
	}
}

// TestListenWarnings: a receiver reachable from other machines, and an
// app reached over plain http on another, are said on stderr, once.
func TestListenWarnings(t *testing.T) {
	t.Parallel()
	var errOut strings.Builder
	s := &streams{out: io.Discard, err: &errOut, getenv: func(string) string { return "" }}
	remote, _ := url.Parse("http://192.0.2.10:3000/hooks")
	l := newListener(s, &listenOptions{forwardTimeout: defaultForwardTimeout}, remote, secretFlag)
	l.warn(&net.TCPAddr{IP: net.IPv4zero, Port: 9000})
	if got := errOut.String(); strings.Count(got, "Warning: ") != 2 ||
		!strings.Contains(got, "Warning: the receiver listens on 0.0.0.0:9000, which other machines can reach") ||
		!strings.Contains(got, "Warning: --forward-to http://192.0.2.10:3000/hooks is plain http to another machine") {
		t.Errorf("stderr:\n%s", got)
	}
	errOut.Reset()
	local, _ := url.Parse("http://localhost:3000/hooks")
	newListener(s, &listenOptions{forwardTimeout: defaultForwardTimeout}, local, secretFlag).warn(&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 9000})
	if errOut.Len() != 0 {
		t.Errorf("on this machine: %q", errOut.String())
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

// TestLoopbackHost: only localhost and loopback addresses are this
// machine; a name under .localhost is whatever a resolver says it is.
func TestLoopbackHost(t *testing.T) {
	t.Parallel()
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "127.0.0.1": true, "127.1.2.3": true, "::1": true, "::ffff:127.0.0.1": true,
		"app.localhost": false, "localhost.example.com": false, "10.0.0.1": false, "0.0.0.0": false, "": false,
	} {
		if got := loopbackHost(host); got != want {
			t.Errorf("loopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}
