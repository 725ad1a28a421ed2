package mockserver

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/ids"
)

// countEvents counts the server's recorded events by type.
func countEvents(s *Server) map[contextsvc.EventType]int {
	n := map[contextsvc.EventType]int{}
	for _, ev := range s.Events() {
		n[ev.Type]++
	}
	return n
}

// keyed is a POST carrying an Idempotency-Key.
func keyed(path, body, key string) call {
	return call{method: "POST", path: path, body: body, header: map[string]string{"Idempotency-Key": key}}
}

func TestIdempotentReplay(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	first := do(t, ts, keyed("/v1/contexts", `{"name":"Runbook","tags":["ops"]}`, "create-runbook-1"))
	if first.Status != http.StatusCreated || first.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d %q %s", first.Status, first.Header.Get("Idempotent-Replayed"), first.Body)
	}
	again := do(t, ts, keyed("/v1/contexts", `{"name":"Runbook","tags":["ops"]}`, "create-runbook-1"))
	if again.Status != http.StatusCreated || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("repeat: %d Idempotent-Replayed %q", again.Status, again.Header.Get("Idempotent-Replayed"))
	}
	if string(again.Body) != string(first.Body) || again.Header.Get("Content-Type") != "application/json" {
		t.Errorf("repeat body %s (%s), want the first's %s", again.Body, again.Header.Get("Content-Type"), first.Body)
	}
	if a, b := first.Header.Get("X-Request-Id"), again.Header.Get("X-Request-Id"); a == b {
		t.Errorf("the repeat kept the request id %s; the contract wants a new one", a)
	}
	if again.Header.Get("X-RateLimit-Remaining") == "" {
		t.Error("the repeat lacks its own rate-limit headers")
	}
	// Webhook registration is a POST too.
	hook := `{"url":"https://hooks.example/in","events":["context.created"],"secret":"s"}`
	w1 := do(t, ts, keyed("/v1/webhooks", hook, "register-1"))
	w2 := do(t, ts, keyed("/v1/webhooks", hook, "register-1"))
	if w1.Status != http.StatusCreated || w2.Status != http.StatusCreated || string(w1.Body) != string(w2.Body) || w2.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("webhook: %d %s then %d %s", w1.Status, w1.Body, w2.Status, w2.Body)
	}

	snap := ts.Snapshot()
	if len(snap.Contexts) != 1 || len(snap.Webhooks) != 1 {
		t.Errorf("%d contexts, %d webhooks stored; want one of each", len(snap.Contexts), len(snap.Webhooks))
	}
	want := map[contextsvc.EventType]int{contextsvc.EventContextCreated: 1, contextsvc.EventContextVersionCreated: 1}
	if diff := cmp.Diff(want, countEvents(ts.Server)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	// Without a key, the same body creates again.
	create(t, ts, `{"name":"Runbook","tags":["ops"]}`)
	if n := len(ts.Snapshot().Contexts); n != 2 {
		t.Errorf("%d contexts after an unkeyed create, want 2", n)
	}
}

func TestIdempotencyKeyScope(t *testing.T) {
	t.Parallel()
	// Two keys of account A share idempotency keys; account B's key does
	// not see them.
	ts := NewTestServer(t,
		WithKey(Key{Token: "sk_a1", Account: "acct_a"}),
		WithKey(Key{Token: "sk_a2", Account: "acct_a"}),
		WithKey(Key{Token: "sk_b", Account: "acct_b"}))
	body := `{"name":"Doc"}`
	call := func(token string) *response {
		c := keyed("/v1/contexts", body, "shared-key")
		c.key = token
		return do(t, ts, c)
	}
	a1, a2, b := call("sk_a1"), call("sk_a2"), call("sk_b")
	if a1.Status != 201 || a2.Status != 201 || b.Status != 201 {
		t.Fatalf("statuses %d %d %d", a1.Status, a2.Status, b.Status)
	}
	if a2.Header.Get("Idempotent-Replayed") != "true" || string(a2.Body) != string(a1.Body) {
		t.Errorf("another key of the same account was not replayed: %s", a2.Body)
	}
	if b.Header.Get("Idempotent-Replayed") != "" || string(b.Body) == string(a1.Body) {
		t.Errorf("another account got account A's answer: %s", b.Body)
	}
	if na, nb := len(ts.Contexts("acct_a")), len(ts.Contexts("acct_b")); na != 1 || nb != 1 {
		t.Errorf("contexts: account A %d, account B %d; want 1 each", na, nb)
	}
}

