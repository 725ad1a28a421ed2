package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// idleMock waits until the mock's deliveries are idle.
func idleMock(t *testing.T, ts *mockserver.TestServer) {
	t.Helper()
	if err := ts.WaitIdle(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// TestReplay lists the mock's events and deliveries of the key's account
// and sends an event again: to a webhook registered after it (a new
// listen's), as a new delivery that verifies with that webhook's secret
// and carries the same event.
func TestReplay(t *testing.T) {
	t.Parallel()
	c, ts := newCLI(t, mockserver.WithKey(mockserver.Key{Token: "sk_test_other_0123456789", Account: "other"}))
	var status atomic.Int32
	status.Store(http.StatusOK)
	first, firstGot := newApp(t, "whsec_first", &status)
	hook1 := regexp.MustCompile(`wh_[a-z0-9]+`).FindString(c.ok("webhooks", "register", "--url", first.URL, "--event", "context.created", "--secret", "whsec_first"))
	id := strings.TrimSpace(c.ok("contexts", "create", "--name", "Replayed", "-q"))
	d := <-firstGot
	if d.verified != nil {
		t.Fatal(d.verified)
	}
	evt := d.event.ID
	idleMock(t, ts)

	// The event log and the deliveries, for scripts (no header, tabs)
	// and through --jq.
	if out := c.ok("events", "list"); !regexp.MustCompile(`(?m)^` + evt + "\tcontext.created\t\\S+Z\t" + id + "$").MatchString(out) {
		t.Errorf("events list:\n%q", out)
	}
	if out := c.ok("events", "list", "--type", "context.created", "--jq", ".data[].id"); out != evt+"\n" {
		t.Errorf("events list --jq: %q", out)
	}
	out := c.ok("deliveries", "list", "--event", evt)
	if !regexp.MustCompile("^dlv_[a-z0-9]+\t" + evt + "\tcontext.created\t" + hook1 + "\tsucceeded\t1\t200 OK\t-\thttp://127.0.0.1:\\d+\n$").MatchString(out) {
		t.Errorf("deliveries list --event:\n%q", out)
	}
	if out := c.ok("deliveries", "list", "--status", "failed"); out != "No deliveries in the mock's account acme.\n" {
		t.Errorf("deliveries list --status failed: %q", out)
	}
	c.tty, c.env["NO_COLOR"] = true, "1"
	if out := c.ok("deliveries", "list"); !strings.HasPrefix(out, "ID ") || !strings.Contains(out, "LAST ANSWER") {
		t.Errorf("deliveries list on a terminal:\n%s", out)
	}
	c.tty = false

	// A webhook registered after the event gets it, signed with its own
	// secret, as the same event.
	second, secondGot := newApp(t, "whsec_second", &status)
	hook2 := regexp.MustCompile(`wh_[a-z0-9]+`).FindString(c.ok("webhooks", "register", "--url", second.URL, "--event", "context.created", "--secret", "whsec_second"))
	out = c.ok("events", "resend", evt, "--webhook", hook2)
	if !regexp.MustCompile(`^Resent ` + evt + ` \(context.created\) to ` + hook2 + `: delivery dlv_[a-z0-9]+\n$`).MatchString(out) {
		t.Errorf("events resend --webhook: %q", out)
	}
	if d := <-secondGot; d.verified != nil || d.event.ID != evt || d.event.Type != contextsvc.EventContextCreated {
		t.Errorf("the new webhook got %v %v", d.event, d.verified)
	}
	// Without --webhook: every webhook that receives it.
	if out := c.ok("events", "resend", evt, "--jq", ".deliveries[].webhookId"); out != hook1+"\n"+hook2+"\n" {
		t.Errorf("events resend to every webhook: %q", out)
	}
	for _, got := range []<-chan appDelivery{firstGot, secondGot} {
		if d := <-got; d.verified != nil || d.event.ID != evt {
			t.Errorf("resent: %v %v", d.event, d.verified)
		}
	}
	idleMock(t, ts)
	if n := len(ts.Deliveries(mockserver.DeliveryFilter{EventID: evt})); n != 4 {
		t.Errorf("%d deliveries of the event, want 4", n)
	}

	// Another account's key sees none of it. Its key shows as the first
	// one does in the admin API (the same start and end): only a context
	// tells its account.
	other := &cli{t: t, env: map[string]string{"CONTEXTSVC_BASE_URL": c.env["CONTEXTSVC_BASE_URL"], "CONTEXTSVC_API_KEY": "sk_test_other_0123456789"}}
	if r := other.run("events", "list"); r.code != exitError || !strings.Contains(r.errOut, "keys of the mock's accounts acme, other show as the key does (sk_test…6789)") {
		t.Errorf("an account told by a masked key alone: exit %d, %q", r.code, r.errOut)
	}
	other.ok("contexts", "create", "--name", "Other's")
	if out := other.ok("events", "list"); strings.Contains(out, evt) || strings.Count(out, "\n") != 2 {
		t.Errorf("another account's events list: %q", out)
	}
	if r := other.run("events", "resend", evt); r.code != exitError || !strings.Contains(r.errOut, "the mock keeps no event "+evt+" in the key's account other") {
		t.Errorf("another account's resend: exit %d, %q", r.code, r.errOut)
	}

	// Mistakes.
	for _, tt := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"deliveries", "list", "--status", "done"}, exitUsage, "--status must be pending, succeeded or failed"},
		{[]string{"events", "list", "--type", "context.craeted"}, exitUsage, "did you mean context.created?"},
		{[]string{"events", "list", "--limit", "0"}, exitUsage, "--limit must be 1 to 100"},
		{[]string{"events", "resend"}, exitUsage, "events resend takes one argument"},
		{[]string{"events", "resend", "evt_missing"}, exitError, "404"},
		{[]string{"events", "resend", evt, "--webhook", "wh_missing"}, exitError, "404"},
	} {
		if r := c.run(tt.args...); r.code != tt.code || !strings.Contains(r.errOut, tt.err) {
			t.Errorf("%q: exit %d, %q", tt.args, r.code, r.errOut)
		}
	}
}

