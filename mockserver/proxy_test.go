package mockserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/conformance"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/conformance/conformancetest"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/plantest"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/syncbuf"
)

// The keys of the upstream the proxy tests forward to: an Enterprise plan
// whose burst holds a whole conformance run on a fake clock.
const (
	proxyKey     = "sk_test_proxy_write_0123456789"
	proxyReadKey = "sk_test_proxy_read_0123456789"
	proxyAccount = "proxied"
)

func proxyUpstreamKeys(t testing.TB) ([]Option, contextsvc.Plan) {
	plan := plantest.Enterprise(t, 100_000, 10_000)
	return []Option{
		WithKey(Key{Token: proxyKey, Plan: PlanEnterprise, PerMinute: plan.PerMinute(), Burst: plan.Burst(), Account: proxyAccount}),
		WithKey(Key{Token: proxyReadKey, Plan: PlanEnterprise, PerMinute: plan.PerMinute(), Burst: plan.Burst(), Account: proxyAccount, Scope: ScopeRead}),
	}, plan
}

// startProxy serves a validating proxy to upstream (a base URL ending
// in /v1), outside this package's validator when the upstream differs
// from the document on purpose, and returns it, its base URL and its log.
func startProxy(t *testing.T, upstream string, validated bool, opts ...Option) (*Server, string, *syncbuf.Buffer) {
	ts, log := startProxyServer(t, upstream, validated, opts...)
	return ts.Server, ts.URL, log
}