func TestIdempotencyKeyReusedOrMalformed(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	if r := do(t, ts, keyed("/v1/contexts", `{"name":"Doc"}`, "k1")); r.Status != 201 {
		t.Fatalf("first: %d %s", r.Status, r.Body)
	}
	tests := []struct {
		name string
		c    call
	}{
		{"another body", keyed("/v1/contexts", `{"name":"Other"}`, "k1")},
		{"the same JSON spelt differently", keyed("/v1/contexts", `{ "name": "Doc" }`, "k1")},
		{"another path", keyed("/v1/webhooks", `{"url":"https://h.example/","events":["context.created"],"secret":"s"}`, "k1")},
		{"empty", call{method: "POST", path: "/v1/contexts", body: `{"name":"A"}`, header: map[string]string{"Idempotency-Key": ""}}},
		{"256 characters", call{method: "POST", path: "/v1/contexts", body: `{"name":"A"}`, header: map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}}},
		{"not ASCII", call{method: "POST", path: "/v1/contexts", body: `{"name":"A"}`, header: map[string]string{"Idempotency-Key": "clé"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := do(t, ts, tt.c)
			if typ, param := r.errorOf(t); r.Status != 400 || typ != "invalid_request" || param != "Idempotency-Key" {
				t.Errorf("%d %s, want 400 invalid_request param Idempotency-Key", r.Status, r.Body)
			}
		})
	}
	// Two Idempotency-Key headers: which one counts is ambiguous.
	req, _ := http.NewRequest("POST", ts.URL+"/contexts", strings.NewReader(`{"name":"A"}`))
	req.Header.Set("Authorization", "Bearer "+ts.APIKey)
	req.Header.Add("Idempotency-Key", "a")
	req.Header.Add("Idempotency-Key", "b")
	res, err := ts.HTTP.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 400 {
		t.Errorf("two keys: %d, want 400", res.StatusCode)
	}
	// 255 printable characters, spaces included, are a key.
	long := strings.Repeat("a b~", 63) + "xyz"
	if r := do(t, ts, keyed("/v1/contexts", `{"name":"Long"}`, long)); r.Status != 201 {
		t.Errorf("a 255-character key: %d %s", r.Status, r.Body)
	}
	if n := len(ts.Snapshot().Contexts); n != 2 {
		t.Errorf("%d contexts stored, want 2 (the refused requests store nothing)", n)
	}
}

func TestIdempotencyStoresClientErrors(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	c := keyed("/v1/contexts", `{"content":"no name"}`, "bad-create")
	first, again := do(t, ts, c), do(t, ts, c)
	if first.Status != 400 || again.Status != 400 || string(again.Body) != string(first.Body) || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("a 400 is stored and replayed: %d %s then %d %q %s", first.Status, first.Body, again.Status, again.Header.Get("Idempotent-Replayed"), again.Body)
	}
}

// TestIdempotencyAnswersBeforeTheOperationAreNotStored: a 429 or an
// injected fault is answered before the operation runs; replaying it once
// the cause is gone would fail the request for 24 hours.
func TestIdempotencyAnswersBeforeTheOperationAreNotStored(t *testing.T) {
	t.Parallel()
	clock := NewFakeClock(t0)
	ts := NewTestServer(t, WithClock(clock), WithKey(Key{Token: "sk_free", Plan: PlanFree}))
	c := keyed("/v1/contexts", `{"name":"Doc"}`, "k")
	c.key = "sk_free"
	for range 10 { // the Free plan's burst
		do(t, ts, call{method: "GET", path: "/v1/contexts", key: "sk_free"})
	}
	if r := do(t, ts, c); r.Status != 429 {
		t.Fatalf("with an empty bucket: %d", r.Status)
	}
	clock.Advance(time.Second)
	if err := ts.AddFault(Fault{Method: "POST", Status: 503}); err != nil {
		t.Fatal(err)
	}
	if r := do(t, ts, c); r.Status != 503 {
		t.Fatalf("faulted: %d", r.Status)
	}
	clock.Advance(time.Second)
	if r := do(t, ts, c); r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("after the 429 and the fault: %d replayed %q; want a fresh 201", r.Status, r.Header.Get("Idempotent-Replayed"))
	}
}

// serveDirect runs one keyed POST through the idempotency store, as the
// server's default key, with the given operation.
func serveDirect(s *Server, key, body string, h http.HandlerFunc) *httptest.ResponseRecorder {
	req := httptest.NewRequest("POST", "/v1/contexts", strings.NewReader(body))
	req.Header.Set("Idempotency-Key", key)
	rec := httptest.NewRecorder()
	rec.Header().Set("X-Request-Id", ids.New("req_"))
	s.svc.Idem.Serve(rec, req, s.svc.Engine, s.DefaultKey().Account, h)
	return rec
}

