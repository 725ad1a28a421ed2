package mockcmd

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/mockrules"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/syncbuf"
	"github.com/google/go-cmp/cmp"
)

// startCommand runs the command (run, as main does, with these flags) on
// a free loopback port until the test ends, and returns its base URL (with
// /v1) and its log.
func startCommand(t *testing.T, args ...string) (baseURL string, log *syncbuf.Buffer) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	log = &syncbuf.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, append([]string{"-addr", "127.0.0.1:0"}, args...), pw, log)
		pw.Close()
	}()
	t.Cleanup(func() {
		cancel()
		code := <-done
		if code != exitOK {
			t.Errorf("the command exited %d\n%s", code, log.String())
		}
	})
	baseURL, _ = readReady(t, pr)
	go io.Copy(io.Discard, pr)
	return baseURL, log
}

// exchange is one raw request's answer.
type exchange struct {
	status int
	header http.Header
	body   []byte
}

// send makes one request with key ("" for none) and reads the answer.
func send(t *testing.T, method, url, key, body string) exchange {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return exchange{res.StatusCode, res.Header, b}
}

// comparable returns what of a 404 must be the same for another
// account's context and a missing one: the status, the header names with
// the values that do not vary per request, and the error body with the
// id in the path written as ID and without its request id.
func (e exchange) comparable(id string) string {
	var names []string
	for k := range e.header {
		switch k {
		case "X-Request-Id", "Date":
			names = append(names, k)
		default:
			names = append(names, k+": "+strings.Join(e.header[k], ","))
		}
	}
	sort.Strings(names)
	var body struct {
		Error map[string]string `json:"error"`
	}
	_ = json.Unmarshal(e.body, &body)
	delete(body.Error, "requestId")
	b, _ := json.Marshal(body.Error)
	return strings.Join(names, "\n") + "\n" + strings.ReplaceAll(string(b), id, "ID") + "\n" + http.StatusText(e.status)
}

// TestCommandAccountsIsolateContexts starts the command with keys of three
// accounts: every endpoint answers another account's context exactly as a
// missing one (a 404, same headers, same body but for the id), changes
// nothing, and lists only the account's own contexts; the admin publish,
// which is admin-wide, fires the event in the context's own account.
func TestCommandAccountsIsolateContexts(t *testing.T) {
	t.Parallel()
	base, _ := startCommand(t,
		"-key", "sk_acme:unlimited:write:acme", "-key", "sk_acme_reader:unlimited:read:acme",
		"-key", "sk_globex:unlimited:write:globex", "-key", "sk_default:unlimited")
	ctx := t.Context()
	acme, err := contextsvc.NewClient("sk_acme", contextsvc.WithBaseURL(base))
	if err != nil {
		t.Fatal(err)
	}
	c, err := acme.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Acme plans", Content: "# Plans\n\nsecret roadmap\n", Tags: []string{"plans"}})
	if err != nil {
		t.Fatal(err)
	}
	content := "# Plans\n\nsecret roadmap, revised\n"
	if _, err := acme.Contexts.Update(ctx, c.ID, &contextsvc.UpdateContextRequest{Content: &content}); err != nil {
		t.Fatal(err)
	}
	const missing = "ctx_aaaaaaaaaaaaaaaaaaaaaaaa" // the shape of an id, never issued

	endpoints := []struct{ method, path, body string }{
		{"GET", "/contexts/%s", ""},
		{"PUT", "/contexts/%s", `{"content":"overwritten"}`},
		{"PUT", "/contexts/%s", `{"name":"Renamed","tags":[]}`},
		{"DELETE", "/contexts/%s", ""},
		{"GET", "/contexts/%s/versions", ""},
		{"GET", "/contexts/%s/versions?limit=1", ""},
		{"GET", "/contexts/%s/export", ""},
		{"GET", "/contexts/%s/export?format=html", ""},
		{"GET", "/contexts/%s/export?format=text", ""},
		{"GET", "/contexts/%s/export?format=json", ""},
		{"GET", "/contexts/%s/export?format=pdf", ""},
		{"GET", "/contexts/%s/export?format=md&version=1", ""},
	}
	for _, key := range []string{"sk_globex", "sk_default"} {
		for _, ep := range endpoints {
			path := func(id string) string { return base + strings.Replace(ep.path, "%s", id, 1) }
			foreign := send(t, ep.method, path(c.ID), key, ep.body)
			absent := send(t, ep.method, path(missing), key, ep.body)
			if foreign.status != http.StatusNotFound {
				t.Errorf("%s: %s %s of another account's context: %d %s", key, ep.method, ep.path, foreign.status, foreign.body)
				continue
			}
			if diff := cmp.Diff(absent.comparable(missing), foreign.comparable(c.ID)); diff != "" {
				t.Errorf("%s: %s %s: another account's context is not answered as a missing one (-missing +foreign):\n%s", key, ep.method, ep.path, diff)
			}
			// The account's own keys still see it (the read key reads).
			if ep.method == "GET" {
				if own := send(t, ep.method, path(c.ID), "sk_acme_reader", ""); own.status != http.StatusOK {
					t.Errorf("sk_acme_reader: %s %s: %d %s", ep.method, ep.path, own.status, own.body)
				}
			}
		}
		// Its lists hold nothing of the other account.
		var page struct{ Data []contextsvc.Context }
		if e := send(t, "GET", base+"/contexts?tag=plans", key, ""); e.status != 200 || json.Unmarshal(e.body, &page) != nil || len(page.Data) != 0 {
			t.Errorf("%s lists %d %s", key, e.status, e.body)
		}
	}
	// Nothing the other accounts sent changed it.
	got, err := acme.Contexts.Get(ctx, c.ID)
	if err != nil || got.Version != 2 || got.Content != content || got.Name != "Acme plans" || !slices.Equal(got.Tags, []string{"plans"}) {
		t.Errorf("after the other accounts' requests: %+v %v", got, err)
	}
	// The default account's own context is its own, too.
	def, err := contextsvc.NewClient("sk_default", contextsvc.WithBaseURL(base))
	if err != nil {
		t.Fatal(err)
	}
	dc, err := def.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Default's"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := acme.Contexts.Get(ctx, dc.ID); !errors.Is(err, contextsvc.ErrNotFound) {
		t.Errorf("acme reads the default account's context: %v", err)
	}

	// The admin publish is admin-wide (no key): any account's context. Its
	// event is that account's, by the user of that account's keys.
	admin := strings.TrimSuffix(base, "/v1") + "/_mock"
	e := send(t, "POST", admin+"/contexts/"+c.ID+"/publish", "", "")
	var ev struct {
		Account string
		Data    struct{ ContextID, PublishedBy string }
	}
	if e.status != http.StatusCreated || json.Unmarshal(e.body, &ev) != nil || ev.Account != "acme" ||
		ev.Data.ContextID != c.ID || ev.Data.PublishedBy != mockrules.AccountUser("acme") {
		t.Errorf("publish: %d %s", e.status, e.body)
	}
	if e := send(t, "POST", admin+"/contexts/"+missing+"/publish", "", ""); e.status != http.StatusNotFound {
		t.Errorf("publish of a missing context: %d %s", e.status, e.body)
	}
}