// startProxyServer is startProxy's server as a TestServer.
func startProxyServer(t *testing.T, upstream string, validated bool, opts ...Option) (*TestServer, *syncbuf.Buffer) {
	t.Helper()
	var log syncbuf.Buffer
	opts = append([]Option{WithUpstream(upstream), WithLogger(slog.New(slog.NewJSONHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})))}, opts...)
	if validated {
		return NewTestServer(t, opts...), &log
	}
	s, err := Open(opts...)
	if err != nil {
		t.Fatal(err)
	}
	unvalidated(s)
	hs := httptest.NewServer(s)
	t.Cleanup(func() {
		s.CloseStreams()
		hs.Close()
		if err := s.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return &TestServer{Server: s, URL: hs.URL + "/v1", HTTP: hs}, &log
}

// waitIdle waits for the proxy's checks under way: a caller may have an
// answer whole before the proxy has checked it.
func waitIdle(t *testing.T, s *Server) {
	t.Helper()
	if err := s.WaitIdle(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// conformanceRun runs the contract's checks through baseURL, against
// upstream (on clock).
func conformanceRun(t *testing.T, baseURL string, upstream *Server, clock *FakeClock, plan contextsvc.Plan) *conformance.Report {
	t.Helper()
	lim, err := contextsvc.NewLocalLimiter(plan)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := conformance.Run(t.Context(), conformance.Config{
		BaseURL: baseURL, APIKey: proxyKey, ReadKey: proxyReadKey, Limiter: lim, PerMinute: plan.PerMinute(),
		Document:       OpenAPI(),
		ReceiverListen: "127.0.0.1:0", DeliveryTimeout: 24 * time.Hour, RetryTimeout: 24 * time.Hour,
		Now: clock.Now,
		OnRetryWait: func() {
			go func() {
				if upstream.WaitIdle(context.Background()) == nil {
					clock.Advance(time.Minute)
				}
			}()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range rep.LeftBehind {
		if l.Kind == "webhook" {
			if err := upstream.DeleteWebhook(l.ID); err != nil {
				t.Error(err)
			}
		}
	}
	return rep
}

// TestProxyInFrontOfMock runs every check of the conformance runner
// through a proxy in front of the mock: the run passes, and the proxy
// finds nothing, having seen every operation.
func TestProxyInFrontOfMock(t *testing.T) {
	t.Parallel()
	keys, plan := proxyUpstreamKeys(t)
	clock := NewFakeClock(time.Now())
	up := NewTestServer(t, append(keys, WithClock(clock))...)
	px, base, log := startProxy(t, up.URL, true)
	rep := conformanceRun(t, base, up.Server, clock, plan)
	waitIdle(t, px)
	if !rep.Passed() {
		var b bytes.Buffer
		_ = rep.WriteText(&b)
		t.Fatalf("the run through the proxy failed:\n%s", b.String())
	}
	if f := px.ContractFindings(); len(f) != 0 {
		t.Fatalf("%d findings, first %+v\nlog:\n%s", len(f), f[0], log.String())
	}
	seen := map[string]ContractCount{}
	for _, c := range px.ContractCounts() {
		seen[c.Operation] = c
		if c.Mismatched != 0 || c.Unvalidated != 0 || c.UpstreamFailures != 0 {
			t.Errorf("%+v", c)
		}
	}
	for _, op := range []string{"listContexts", "getContext", "createContext", "updateContext", "deleteContext", "listVersions", "exportContext", "registerWebhook"} {
		if seen[op].Exchanges == 0 {
			t.Errorf("%s: not seen", op)
		}
	}
	// The runner provokes errors with requests the document forbids: the
	// upstream refused them, as it must.
	refused := 0
	for _, c := range seen {
		refused += c.Refused
	}
	if refused == 0 {
		t.Error("no request counted as refused")
	}
	if strings.Contains(log.String(), "contract mismatch") {
		t.Errorf("mismatches logged:\n%s", log.String())
	}
	// The admin routes answer as the document says (this package's
	// validator holds them to it).
	for _, target := range []string{"/_mock/contract", "/_mock/contract/mismatches?order=desc&operation=getContext"} {
		adminGet(t, base, target)
	}
}

// differences lists the distinct mismatches of the findings' answers as
// "where|rule|SDK verdict|operations", sorted (a verdict is the whole
// answer's), and their requests' as "request|where|rule|operations".
func differences(fs []ContractFinding) []string {
	ops := map[string]map[string]bool{}
	add := func(key, op string) {
		if ops[key] == nil {
			ops[key] = map[string]bool{}
		}
		ops[key][op] = true
	}
	for _, f := range fs {
		for _, m := range f.Answer {
			verdict := "no verdict"
			if f.SDKTolerates != nil {
				verdict = fmt.Sprintf("tolerated %t", *f.SDKTolerates)
			}
			add(m.Where+"|"+m.Rule+"|"+verdict, f.Operation)
		}
		for _, m := range f.Request {
			add("request|"+m.Where+"|"+m.Rule, f.Operation)
		}
		if f.Unvalidated != "" {
			add("unvalidated|"+f.Unvalidated, f.Operation)
		}
	}
	var out []string
	for key, set := range ops {
		out = append(out, key+"|"+strings.Join(slices.Sorted(maps.Keys(set)), ","))
	}
	slices.Sort(out)
	return out
}

// TestProxyInFrontOfDifferentServer runs the conformance runner through
// a proxy in front of a server answering in other plausible shapes (bare
// arrays, 204 deletes, other error bodies, no rate-limit headers): the
// proxy reports each difference, with the rule of the document it breaks
// and whether the SDK tolerates it.
func TestProxyInFrontOfDifferentServer(t *testing.T) {
	t.Parallel()
	keys, plan := proxyUpstreamKeys(t)
	clock := NewFakeClock(time.Now())
	up := unvalidated(New(append(keys, WithClock(clock))...))
	hs := httptest.NewServer(conformancetest.Reshape(up))
	t.Cleanup(func() {
		hs.Close()
		if err := up.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	px, base, log := startProxy(t, hs.URL+"/v1", false)
	rep := conformanceRun(t, base, up, clock, plan)
	waitIdle(t, px)
	if rep.Passed() {
		t.Fatal("a different server passed")
	}
	findings := px.ContractFindings()
	const all = "createContext,deleteContext,exportContext,getContext,listContexts,listVersions,registerWebhook,updateContext"
	want := []string{
		// Other error bodies, and a gateway's plain text off the API.
		"body /error|#/components/schemas/Error/required|tolerated true|" + all,
		"body|#/components/schemas/Error/additionalProperties|tolerated true|" + all,
		"header Content-Type|#/components/responses/MethodNotAllowed/content|tolerated true|off the API",
		"header Content-Type|#/components/responses/NotFound/content|tolerated true|off the API",
		// Bare arrays: a full page cannot say more pages follow.
		"body|#/components/schemas/ContextList/type|tolerated false|listContexts",
		"body|#/components/schemas/ContextList/type|tolerated true|listContexts",
		"body|#/components/schemas/VersionList/type|tolerated true|listVersions",
		// No rate-limit headers (on the bare page too).
		"header X-RateLimit-Limit|#/components/headers/X-RateLimit-Limit|tolerated false|listContexts",
		"header X-RateLimit-Limit|#/components/headers/X-RateLimit-Limit|tolerated true|" + all,
		"header X-RateLimit-Remaining|#/components/headers/X-RateLimit-Remaining|tolerated false|listContexts",
		"header X-RateLimit-Remaining|#/components/headers/X-RateLimit-Remaining|tolerated true|" + all,
		"header X-RateLimit-Reset|#/components/headers/X-RateLimit-Reset|tolerated false|listContexts",
		"header X-RateLimit-Reset|#/components/headers/X-RateLimit-Reset|tolerated true|" + all,
		// A create's 200, a delete's 204.
		"status|#/paths/~1v1~1contexts/post/responses|tolerated true|createContext",
		"status|#/paths/~1v1~1contexts~1{id}/delete/responses|tolerated true|deleteContext",
	}
	slices.Sort(want)
	if got := differences(findings); !slices.Equal(got, want) {
		t.Errorf("differences\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Each finding says what the SDK made of the answer; the one it does
	// not tolerate says why.
	mismatches := 0
	for _, f := range findings {
		mismatches += len(f.Request) + len(f.Answer)
		if f.SDKTolerates == nil || f.SDK == "" || f.RequestID == "" || f.Time.IsZero() {
			t.Errorf("%s: a part is missing: %+v", f.ID, f)
		}
		if !*f.SDKTolerates && !strings.Contains(f.SDK, "no further page") {
			t.Errorf("%s: %s", f.ID, f.SDK)
		}
	}
	counted := 0
	for _, c := range px.ContractCounts() {
		counted += c.Mismatches
	}
	if counted != mismatches || mismatches == 0 {
		t.Errorf("the counts say %d mismatches, the findings hold %d", counted, mismatches)
	}
	if n := strings.Count(log.String(), `"msg":"contract mismatch"`); n != mismatches {
		t.Errorf("%d mismatches logged, %d found", n, mismatches)
	}
}

// The secrets a proxied exchange carries, which nothing may show.
const (
	secretKey      = "sk_live_SECRETKEY_abcdef0123"
	secretPassword = "hunter2pw"
	secretURLToken = "tok_URLSECRET_99"
	secretWebhook  = "whsec_BODYSECRET_42"
	secretHookURL  = "https://bot:" + secretPassword + "@hooks.example.com/in?token=" + secretURLToken
	secretsRequest = `{"url":"` + secretHookURL + `","events":["context.created","` + secretWebhook + `"],"secret":"` + secretWebhook + `","note":"` + secretWebhook + `"}`
)

// echoUpstream accepts every request, and answers a webhook's
// registration with its url and secret (which the contract never sends
// back; the secret as the webhook's id too, so that the SDK's reading of
// the answer quotes it), without the contract's headers; a GET gets a 401
// whose param is the caller's Authorization.
func echoUpstream(t *testing.T) string {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var in map[string]any
		_ = json.Unmarshal(body, &in)
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodGet {
			w.WriteHeader(http.StatusUnauthorized)
			_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"type": "unauthorized", "message": "no such key", "param": r.Header.Get("Authorization"), "key": r.Header.Get("Authorization")}})
			return
		}
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"id": in["secret"], "url": in["url"], "secret": in["secret"], "events": in["events"], "active": true,
			"createdAt": "2026-01-02T03:04:05.000Z", "seen": r.Header.Get("Authorization")})
	}))
	t.Cleanup(hs.Close)
	return hs.URL + "/v1"
}

// proxyDo sends a request to the proxy with the secret key.
func proxyDo(t *testing.T, method, url, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+secretKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// adminGet reads an admin route of the server at base (its /v1 URL), and
// holds the answer to openapi.yaml (the proxy's servers that forward to
// a differing upstream are outside this package's validator).
func adminGet(t *testing.T, base, target string) string {
	t.Helper()
	resp, err := http.Get(strings.TrimSuffix(base, "/v1") + target)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", target, resp.StatusCode, b)
	}
	cs, err := contractSpec()
	if err != nil {
		t.Fatal(err)
	}
	path, query, _ := strings.Cut(target, "?")
	if ms := cs.CheckResponse(&contract.Exchange{Method: http.MethodGet, Path: path, RawQuery: query,
		Status: resp.StatusCode, Header: resp.Header, Body: b}, contract.CheckOptions{}); len(ms) > 0 {
		t.Errorf("GET %s does not match openapi.yaml: %v\n%s", target, ms, b)
	}
	return string(b)
}

// TestProxyKeepsSecrets sends the secrets a caller gives (the key, a
// webhook's secret, a receiver URL's password and token) through a proxy
// to an upstream that echoes them back: the caller gets them as the
// upstream sent them, and neither the log, the admin API nor the Go API
// shows one, though the findings quote the parts that hold them.
func TestProxyKeepsSecrets(t *testing.T) {
	t.Parallel()
	px, base, log := startProxy(t, echoUpstream(t), false)
	resp := proxyDo(t, http.MethodPost, base+"/webhooks", secretsRequest)
	echoed, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated || !strings.Contains(string(echoed), secretWebhook) {
		t.Fatalf("the caller does not get the upstream's answer: %d %s", resp.StatusCode, echoed)
	}
	if resp := proxyDo(t, http.MethodGet, base+"/contexts?limit=5", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET: %d", resp.StatusCode)
	}
	waitIdle(t, px)

	findings := px.ContractFindings()
	if len(findings) != 2 {
		t.Fatalf("%d findings, want 2: %+v", len(findings), findings)
	}
	// The findings name the parts that held the secrets: the request's
	// unknown field and bad event type, the answer's secret and url.
	got := differences(findings)
	for _, want := range []string{
		"request|body /events/1|#/components/schemas/EventType/enum|registerWebhook",
		"request|body|#/components/schemas/WebhookRequest/additionalProperties|registerWebhook",
		"body|#/components/schemas/Webhook/additionalProperties|tolerated true|registerWebhook",
		"body /error|#/components/schemas/Error/properties/error/additionalProperties|tolerated true|listContexts",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("no %q among\n%s", want, strings.Join(got, "\n"))
		}
	}

	shown := map[string]string{
		"log":                            log.String(),
		"ContractFindings":               fmt.Sprintf("%+v", findings),
		"GET /_mock/contract":            adminGet(t, base, "/_mock/contract"),
		"GET /_mock/contract/mismatches": adminGet(t, base, "/_mock/contract/mismatches?limit=100"),
	}
	for _, f := range findings {
		shown["GET "+f.ID] = adminGet(t, base, "/_mock/contract/mismatches/"+f.ID)
	}
	// The list pages as the others do, newest first with order=desc, and
	// filters by operation.
	var pg struct {
		Data       []struct{ ID, Operation string }
		HasMore    bool
		NextCursor string
	}
	_ = json.Unmarshal([]byte(adminGet(t, base, "/_mock/contract/mismatches?limit=1&order=desc")), &pg)
	if len(pg.Data) != 1 || pg.Data[0].ID != "cm_2" || !pg.HasMore {
		t.Fatalf("first page %+v", pg)
	}
	_ = json.Unmarshal([]byte(adminGet(t, base, "/_mock/contract/mismatches?limit=1&order=desc&cursor="+pg.NextCursor)), &pg)
	if len(pg.Data) != 1 || pg.Data[0].ID != "cm_1" || pg.HasMore {
		t.Fatalf("second page %+v", pg)
	}
	_ = json.Unmarshal([]byte(adminGet(t, base, "/_mock/contract/mismatches?operation=listContexts")), &pg)
	if len(pg.Data) != 1 || pg.Data[0].Operation != "listContexts" {
		t.Fatalf("filtered page %+v", pg)
	}
	for where, text := range shown {
		for _, secret := range []string{secretKey, secretPassword, secretURLToken, secretWebhook} {
			if strings.Contains(text, secret) {
				t.Errorf("%s shows the secret %q:\n%s", where, secret, text)
			}
		}
	}
	if !strings.Contains(shown["log"], `"msg":"contract mismatch"`) {
		t.Errorf("no mismatch logged:\n%s", shown["log"])
	}
}

// TestProxyMasksByStructure: secrets of one letter (the key "e", a
// receiver URL's user "u", a webhook secret "s") and a key in the query
// are masked where they are, and nowhere else: the findings' messages,
// targets and log lines keep every word whole, and the query's key shows
// nowhere.
func TestProxyMasksByStructure(t *testing.T) {
	t.Parallel()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		// "active" is no boolean; "user" is no field of a Webhook.
		_, _ = io.WriteString(w, `{"id":"wh_abcdefghijklmnopqrstuv","url":"https://u:p@hooks.example.com/in","events":["context.created"],`+
			`"active":"yes","createdAt":"2026-01-02T03:04:05.000Z","user":"u"}`)
	}))
	t.Cleanup(up.Close)
	px, base, log := startProxy(t, up.URL+"/v1", false)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, base+"/webhooks?api_key=QUERYKEYSECRET99",
		strings.NewReader(`{"url":"https://u:p@hooks.example.com/in","events":["context.created"],"secret":"s","note":"Clients and Contexts"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer e")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	waitIdle(t, px)

	findings := px.ContractFindings()
	if len(findings) != 1 {
		t.Fatalf("%d findings, want 1: %+v", len(findings), findings)
	}
	f := findings[0]
	if f.Target != "/v1/webhooks?api_key=xxxxx" {
		t.Errorf("target %q, want the key masked and nothing else", f.Target)
	}
	var messages []string
	for _, m := range append(slices.Clone(f.Request), f.Answer...) {
		messages = append(messages, m.Where+": "+m.Message)
	}
	for _, want := range []string{
		`body: property "note" is unsupported`,
		`body /active: value must be a boolean`,
		`body: property "user" is unsupported`,
	} {
		if !slices.Contains(messages, want) {
			t.Errorf("no %q among the messages:\n%s", want, strings.Join(messages, "\n"))
		}
	}
	if f.SDK == "" || strings.Contains(f.SDK, "xxxxx") {
		t.Errorf("the SDK's verdict %q: masked where nothing is secret", f.SDK)
	}
	shown := map[string]string{
		"log":                            log.String(),
		"ContractFindings":               fmt.Sprintf("%+v", findings),
		"GET /_mock/contract/mismatches": adminGet(t, base, "/_mock/contract/mismatches?limit=100"),
	}
	for where, text := range shown {
		if strings.Contains(text, "QUERYKEYSECRET99") {
			t.Errorf("%s shows the query's key:\n%s", where, text)
		}
		// The one masked value is the query's key: no word lost a letter.
		if n, keys := strings.Count(text, "xxxxx"), strings.Count(text, "api_key=xxxxx"); n != keys || keys == 0 {
			t.Errorf("%s masks %d times, %d of them the query's key:\n%s", where, n, keys, text)
		}
	}
	if !strings.Contains(shown["log"], "value must be a boolean") {
		t.Errorf("the log lacks the mismatch:\n%s", shown["log"])
	}
}

// TestProxyUpstreamTimeout: WithUpstreamTimeout bounds the wait for an
// upstream that never answers: the caller gets the contract's 504 when
// it ends (on synctest's clock), and the finding says so. (The proxy's
// own tests cover each limit.)
func TestProxyUpstreamTimeout(t *testing.T) {
	t.Parallel()
	if _, err := Open(WithUpstream("https://api.example.com/v1"), WithUpstreamTimeout(0)); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("WithUpstreamTimeout(0): %v", err)
	}
	if _, err := Open(WithUpstream("https://api.example.com/v1"), WithUpstreamIdleTimeout(-time.Second)); !errors.Is(err, ErrInvalidOption) {
		t.Errorf("WithUpstreamIdleTimeout(-1s): %v", err)
	}
	synctest.Test(t, func(t *testing.T) {
		stalled := roundTripFunc(func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done()
			return nil, r.Context().Err()
		})
		s, err := Open(WithUpstream("https://api.example.com/v1"), WithUpstreamTransport(stalled), WithUpstreamTimeout(5*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close(context.Background())
		rec := httptest.NewRecorder()
		start := time.Now()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/contexts", nil))
		if elapsed := time.Since(start); rec.Code != http.StatusGatewayTimeout || elapsed != 5*time.Second ||
			!strings.Contains(rec.Body.String(), `"type":"unavailable"`) {
			t.Errorf("after %s: %d %s", elapsed, rec.Code, rec.Body)
		}
		fs := s.ContractFindings()
		if len(fs) != 1 || fs[0].Status != http.StatusGatewayTimeout || !strings.Contains(fs[0].Unvalidated, "upstream time-out (5s)") {
			t.Errorf("findings %+v", fs)
		}
	})
}

// roundTripFunc is a transport made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestProxyUnvalidatedAndFailures covers what the proxy cannot hold to
// the document: bodies over MaxValidatedBody stream through whole and are
// counted unvalidated, and an upstream that does not answer gets the
// caller the contract's error body with a 502.
func TestProxyUnvalidatedAndFailures(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("sends 2 × 8 MiB bodies")
	}
	big := strings.Repeat("x", MaxValidatedBody+1)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		h := w.Header()
		h.Set("X-Request-Id", "req_abcdefghijklmnopqrstuv")
		h.Set("X-RateLimit-Limit", "600")
		h.Set("X-RateLimit-Remaining", "599")
		h.Set("X-RateLimit-Reset", "1")
		h.Set("Content-Type", "text/markdown; charset=utf-8")
		if r.Method == http.MethodPost {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprintf(w, `{"error":{"type":"invalid_request","message":"%d bytes","requestId":"req_abcdefghijklmnopqrstuv"}}`, n)
			return
		}
		_, _ = io.WriteString(w, big)
	}))
	t.Cleanup(up.Close)
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()

	tests := []struct {
		name, upstream, method, path, body string
		wantStatus, wantLen                int
		want                               ContractCount
	}{
		{name: "an answer over the bound", upstream: up.URL, method: http.MethodGet, path: "/contexts/ctx_abcdefghijklmnopqrstuv/export",
			wantStatus: http.StatusOK, wantLen: len(big),
			want: ContractCount{Operation: "exportContext", Exchanges: 1, Unvalidated: 1}},
		{name: "a request over the bound", upstream: up.URL, method: http.MethodPost, path: "/contexts", body: big,
			wantStatus: http.StatusBadRequest,
			want:       ContractCount{Operation: "createContext", Exchanges: 1, Unvalidated: 1}},
		{name: "an upstream that does not answer", upstream: gone.URL, method: http.MethodGet, path: "/contexts",
			wantStatus: http.StatusBadGateway,
			want:       ContractCount{Operation: "listContexts", Exchanges: 1, UpstreamFailures: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			px, base, _ := startProxy(t, tt.upstream+"/v1", tt.wantStatus == http.StatusBadGateway)
			resp := proxyDo(t, tt.method, base+tt.path, tt.body)
			body, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != tt.wantStatus {
				t.Fatalf("%d %v %.300s", resp.StatusCode, err, body)
			}
			if tt.wantLen > 0 && len(body) != tt.wantLen {
				t.Errorf("the caller got %d bytes of %d", len(body), tt.wantLen)
			}
			waitIdle(t, px)
			if tt.wantStatus == http.StatusBadGateway {
				var e struct {
					Error struct{ Type, Message, RequestID string }
				}
				if json.Unmarshal(body, &e) != nil || e.Error.Type != "unavailable" || e.Error.RequestID != resp.Header.Get("X-Request-Id") ||
					!strings.HasPrefix(e.Error.RequestID, "req_") || !strings.Contains(e.Error.Message, "the upstream did not answer") {
					t.Errorf("the 502's body: %s (X-Request-Id %q)", body, resp.Header.Get("X-Request-Id"))
				}
			}
			if got := px.ContractCounts(); len(got) != 1 || got[0] != tt.want {
				t.Errorf("counts %+v, want %+v", got, tt.want)
			}
			fs := px.ContractFindings()
			if len(fs) != 1 || fs[0].Unvalidated == "" || len(fs[0].Answer) != 0 {
				t.Errorf("findings %+v", fs)
			}
		})
	}
}
