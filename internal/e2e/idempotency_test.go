package e2e_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// loseFirstAnswer is a client-side transport that sends the first request
// matching method for real, lets the server answer, then throws the answer
// away and reports a broken connection: the service acted, the client never
// heard.
type loseFirstAnswer struct {
	base   http.RoundTripper
	method string

	mu   sync.Mutex
	done bool
}

func (l *loseFirstAnswer) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(req)
	l.mu.Lock()
	lose := !l.done && err == nil && req.Method == l.method
	if lose {
		l.done = true
	}
	l.mu.Unlock()
	if !lose {
		return resp, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil, errors.New("read: connection reset by peer (after the server answered)")
}

// TestLostAnswers: a create, a webhook registration or a delete whose first
// answer is lost after the mock server acted (a gateway's 5xx in its place,
// a connection it closes, or a connection the client's side loses after the
// answer arrived) is retried, and happens once: one context and one
// context.created event, one webhook, one context.deleted event, and the
// call succeeds.
func TestLostAnswers(t *testing.T) {
	t.Parallel()
	type op int
	const (
		create op = iota
		register
		remove
	)
	tests := []struct {
		name     string
		fault    string // for POST /_mock/faults; "" for none
		loseSide bool   // lose the first answer in the client's transport
		op       op
		statuses []int // on the wire, as the server answered; 0 is a dropped connection
	}{
		{name: "create, 502 after processing", fault: `{"method":"POST","path":"/v1/contexts","status":502,"mode":"after"}`, op: create, statuses: []int{502, 201}},
		{name: "create, 503 after processing", fault: `{"method":"POST","path":"/v1/contexts","status":503,"mode":"after"}`, op: create, statuses: []int{503, 201}},
		{name: "create, connection dropped by the server", fault: `{"method":"POST","path":"/v1/contexts","mode":"drop"}`, op: create, statuses: []int{0, 201}},
		// The server's answer arrives, and the client's side loses it.
		{name: "create, connection lost on the client's side", loseSide: true, op: create, statuses: []int{201, 201}},
		{name: "register, 502 after processing", fault: `{"method":"POST","path":"/v1/webhooks","status":502,"mode":"after"}`, op: register, statuses: []int{502, 201}},
		{name: "register, connection dropped", fault: `{"method":"POST","path":"/v1/webhooks","mode":"drop"}`, op: register, statuses: []int{0, 201}},
		{name: "delete, 502 after processing", fault: `{"method":"DELETE","path":"/v1/contexts/*","status":502,"mode":"after"}`, op: remove, statuses: []int{502, 404}},
		{name: "delete, connection dropped by the server", fault: `{"method":"DELETE","path":"/v1/contexts/*","mode":"drop"}`, op: remove, statuses: []int{0, 404}},
		{name: "delete, connection lost on the client's side", loseSide: true, op: remove, statuses: []int{200, 404}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := mockserver.NewTestServer(t)
			ctx := context.Background()
			var existing *contextsvc.Context
			if tc.op == remove {
				var err error
				if existing, err = newClient(t, ts, "").Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Doomed"}); err != nil {
					t.Fatal(err)
				}
			}
			if tc.fault != "" {
				addFaultHTTP(t, ts, tc.fault)
			}
			// A client of its own, whose first request is the one under
			// test: on a fresh connection net/http's transport does not
			// resend anything by itself.
			rt := newRecordingTransport()
			var hc *http.Client
			if tc.loseSide {
				hc = &http.Client{Transport: &loseFirstAnswer{base: rt, method: map[op]string{create: "POST", remove: "DELETE"}[tc.op]}}
			} else {
				hc = rt.httpClient()
			}
			client := newClient(t, ts, "", contextsvc.WithHTTPClient(hc), contextsvc.WithRetryWait(time.Millisecond, 20*time.Millisecond))

			var resp contextsvc.Response
			var err error
			var id string
			switch tc.op {
			case create:
				var c *contextsvc.Context
				c, err = client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Once", Tags: []string{"a"}}, contextsvc.WithResponseInto(&resp))
				if err == nil {
					id = c.ID
				}
			case register:
				_, err = client.Webhooks.Register(ctx, &contextsvc.RegisterWebhookRequest{
					URL: "https://hooks.example/in", Events: []contextsvc.EventType{contextsvc.EventContextCreated}, Secret: "whsec_1",
				}, contextsvc.WithResponseInto(&resp))
			case remove:
				var res *contextsvc.DeleteResult
				res, err = client.Contexts.Delete(ctx, existing.ID, contextsvc.WithResponseInto(&resp))
				if err == nil && (res.ID != existing.ID || !res.Deleted) {
					t.Errorf("DeleteResult %+v", res)
				}
			}
			if err != nil {
				t.Fatalf("the call failed: %v", err)
			}

			var statuses []int
			for _, ex := range rt.exchanges() {
				statuses = append(statuses, ex.Status)
			}
			if diff := cmp.Diff(tc.statuses, statuses); diff != "" {
				t.Errorf("answers on the wire (-want +got):\n%s", diff)
			}
			if resp.Attempts != 2 || resp.StatusCode != tc.statuses[1] {
				t.Errorf("Response: %d attempts, status %d; want 2, %d", resp.Attempts, resp.StatusCode, tc.statuses[1])
			}
			if tc.op != remove && !resp.Replayed {
				t.Error("the retry's answer is not marked Idempotent-Replayed")
			}

			snap := ts.Snapshot()
			switch tc.op {
			case create:
				created := eventsOf[contextsvc.ContextCreatedData](t, ts.Server, contextsvc.EventContextCreated)
				versions := eventsOf[contextsvc.ContextVersionCreatedData](t, ts.Server, contextsvc.EventContextVersionCreated)
				if len(snap.Contexts) != 1 || snap.Contexts[0].ID != id || len(created) != 1 || created[0].ContextID != id || len(versions) != 1 {
					t.Errorf("after one create: %d contexts, context.created %v, context.version.created %v; want one each, for %s",
						len(snap.Contexts), created, versions, id)
				}
			case register:
				if len(snap.Webhooks) != 1 {
					t.Errorf("%d webhooks registered, want 1", len(snap.Webhooks))
				}
			case remove:
				deleted := eventsOf[contextsvc.ContextDeletedData](t, ts.Server, contextsvc.EventContextDeleted)
				if len(snap.Contexts) != 0 || len(deleted) != 1 || deleted[0].ContextID != existing.ID {
					t.Errorf("after one delete: %d contexts, context.deleted %v", len(snap.Contexts), deleted)
				}
			}
			if len(ts.Faults()) != 0 {
				t.Errorf("fault not used: %+v", ts.Faults())
			}
		})
	}
}

// TestDeleteMissingIsStillNotFound: without a lost answer, a 404 is a 404.
func TestDeleteMissingIsStillNotFound(t *testing.T) {
	t.Parallel()
	ts := mockserver.NewTestServer(t)
	var resp contextsvc.Response
	_, err := newClient(t, ts, "").Contexts.Delete(context.Background(), "ctx_missing", contextsvc.WithResponseInto(&resp))
	if !errors.Is(err, contextsvc.ErrNotFound) || resp.Attempts != 1 {
		t.Errorf("err = %v after %d attempts, want ErrNotFound after 1", err, resp.Attempts)
	}
}