// TestMockFromTheTerminal drives a running mock: its clock (an advance
// makes a pending retry due, and runs it), its chaos mode, its webhooks
// and a reset.
func TestMockFromTheTerminal(t *testing.T) {
	t.Parallel()
	// Near the real time: the app refuses events more than a day old.
	mockT0 := time.Now().UTC().Truncate(time.Minute)
	clock := mockserver.NewFakeClock(mockT0)
	c, ts := newCLI(t, mockserver.WithClock(clock))
	// The app fails the first attempt.
	var status atomic.Int32
	status.Store(http.StatusInternalServerError)
	failFirst, got := newApp(t, "whsec_clock", &status)
	hook := regexp.MustCompile(`wh_[a-z0-9]+`).FindString(c.ok("webhooks", "register", "--url", failFirst.URL, "--event", "context.created", "--secret", "whsec_clock"))
	c.ok("contexts", "create", "--name", "Retried")
	idleMock(t, ts)
	if d := <-got; d.verified != nil {
		t.Fatal(d.verified)
	}
	status.Store(http.StatusOK)
	dl := ts.Deliveries(mockserver.DeliveryFilter{WebhookID: hook})
	if len(dl) != 1 || dl[0].State != mockserver.DeliveryPending || len(dl[0].Attempts) != 1 || !dl[0].NextAttemptAt.Equal(mockT0.Add(time.Minute)) {
		t.Fatalf("before the advance: %+v", dl)
	}
	if out := c.ok("clock", "show"); out != "The mock's clock: "+when(mockT0)+" (fake: it moves only when advanced); the next delivery attempt is due at "+when(mockT0.Add(time.Minute))+"\n" {
		t.Errorf("clock show: %q", out)
	}
	if out := c.ok("clock", "advance", "30s"); out != "Advanced the mock's clock by 30s to "+when(mockT0.Add(30*time.Second))+": no delivery attempt fell due; the next delivery attempt is due at "+when(mockT0.Add(time.Minute))+"\n" {
		t.Errorf("clock advance 30s: %q", out)
	}
	// The retry falls due and runs: the delivery succeeds, no wait.
	if out := c.ok("clock", "advance", "1m"); out != "Advanced the mock's clock by 1m0s to "+when(mockT0.Add(90*time.Second))+": 1 delivery attempt ran; no delivery attempt is waiting\n" {
		t.Errorf("clock advance 1m: %q", out)
	}
	if d, _ := ts.Delivery(dl[0].ID); d.State != mockserver.DeliverySucceeded || len(d.Attempts) != 2 || len(got) != 1 {
		t.Errorf("after the advance: %+v, %d more calls", d, len(got))
	}
	if out := c.ok("deliveries", "list", "--jq", ".data[0] | [.state, (.attempts | length)] | @tsv"); out != "succeeded\t2\n" {
		t.Errorf("deliveries after the advance: %q", out)
	}

	// Chaos: off, set (checked before it is sent), shown, off.
	if out := c.ok("chaos", "show"); out != "Chaos: off.\n" {
		t.Errorf("chaos show: %q", out)
	}
	if out := c.ok("chaos", "set", "seed=42,duplicate=0.5"); !strings.HasPrefix(out, "Chaos: on since "+when(mockT0.Add(90*time.Second))+", seed=42,duplicate=0.5") || !strings.Contains(out, ", seed 42.\n") {
		t.Errorf("chaos set: %q", out)
	}
	if r := c.run("chaos", "set", "duplicate=2"); r.code != exitUsage || !strings.Contains(r.errOut, "duplicate: 2 is not a probability from 0 to 1") {
		t.Errorf("chaos set duplicate=2: exit %d, %q", r.code, r.errOut)
	}
	if rep := ts.Chaos(); !rep.On || rep.Chaos.Seed != 42 || rep.Chaos.Duplicate != 0.5 {
		t.Errorf("chaos after a refused set: %+v", rep)
	}
	if out := c.ok("chaos", "show", "--jq", ".seed"); out != "42\n" {
		t.Errorf("chaos show --jq: %q", out)
	}
	if out := c.ok("chaos", "off"); out != "Chaos: off.\n" || ts.Chaos().On {
		t.Errorf("chaos off: %q", out)
	}

	// Webhooks: listed (the key's account's), deleted.
	if out := c.ok("webhooks", "list"); !regexp.MustCompile("^" + hook + "\t" + regexp.QuoteMeta(failFirst.URL) + "\tcontext.created\tyes\t\\S+Z\n$").MatchString(out) {
		t.Errorf("webhooks list: %q", out)
	}
	if out := c.ok("webhooks", "delete", hook); out != "Deleted the webhook "+hook+" ("+failFirst.URL+")\n" {
		t.Errorf("webhooks delete: %q", out)
	}
	if out := c.ok("webhooks", "list"); out != "No webhooks in the mock's account acme.\n" {
		t.Errorf("webhooks list after the delete: %q", out)
	}
	if r := c.run("webhooks", "delete", hook); r.code != exitError || !strings.Contains(r.errOut, "404") {
		t.Errorf("deleting it again: exit %d, %q", r.code, r.errOut)
	}

	// A reset empties the mock.
	c.ok("webhooks", "register", "--url", failFirst.URL, "--event", "context.created")
	if out := c.ok("reset"); !strings.HasPrefix(out, "Reset the mock:") || len(ts.Contexts("acme")) != 0 || len(ts.Webhooks()) != 0 || len(ts.Events()) != 0 {
		t.Errorf("reset: %q, %d contexts, %d webhooks", out, len(ts.Contexts("acme")), len(ts.Webhooks()))
	}

	// Mistakes, said before anything is sent.
	for _, tt := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"clock", "advance"}, exitUsage, "give how far to advance"},
		{[]string{"clock", "advance", "1d"}, exitUsage, "a day is 24h"},
		{[]string{"clock", "advance", "soon"}, exitUsage, `"soon" is not a duration`},
		{[]string{"clock", "advance", "--", "-1h"}, exitUsage, "the clock only moves forward"},
		{[]string{"clock", "advance", "1h", "--to-next-due"}, exitUsage, "not both"},
		{[]string{"clock", "advance", "--to-next-due"}, exitError, "no delivery attempt is waiting"},
		{[]string{"chaos", "set"}, exitUsage, "chaos set takes one argument"},
		{[]string{"chaos", "set", "nonsense"}, exitUsage, "Error: "},
	} {
		if r := c.run(tt.args...); r.code != tt.code || !strings.Contains(r.errOut, tt.err) {
			t.Errorf("%q: exit %d, %q", tt.args, r.code, r.errOut)
		}
	}
	if now := clock.Now(); !now.Equal(mockT0.Add(90 * time.Second)) {
		t.Errorf("the refused advances moved the clock to %s", now)
	}

	// The real clock cannot be advanced: the mock says how to start one
	// that can.
	real, _ := newCLI(t)
	if r := real.run("clock", "advance", "1h"); r.code != exitError || !strings.Contains(r.errOut, "the server runs on the real clock") {
		t.Errorf("a real clock: exit %d, %q", r.code, r.errOut)
	}
}

