package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// addFaultHTTP injects a fault through the mock server's admin API, as a
// test in another language (or the command's user) would.
func addFaultHTTP(t *testing.T, ts *mockserver.TestServer, body string) {
	t.Helper()
	resp, err := http.Post(ts.HTTP.URL+"/_mock/faults", "application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("POST /_mock/faults %s: %d %s", body, resp.StatusCode, b)
	}
}

// TestFaults injects server failures and checks the client's retry policy
// end to end: a GET is retried through 503s and succeeds, and so is a POST,
// which carries an idempotency key (idempotency_test.go has the answers
// lost after the service acted).
func TestFaults(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		fault     string
		call      func(ctx context.Context, c *contextsvc.Client, id string) error
		method    string
		statuses  []int // every answer on the wire, in order
		wantErr   error
		contexts  int // stored afterwards
		faultLeft int
	}{
		{
			name:  "GET 503 twice then 200",
			fault: `{"method":"GET","path":"/v1/contexts/*","status":503,"times":2}`,
			call: func(ctx context.Context, c *contextsvc.Client, id string) error {
				got, err := c.Contexts.Get(ctx, id)
				if err == nil && got.ID != id {
					return errors.New("Get returned another context")
				}
				return err
			},
			method: http.MethodGet, statuses: []int{503, 503, 200}, contexts: 1,
		},
		{
			name:  "GET 503 more often than the retries",
			fault: `{"method":"GET","path":"/v1/contexts/*","status":503,"times":5}`,
			call: func(ctx context.Context, c *contextsvc.Client, id string) error {
				_, err := c.Contexts.Get(ctx, id)
				return err
			},
			// 1 attempt + DefaultMaxRetries (3) retries, then the error.
			method: http.MethodGet, statuses: []int{503, 503, 503, 503}, wantErr: contextsvc.ErrServer, contexts: 1, faultLeft: 1,
		},
		{
			// Not processed (the fault answers instead of the service):
			// the retry, with the same idempotency key, creates it.
			name:  "POST 500 is retried with its idempotency key",
			fault: `{"method":"POST","path":"/v1/contexts","status":500,"times":1}`,
			call: func(ctx context.Context, c *contextsvc.Client, _ string) error {
				_, err := c.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Second"})
				return err
			},
			method: http.MethodPost, statuses: []int{500, 201}, contexts: 2,
		},
		{
			name:  "POST 503 more often than the retries",
			fault: `{"method":"POST","path":"/v1/contexts","status":503,"times":5}`,
			call: func(ctx context.Context, c *contextsvc.Client, _ string) error {
				_, err := c.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Second"})
				return err
			},
			method: http.MethodPost, statuses: []int{503, 503, 503, 503}, wantErr: contextsvc.ErrServer, contexts: 1, faultLeft: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := mockserver.NewTestServer(t)
			ctx := context.Background()
			c, err := newClient(t, ts, "").Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "First"})
			if err != nil {
				t.Fatal(err)
			}
			addFaultHTTP(t, ts, tc.fault)

			rt := newRecordingTransport()
			// Short waits keep the test fast; the policy is the same.
			client := newClient(t, ts, "", contextsvc.WithHTTPClient(rt.httpClient()),
				contextsvc.WithRetryWait(time.Millisecond, 20*time.Millisecond))
			err = tc.call(ctx, client, c.ID)

			if tc.wantErr == nil && err != nil {
				t.Fatalf("call failed: %v", err)
			}
			if tc.wantErr != nil {
				var apiErr *contextsvc.Error
				if !errors.Is(err, tc.wantErr) || !errors.As(err, &apiErr) {
					t.Fatalf("err = %v, want a *contextsvc.Error matching %v", err, tc.wantErr)
				}
				if apiErr.StatusCode != tc.statuses[len(tc.statuses)-1] || apiErr.Attempts != len(tc.statuses) || apiErr.RequestID == "" {
					t.Errorf("error status %d attempts %d request id %q, want %d, %d, set",
						apiErr.StatusCode, apiErr.Attempts, apiErr.RequestID, tc.statuses[len(tc.statuses)-1], len(tc.statuses))
				}
			}
			var statuses []int
			for _, ex := range rt.exchanges() {
				if ex.Method != tc.method {
					t.Errorf("unexpected %s %s", ex.Method, ex.Path)
				}
				statuses = append(statuses, ex.Status)
			}
			if diff := cmp.Diff(tc.statuses, statuses); diff != "" {
				t.Errorf("answers on the wire (-want +got):\n%s", diff)
			}
			if n := len(ts.Snapshot().Contexts); n != tc.contexts {
				t.Errorf("%d contexts stored, want %d: a failed POST stores nothing, a retried one once", n, tc.contexts)
			}
			left := 0
			for _, f := range ts.Faults() {
				left += f.Times
			}
			if left != tc.faultLeft {
				t.Errorf("fault applies to %d more requests, want %d (faults %+v)", left, tc.faultLeft, ts.Faults())
			}
		})
	}
}
