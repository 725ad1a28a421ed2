package mockserver

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

func TestFaultStatuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		fault      string
		status     int
		typ        string
		retryAfter string
	}{
		{"500", `{"status":500}`, 500, "internal", ""},
		{"429 default retry-after", `{"status":429}`, 429, "rate_limited", "1"},
		{"429", `{"status":429,"retryAfter":7}`, 429, "rate_limited", "7"},
		{"503", `{"status":503,"retryAfter":30}`, 503, "unavailable", "30"},
		{"503 without retry-after", `{"status":503}`, 503, "unavailable", ""},
		{"502", `{"status":502}`, 502, "internal", ""},
		{"404", `{"status":404}`, 404, "not_found", ""},
		{"409", `{"status":409}`, 409, "conflict", ""},
		{"400", `{"status":400}`, 400, "invalid_request", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := NewTestServer(t)
			r := admin(t, ts, "POST", "/_mock/faults", tc.fault)
			if r.Status != http.StatusCreated {
				t.Fatalf("add fault: %d %s", r.Status, r.Body)
			}
			r = do(t, ts, call{method: "GET", path: "/v1/contexts"})
			if typ, _ := r.errorOf(t); r.Status != tc.status || typ != tc.typ || r.Header.Get("Retry-After") != tc.retryAfter {
				t.Errorf("faulted: %d %s Retry-After %q", r.Status, r.Body, r.Header.Get("Retry-After"))
			}
			if tc.status == 429 && r.Header.Get("X-RateLimit-Remaining") != "0" {
				t.Errorf("429 with X-RateLimit-Remaining %q", r.Header.Get("X-RateLimit-Remaining"))
			}
			// times defaults to 1: the next request is served.
			if r := do(t, ts, call{method: "GET", path: "/v1/contexts"}); r.Status != 200 {
				t.Errorf("after the fault: %d", r.Status)
			}
		})
	}
}

func TestFaultMatching(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	c := create(t, ts, `{"name":"Doc"}`)
	mustAdd := func(f Fault) {
		t.Helper()
		if err := ts.AddFault(f); err != nil {
			t.Fatal(err)
		}
	}
	mustAdd(Fault{Method: "put", Path: "/v1/contexts/*", Status: 500, Times: 2})
	mustAdd(Fault{Path: "/v1/webhooks", Status: 503})
	want := []Fault{{Method: "PUT", Path: "/v1/contexts/*", Status: 500, Times: 2}, {Path: "/v1/webhooks", Status: 503, Times: 1}}
	if diff := cmp.Diff(want, ts.Faults()); diff != "" {
		t.Errorf("faults (-want +got):\n%s", diff)
	}
	// Other methods and paths pass.
	if r := do(t, ts, call{method: "GET", path: "/v1/contexts/" + c.ID}); r.Status != 200 {
		t.Errorf("GET: %d", r.Status)
	}
	if r := do(t, ts, call{method: "PUT", path: "/v1/contexts", body: `{}`}); r.Status != 405 {
		t.Errorf("PUT on the list: %d", r.Status)
	}
	// A request without a valid key gets its 401 and uses no fault.
	if r := do(t, ts, call{method: "PUT", path: "/v1/contexts/" + c.ID, body: `{"name":"x"}`, key: "sk_wrong"}); r.Status != 401 {
		t.Errorf("unauthenticated: %d", r.Status)
	}
	for i := range 2 {
		if r := do(t, ts, call{method: "PUT", path: "/v1/contexts/" + c.ID, body: `{"name":"New"}`}); r.Status != 500 {
			t.Errorf("PUT %d: %d", i, r.Status)
		}
	}
	if got, _ := ts.Context(c.ID); got.Name != "Doc" || got.Version != 1 {
		t.Errorf("a faulted update changed the context: %+v", got)
	}
	if r := do(t, ts, call{method: "PUT", path: "/v1/contexts/" + c.ID, body: `{"name":"New"}`}); r.Status != 200 {
		t.Errorf("PUT after the fault: %d", r.Status)
	}
	var list struct{ Data []faultJSON }
	admin(t, ts, "GET", "/_mock/faults", "").json(t, &list)
	if diff := cmp.Diff([]faultJSON{{Path: "/v1/webhooks", Status: 503, Times: 1}}, list.Data); diff != "" {
		t.Errorf("faults left (-want +got):\n%s", diff)
	}
	if r := admin(t, ts, "DELETE", "/_mock/faults", ""); r.Status != 204 {
		t.Errorf("delete: %d", r.Status)
	}
	admin(t, ts, "GET", "/_mock/faults", "").json(t, &list)
	if list.Data == nil || len(list.Data) != 0 {
		t.Errorf("after delete: %v", list.Data)
	}
	// Admin requests are never faulted.
	mustAdd(Fault{Status: 500, Times: 5})
	if r := admin(t, ts, "GET", "/_mock/faults", ""); r.Status != 200 {
		t.Errorf("admin with a catch-all fault: %d", r.Status)
	}
}