// TestMockOnlyOnDeployment: what only the mock's admin API does says so
// on a deployment, in one line, with the exit code of "not supported
// here", and sends nothing but the probe.
func TestMockOnlyOnDeployment(t *testing.T) {
	t.Parallel()
	c, ts := newCLI(t, mockserver.WithAdmin(false))
	for _, args := range [][]string{
		{"events", "list"}, {"events", "resend", "evt_x"}, {"deliveries", "list"}, {"clock", "show"}, {"clock", "advance", "1h"},
		{"chaos", "show"}, {"chaos", "set", "seed=1"}, {"chaos", "off"}, {"reset"}, {"webhooks", "list"}, {"webhooks", "delete", "wh_x"},
		{"trigger", "team.member.added"}, {"trigger", "context.published"},
	} {
		r := c.run(args...)
		if r.code != exitUnsupported || r.out != "" || strings.Count(r.errOut, "\n") != 1 ||
			!regexp.MustCompile(`^Error: .*(works on the mock only|cannot be caused through the /v1 API of a deployment).*\n$`).MatchString(r.errOut) {
			t.Errorf("%q on a deployment: exit %d, stdout %q, stderr %q", args, r.code, r.out, r.errOut)
		}
	}
	if n := len(ts.Events()); n != 0 {
		t.Errorf("%d events", n)
	}
	// A mock that asks for credentials this command does not have: which
	// to set, exit 2.
	hash, err := bcrypt.GenerateFromPassword([]byte("a long passphrase"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	locked, _ := newCLI(t, mockserver.WithAdminAuth(strings.NewReader("admin:"+string(hash)+"\n")))
	for _, args := range [][]string{{"events", "list"}, {"clock", "show"}, {"reset"}} {
		if r := locked.run(args...); r.code != exitUsage || !strings.Contains(r.errOut, "set CONTEXTSVC_MOCK_ADMIN_USER and CONTEXTSVC_MOCK_ADMIN_PASSWORD") {
			t.Errorf("%q on a locked mock: exit %d, %q", args, r.code, r.errOut)
		}
	}
	locked.env[envAdminUser], locked.env[envAdminPassword] = "admin", "a long passphrase"
	if out := locked.ok("chaos", "show"); out != "Chaos: off.\n" {
		t.Errorf("chaos show with credentials: %q", out)
	}
}

// TestAdminListBounded: a server that passes for the mock and whose
// pages never end is read page by page, each page's rows written before
// the next is asked for, on a terminal as for a script, and the pages end
// at maxAdminPages; a cursor given twice ends them at once.
func TestAdminListBounded(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		tty   bool
		cycle bool
		long  bool   // cursors longer than a mock's
		limit string // --limit, when given
		err   string
		rows  int // at least, on stdout
	}{
		{name: "a terminal", tty: true, limit: "1", err: "more than 1000 pages", rows: 1000},
		{name: "a script", limit: "1", err: "more than 1000 pages", rows: 1000},
		{name: "a cursor cycle", cycle: true, err: "pagination does not end", rows: 200},
		{name: "a cursor of megabytes", long: true, err: "a cursor of 2000000 bytes, over the 1024 a mock gives", rows: 100},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var pages atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				switch r.URL.Path {
				case "/_mock/contract":
					io.WriteString(w, `{"proxy":false}`)
				case "/_mock/accounts":
					io.WriteString(w, `{"data":[{"id":"acme","users":["user_aaaaaaaaaaaaaaaaaaaa"],"keys":[{"token":"`+mockserver.MaskToken(testKey)+`","user":"user_aaaaaaaaaaaaaaaaaaaa"}]}],"hasMore":false,"nextCursor":null}`)
				case "/_mock/events":
					n := pages.Add(1)
					limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
					var b strings.Builder
					b.WriteString(`{"data":[`)
					for i := range limit {
						if i > 0 {
							b.WriteString(",")
						}
						fmt.Fprintf(&b, `{"id":"evt_%024d","type":"context.created","timestamp":"2026-01-01T00:00:00.000Z","account":"acme","data":{}}`, n*100+int64(i))
					}
					next := fmt.Sprintf("c%d", n)
					if tt.cycle {
						next = fmt.Sprintf("c%d", n%2)
					}
					if tt.long {
						next = strings.Repeat("c", 2_000_000)
					}
					fmt.Fprintf(&b, `],"hasMore":true,"nextCursor":%q}`, next)
					io.WriteString(w, b.String())
				default:
					http.NotFound(w, r)
				}
			}))
			defer srv.Close()
			c := &cli{t: t, tty: tt.tty, env: map[string]string{"CONTEXTSVC_BASE_URL": srv.URL + "/v1", "CONTEXTSVC_API_KEY": testKey, "NO_COLOR": "1"}}
			args := []string{"events", "list", "--all"}
			if tt.limit != "" {
				args = append(args, "--limit", tt.limit)
			}
			r := c.run(args...)
			if r.code != exitError || !strings.Contains(r.errOut, tt.err) || strings.Count(r.out, "\n") < tt.rows {
				t.Errorf("exit %d, %d lines, %q", r.code, strings.Count(r.out, "\n"), r.errOut)
			}
			if tt.tty && !strings.HasPrefix(r.out, "ID  ") {
				t.Errorf("on a terminal, the table has no header:\n%.200s", r.out)
			}
		})
	}
}