// accountReceiver is one account's webhook receiver: it verifies with the
// account's secret and records the event ids it gets.
type accountReceiver struct {
	*httptest.Server
	mu     sync.Mutex
	events []string
	got    chan struct{}
}

func newAccountReceiver(t *testing.T, secret string) *accountReceiver {
	ar := &accountReceiver{got: make(chan struct{}, 100)}
	ar.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		ev, err := contextsvc.ConstructEvent(body, r.Header.Get("X-Service-Signature"), secret)
		if err != nil {
			t.Errorf("receiver of %s: %v", secret, err)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		ar.mu.Lock()
		ar.events = append(ar.events, ev.ID)
		ar.mu.Unlock()
		ar.got <- struct{}{}
	}))
	t.Cleanup(ar.Close)
	return ar
}

// TestCommandAccountsIsolateEvents starts the command with keys of three
// accounts, each with a webhook for every event type, and fires events in
// each: a webhook gets its own account's events, every one of them, and
// never another's; the admin lists say the same.
func TestCommandAccountsIsolateEvents(t *testing.T) {
	t.Parallel()
	base, _ := startCommand(t, "-key", "sk_acme:unlimited:write:acme", "-key", "sk_globex:unlimited:write:globex", "-key", "sk_default:unlimited")
	admin := strings.TrimSuffix(base, "/v1") + "/_mock"
	ctx := t.Context()
	accounts := []struct{ name, key string }{{"acme", "sk_acme"}, {"globex", "sk_globex"}, {mockserver.DefaultAccount, "sk_default"}}
	receivers := map[string]*accountReceiver{}
	hooks := map[string]string{}
	clients := map[string]*contextsvc.Client{}
	for _, a := range accounts {
		receivers[a.name] = newAccountReceiver(t, "whsec_"+a.name)
		cl, err := contextsvc.NewClient(a.key, contextsvc.WithBaseURL(base))
		if err != nil {
			t.Fatal(err)
		}
		clients[a.name] = cl
		wh, err := cl.Webhooks.Register(ctx, &contextsvc.RegisterWebhookRequest{URL: receivers[a.name].URL, Events: contextsvc.AllEventTypes(), Secret: "whsec_" + a.name})
		if err != nil {
			t.Fatal(err)
		}
		hooks[a.name] = wh.ID
	}

	// Events in every account: each context's life, an export, and the
	// admin's publish and team events.
	for i, a := range accounts {
		cl := clients[a.name]
		c, err := cl.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Doc of " + a.name})
		if err != nil {
			t.Fatal(err)
		}
		content := strings.Repeat("word ", i+1)
		if _, err := cl.Contexts.Update(ctx, c.ID, &contextsvc.UpdateContextRequest{Content: &content}); err != nil {
			t.Fatal(err)
		}
		ex, err := cl.Contexts.Export(ctx, c.ID, &contextsvc.ExportOptions{Format: contextsvc.ExportJSON})
		if err != nil {
			t.Fatal(err)
		}
		ex.Body.Close()
		if e := send(t, "POST", admin+"/contexts/"+c.ID+"/publish", "", ""); e.status != http.StatusCreated {
			t.Fatalf("publish: %d %s", e.status, e.body)
		}
		if _, err := cl.Contexts.Delete(ctx, c.ID); err != nil {
			t.Fatal(err)
		}
	}
	body := `{"type":"team.member.added","account":"globex","data":{"teamId":"team_aaaaaaaaaaaaaaaaaaaa","userId":"user_bbbbbbbbbbbbbbbbbbbb","role":"editor"}}`
	if e := send(t, "POST", admin+"/events", "", body); e.status != http.StatusCreated {
		t.Fatalf("emit: %d %s", e.status, e.body)
	}

	// Every event belongs to the account that fired it.
	want := map[string][]string{}
	var page struct {
		Data []struct {
			ID, Account string
			Data        map[string]any
		}
		HasMore bool
	}
	if e := send(t, "GET", admin+"/events?limit=100", "", ""); e.status != 200 || json.Unmarshal(e.body, &page) != nil || page.HasMore {
		t.Fatalf("events: %d %s", e.status, e.body)
	}
	for _, ev := range page.Data {
		want[ev.Account] = append(want[ev.Account], ev.ID)
		for _, k := range []string{"createdBy", "updatedBy", "deletedBy", "publishedBy"} {
			if by, ok := ev.Data[k]; ok && by != mockrules.AccountUser(ev.Account) {
				t.Errorf("event %s of %s: %s is %v, want the account's user", ev.ID, ev.Account, k, by)
			}
		}
	}
	// created, version.created, updated, version.created, export.completed,
	// published, deleted; and globex's team event.
	if len(want["acme"]) != 7 || len(want["globex"]) != 8 || len(want[mockserver.DefaultAccount]) != 7 {
		t.Fatalf("events per account: %v", want)
	}

	for _, a := range accounts {
		// The deliveries are made when the events fire: the lists are
		// complete now.
		var dl struct {
			Data    []mockserver.Delivery
			HasMore bool
		}
		if e := send(t, "GET", admin+"/deliveries?limit=100&webhookId="+hooks[a.name], "", ""); e.status != 200 || json.Unmarshal(e.body, &dl) != nil || dl.HasMore {
			t.Fatalf("deliveries: %d %s", e.status, e.body)
		}
		var delivered []string
		for _, d := range dl.Data {
			delivered = append(delivered, d.EventID)
		}
		if diff := cmp.Diff(sorted(want[a.name]), sorted(delivered)); diff != "" {
			t.Errorf("deliveries to %s's webhook (-its events +delivered):\n%s", a.name, diff)
		}
		// The receiver gets them all (and, verifying with its own
		// secret, would refuse another account's).
		for range want[a.name] {
			<-receivers[a.name].got
		}
		ar := receivers[a.name]
		ar.mu.Lock()
		got := sorted(ar.events)
		ar.mu.Unlock()
		if diff := cmp.Diff(sorted(want[a.name]), got); diff != "" {
			t.Errorf("%s's receiver (-its events +received):\n%s", a.name, diff)
		}
		// The admin list of the account's webhooks has its own only.
		var wl struct{ Data []mockserver.Webhook }
		if e := send(t, "GET", admin+"/webhooks?account="+a.name, "", ""); e.status != 200 || json.Unmarshal(e.body, &wl) != nil ||
			len(wl.Data) != 1 || wl.Data[0].ID != hooks[a.name] || wl.Data[0].Account != a.name {
			t.Errorf("webhooks of %s: %d %s", a.name, e.status, e.body)
		}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