func TestFaultValidation(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	for _, tc := range []struct{ name, body, param string }{
		{"nothing", `{}`, "status"},
		{"status 200", `{"status":200}`, "status"},
		{"status 600", `{"status":600}`, "status"},
		{"negative times", `{"status":500,"times":-1}`, "times"},
		{"fraction", `{"status":500,"times":1.5}`, "times"},
		{"status string", `{"status":"500"}`, "status"},
		{"latency too long", `{"latencyMs":300001}`, "latencyMs"},
		{"relative path", `{"status":500,"path":"v1/contexts"}`, "path"},
		{"star inside", `{"status":500,"path":"/v1/*/versions"}`, "path"},
		{"retry-after with 500", `{"status":500,"retryAfter":5}`, "retryAfter"},
		{"retry-after without status", `{"latencyMs":10,"retryAfter":5}`, "retryAfter"},
		{"method number", `{"status":500,"method":1}`, "method"},
		{"unknown field", `{"status":500,"count":2}`, "count"},
		{"unknown mode", `{"status":500,"mode":"sideways"}`, "mode"},
		{"mode after without status", `{"mode":"after","latencyMs":10}`, "status"},
		{"mode after with a 4xx", `{"mode":"after","status":404}`, "status"},
		{"mode drop with a status", `{"mode":"drop","status":500}`, "status"},
		{"mode drop with retry-after", `{"mode":"drop","retryAfter":2}`, "retryAfter"},
		{"status zero", `{"status":0,"latencyMs":5}`, "status"},
		{"method with a space", `{"status":500,"method":"GE T"}`, "method"},
		{"method not ASCII", `{"status":500,"method":"G\u00c9T"}`, "method"},
		{"path with a control character", `{"status":500,"path":"/v1/\u0001"}`, "path"},
		{"times past int32", `{"status":500,"times":2147483648}`, "times"},
		{"zero latency alone", `{"latencyMs":0}`, "status"},
		{"lone surrogate in path", `{"status":500,"path":"/v1/\ud800"}`, "path"},
	} {
		r := do(t, ts, call{method: "POST", path: "/_mock/faults", body: tc.body, key: "-"})
		if typ, param := r.errorOf(t); r.Status != 400 || typ != "invalid_request" || param != tc.param {
			t.Errorf("%s: %d %s", tc.name, r.Status, r.Body)
		}
	}
	if len(ts.Faults()) != 0 {
		t.Errorf("refused faults were stored: %+v", ts.Faults())
	}
	// Integers may be written as JSON Schema's "integer" allows.
	for _, body := range []string{`{"status":500,"times":2.0}`, `{"status":503,"retryAfter":1e1}`, `{"latencyMs":5,"retryAfter":0}`, `{"status":429,"method":"get","path":""}`} {
		if r := admin(t, ts, "POST", "/_mock/faults", body); r.Status != 201 {
			t.Errorf("%s: %d %s", body, r.Status, r.Body)
		}
	}
	ts.ClearFaults()
	for _, f := range []Fault{{}, {Status: 302}, {Latency: -time.Second}, {Status: 500, Times: -2}, {Status: 429, RetryAfter: -time.Second}, {Status: 500, RetryAfter: 3 * time.Second},
		{Status: 429, RetryAfter: 1500 * time.Millisecond}, {Status: 503, RetryAfter: 2},
		{Mode: "later", Status: 500}, {Mode: FaultAfter, Status: 429}, {Mode: FaultDrop, Status: 503}} {
		if err := ts.AddFault(f); !errors.Is(err, ErrInvalidFault) {
			t.Errorf("AddFault(%+v): %v", f, err)
		}
	}
}