// TestServerTextInert: what a server answers (an error's type and message,
// an id) reaches stderr and stdout without what would drive a terminal,
// from the mock's admin API as from /v1.
func TestServerTextInert(t *testing.T) {
	t.Parallel()
	evil, _ := json.Marshal("x\u001b]0;pwned\u0007\u001b[2J\u009b31m")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/_mock/contract":
			io.WriteString(w, `{"proxy":false}`)
		case "/_mock/accounts":
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":{"type":%s,"message":%s,"param":%s,"requestId":%s}}`, evil, evil, evil, evil)
		case "/v1/contexts":
			fmt.Fprintf(w, `{"data":[{"id":%s,"name":"n","tags":[],"version":1,"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"}],"hasMore":false,"nextCursor":null}`, evil)
		default:
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprintf(w, `{"error":{"type":%s,"message":%s}}`, evil, evil)
		}
	}))
	defer srv.Close()
	c := &cli{t: t, tty: true, env: map[string]string{"CONTEXTSVC_BASE_URL": srv.URL + "/v1", "CONTEXTSVC_API_KEY": testKey, "NO_COLOR": "1"}}
	for _, args := range [][]string{{"events", "list"}, {"contexts", "get", "ctx_1"}, {"contexts", "list", "-q"}, {"contexts", "list"}} {
		r := c.run(args...)
		if r.out+r.errOut == "" || strings.ContainsAny(r.out+r.errOut, "\u001b\u0007\u009b") {
			t.Errorf("%q wrote a terminal's control characters, or nothing:\nstdout %q\nstderr %q", args, r.out, r.errOut)
		}
	}
}