func TestIdempotencyServerErrorsAreNotStored(t *testing.T) {
	t.Parallel()
	s := New()
	runs := 0
	h := func(w http.ResponseWriter, r *http.Request) {
		runs++
		if runs == 1 {
			httpapi.WriteError(w, &httpapi.Error{Status: http.StatusServiceUnavailable, Type: httpapi.TypeUnavailable, Message: "busy"})
			return
		}
		httpapi.WriteJSON(w, http.StatusCreated, []byte(`{"run":2}`))
	}
	if rec := serveDirect(s, "k", `{}`, h); rec.Code != 503 {
		t.Fatalf("first: %d", rec.Code)
	}
	if rec := serveDirect(s, "k", `{}`, h); rec.Code != 201 || rec.Header().Get("Idempotent-Replayed") != "" {
		t.Fatalf("after a 503 the repeat must run afresh: %d %q", rec.Code, rec.Header().Get("Idempotent-Replayed"))
	}
	if rec := serveDirect(s, "k", `{}`, h); rec.Code != 201 || rec.Body.String() != `{"run":2}` || runs != 2 {
		t.Errorf("third: %d %s after %d runs; want the stored 201 of run 2", rec.Code, rec.Body, runs)
	}
	// A panicking operation (the server answers 500) is forgotten too.
	boom := func(http.ResponseWriter, *http.Request) { panic("boom") }
	func() {
		defer func() { _ = recover() }()
		serveDirect(s, "p", `{}`, boom)
	}()
	if rec := serveDirect(s, "p", `{}`, h); rec.Code != 201 || rec.Header().Get("Idempotent-Replayed") != "" {
		t.Errorf("after a panic: %d %q, want a fresh run", rec.Code, rec.Header().Get("Idempotent-Replayed"))
	}
}

func TestIdempotencyConflictWhileRunning(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	s := ts.Server
	started, release := make(chan struct{}), make(chan struct{})
	slow := func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		httpapi.WriteJSON(w, http.StatusCreated, []byte(`{"slow":true}`))
	}
	var wg sync.WaitGroup
	var first *httptest.ResponseRecorder
	wg.Go(func() { first = serveDirect(s, "k", `{"a":1}`, slow) })
	<-started
	unused := func(http.ResponseWriter, *http.Request) { t.Error("the repeat ran the operation") }
	running := serveDirect(s, "k", `{"a":1}`, unused)
	// Another body with the running key is a 400, not a 409: retrying it
	// would never help.
	other := serveDirect(s, "k", `{"a":2}`, unused)
	close(release)
	wg.Wait()
	after := serveDirect(s, "k", `{"a":1}`, unused)

	// The 409 as the document states it.
	ex := &exchange{
		method: "POST", path: "/v1/contexts",
		reqHeader: http.Header{"Authorization": {"Bearer k"}, "Content-Type": {"application/json"}, "Idempotency-Key": {"k"}},
		reqBody:   []byte(`{"name":"x"}`), bodyKnown: true,
		status: running.Code, header: running.Header(), body: running.Body.Bytes(),
	}
	if problems := checkExchange(s, ex); len(problems) > 0 {
		t.Errorf("the 409 does not match openapi.yaml: %s", strings.Join(problems, "; "))
	}

	var e httpapi.ErrorBody
	if err := json.Unmarshal(running.Body.Bytes(), &e); err != nil || running.Code != 409 || e.Error.Type != "conflict" {
		t.Errorf("while running: %d %s, want 409 conflict", running.Code, running.Body)
	}
	if err := json.Unmarshal(other.Body.Bytes(), &e); err != nil || other.Code != 400 || e.Error.Param != "Idempotency-Key" {
		t.Errorf("another body while running: %d %s", other.Code, other.Body)
	}
	if first.Code != 201 || after.Code != 201 || after.Body.String() != `{"slow":true}` || after.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("first %d, after %d %s", first.Code, after.Code, after.Body)
	}
}

func TestIdempotencyExpiresAfter24Hours(t *testing.T) {
	t.Parallel()
	clock := NewFakeClock(t0)
	ts := NewTestServer(t, WithClock(clock))
	c := keyed("/v1/contexts", `{"name":"Doc"}`, "daily")
	first := do(t, ts, c)
	clock.Advance(IdempotencyTTL - time.Millisecond)
	if r := do(t, ts, c); r.Header.Get("Idempotent-Replayed") != "true" || string(r.Body) != string(first.Body) {
		t.Errorf("just before 24 h: %d replayed %q", r.Status, r.Header.Get("Idempotent-Replayed"))
	}
	clock.Advance(time.Millisecond)
	if r := do(t, ts, c); r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "" || string(r.Body) == string(first.Body) {
		t.Errorf("at 24 h: %d replayed %q, want a new context", r.Status, r.Header.Get("Idempotent-Replayed"))
	}
	if n := len(ts.Snapshot().Contexts); n != 2 {
		t.Errorf("%d contexts, want 2", n)
	}
	if keys, _ := ts.svc.Idem.Stats(); keys != 1 {
		t.Errorf("%d keys kept, want 1 (the expired one is gone)", keys)
	}
}

func TestResetForgetsIdempotencyKeys(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	c := keyed("/v1/contexts", `{"name":"Doc"}`, "k")
	do(t, ts, c)
	if r := admin(t, ts, "POST", "/_mock/reset", ""); r.Status != http.StatusNoContent {
		t.Fatalf("reset: %d", r.Status)
	}
	if r := do(t, ts, c); r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("after reset: %d replayed %q, want a fresh create", r.Status, r.Header.Get("Idempotent-Replayed"))
	}
	if n := len(ts.Snapshot().Contexts); n != 1 {
		t.Errorf("%d contexts, want 1", n)
	}
}