// TestFaultLatency: a latency is waited in real time, even on a fake clock
// that never moves. The test runs in a synctest bubble, whose real time is
// its own: the waits take no time and are exact.
func TestFaultLatency(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := New(WithClock(NewFakeClock(dlvT0)))
		defer s.Close(context.Background())
		key := s.DefaultKey().Token
		serve := func(method, path, body string) *httptest.ResponseRecorder {
			w := httptest.NewRecorder()
			s.ServeHTTP(w, httptestRequest(method, path, body, key))
			return w
		}
		w := serve("POST", "/_mock/faults", `{"method":"GET","path":"/v1/contexts","latencyMs":150}`)
		if w.Code != 201 || !strings.Contains(w.Body.String(), `"latencyMs":150`) || !strings.Contains(w.Body.String(), `"times":1`) {
			t.Fatalf("add: %d %s", w.Code, w.Body)
		}
		start := time.Now()
		if w := serve("GET", "/v1/contexts", ""); w.Code != 200 {
			t.Errorf("slowed request: %d", w.Code)
		}
		if d := time.Since(start); d != 150*time.Millisecond {
			t.Errorf("slowed request took %s, want 150ms", d)
		}
		// Latency then status.
		if err := s.AddFault(Fault{Latency: 50 * time.Millisecond, Status: 503, RetryAfter: 2 * time.Second}); err != nil {
			t.Fatal(err)
		}
		start = time.Now()
		w = serve("GET", "/v1/contexts", "")
		if d := time.Since(start); w.Code != 503 || d != 50*time.Millisecond || w.Header().Get("Retry-After") != "2" {
			t.Errorf("slow 503: %d after %s, Retry-After %q; want 503 after 50ms, 2", w.Code, d, w.Header().Get("Retry-After"))
		}
	})
}

// TestFaultLatencyCanceled checks that a request canceled while it waits
// out a latency returns at once: the server can close without waiting the
// five minutes.
func TestFaultLatencyCanceled(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		s := New()
		defer s.Close(context.Background())
		if err := s.AddFault(Fault{Latency: 5 * time.Minute}); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		s.ServeHTTP(httptest.NewRecorder(), httptestRequest("GET", "/v1/contexts", "", s.DefaultKey().Token).WithContext(ctx))
		if d := time.Since(start); d != 100*time.Millisecond {
			t.Errorf("the handler returned after %v, want when the request was canceled (100ms)", d)
		}
		if len(s.Faults()) != 0 {
			t.Errorf("fault not used up: %+v", s.Faults())
		}
	})
}

// TestFaultModesLoseTheAnswer: in modes after and drop the request runs
// (stores, fires its events, records its idempotency key) and only its
// answer is lost; a repeat with the same key gets the stored answer.
func TestFaultModesLoseTheAnswer(t *testing.T) {
	t.Parallel()
	ts := NewTestServer(t)
	r := admin(t, ts, "POST", "/_mock/faults", `{"method":"POST","path":"/v1/contexts","status":502,"mode":"after"}`)
	if r.Status != 201 || !strings.Contains(string(r.Body), `"mode":"after"`) {
		t.Fatalf("add: %d %s", r.Status, r.Body)
	}
	create := call{method: "POST", path: "/v1/contexts", body: `{"name":"Lost"}`, header: map[string]string{"Idempotency-Key": "lost-1"}}
	if r := do(t, ts, create); r.Status != 502 {
		t.Fatalf("faulted create: %d %s", r.Status, r.Body)
	} else if typ, _ := r.errorOf(t); typ != "internal" {
		t.Errorf("faulted create: %s, want the fault's internal error", r.Body)
	}
	stored := ts.Snapshot().Contexts
	if len(stored) != 1 || stored[0].Name != "Lost" {
		t.Fatalf("stored %+v, want the context the lost answer was about", stored)
	}
	again := do(t, ts, create)
	var c model.ContextJSON
	again.json(t, &c)
	if again.Status != 201 || again.Header.Get("Idempotent-Replayed") != "true" || c.ID != stored[0].ID {
		t.Errorf("repeat: %d %q %s, want the stored 201 for %s", again.Status, again.Header.Get("Idempotent-Replayed"), again.Body, stored[0].ID)
	}

	// Drop: the connection closes unanswered after the request ran.
	if err := ts.AddFault(Fault{Method: "DELETE", Mode: FaultDrop}); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("DELETE", ts.URL+"/contexts/"+c.ID, nil)
	req.Header.Set("Authorization", "Bearer "+ts.APIKey)
	if res, err := ts.HTTP.Client().Do(req); err == nil {
		res.Body.Close()
		t.Fatalf("dropped DELETE answered %d", res.StatusCode)
	}
	if _, ok := ts.Context(c.ID); ok {
		t.Error("the dropped DELETE did not run")
	}
	want := map[contextsvc.EventType]int{contextsvc.EventContextCreated: 1, contextsvc.EventContextVersionCreated: 1, contextsvc.EventContextDeleted: 1}
	if diff := cmp.Diff(want, countEvents(ts.Server)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if len(ts.Faults()) != 0 {
		t.Errorf("faults left: %+v", ts.Faults())
	}
}
