package mockserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// serverTransport sends a client's requests to a Server's handler
// without a network, so that a test in a synctest bubble runs the client
// and the server together, every wait on the bubble's clock.
type serverTransport struct{ s *Server }

func (st serverTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	in := req.Clone(req.Context())
	in.RequestURI, in.RemoteAddr, in.Host = req.URL.RequestURI(), "127.0.0.1:40000", "127.0.0.1"
	if in.Body == nil {
		in.Body = http.NoBody
	}
	w := httptest.NewRecorder()
	st.s.ServeHTTP(w, in)
	res := w.Result()
	res.Request = req
	return res, nil
}

// TestChaosClientRetries: the SDK's client, against a mock failing 30 % of
// the requests (api-error=0.3), completes 100 of 100 calls of every kind
// with its retries (Retry-After and back-off waited on the bubble's
// clock, so in no time); the mock's metrics count the injected failures
// apart from its real ones (the 404s of a missing context), and the
// failed requests' spans say so.
func TestChaosClientRetries(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		rig := newOtelRig(t)
		s := New(WithKey(chaosKey), WithChaos(Chaos{Seed: 30, APIError: 0.3}), WithMeterProvider(rig.mp), WithTracerProvider(rig.tp))
		defer s.Close(context.Background())
		// Eight retries: a call fails nine times in a row once in 50,000
		// at 0.3 (the default three, once in 120: about once in 100 calls).
		client, err := contextsvc.NewClient(chaosKey.Token, contextsvc.WithBaseURL("http://127.0.0.1/v1"),
			contextsvc.WithHTTPClient(&http.Client{Transport: serverTransport{s}}), contextsvc.WithMaxRetries(8))
		if err != nil {
			t.Fatal(err)
		}
		ctx := t.Context()
		calls, missing := 0, 0
		for i := range 20 {
			c, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: fmt.Sprintf("Retried %d", i)})
			if err != nil {
				t.Fatalf("create %d: %v", i, err)
			}
			if _, err := client.Contexts.Get(ctx, c.ID); err != nil {
				t.Fatalf("get %d: %v", i, err)
			}
			if _, err := client.Contexts.Update(ctx, c.ID, &contextsvc.UpdateContextRequest{Content: contextsvc.Ptr("# Retried")}); err != nil {
				t.Fatalf("update %d: %v", i, err)
			}
			if _, err := client.Contexts.List(ctx, nil); err != nil {
				t.Fatalf("list %d: %v", i, err)
			}
			if _, err := client.Contexts.Delete(ctx, c.ID); err != nil {
				t.Fatalf("delete %d: %v", i, err)
			}
			calls += 5
			if i%4 == 0 {
				// A real failure: retried through chaos's, then answered.
				if _, err := client.Contexts.Get(ctx, c.ID); !errors.Is(err, contextsvc.ErrNotFound) {
					t.Fatalf("get of a deleted context %d: %v", i, err)
				}
				missing++
			}
		}
		if calls != 100 {
			t.Fatalf("%d calls", calls)
		}
		if got := len(s.Contexts(chaosKey.Account)); got != 0 {
			t.Errorf("%d contexts left: a retry made one twice", got)
		}
		injected := s.Chaos().APIErrors
		t.Logf("100 calls (and %d to a missing context) made %d requests, %d of them failed by chaos", missing, s.Chaos().Requests, injected)
		if injected < 20 {
			t.Fatalf("only %d injected failures: the test tries too little", injected)
		}
		var chaosCount, realFailures, successes uint64
		for _, p := range histogramPoints(t, rig, "http.server.request.duration") {
			status, _ := p.Attributes.Value("http.response.status_code")
			c, _ := p.Attributes.Value("contextsvc.mock.chaos")
			switch {
			case c.AsString() == "api-error":
				chaosCount += p.Count
			case status.AsInt64() >= 400:
				realFailures += p.Count
			default:
				successes += p.Count
			}
		}
		var chaosSpans uint64
		for _, sp := range rig.spans.GetSpans() {
			for _, kv := range sp.Attributes {
				if kv.Key == "contextsvc.mock.chaos" && kv.Value.AsString() == "api-error" {
					chaosSpans++
				}
			}
		}
		if chaosSpans != injected {
			t.Errorf("%d request spans say contextsvc.mock.chaos=api-error; chaos failed %d", chaosSpans, injected)
		}
		if chaosCount != injected || realFailures != uint64(missing) || successes != 100 {
			t.Errorf("the metrics count %d injected failures (the mode made %d), %d real ones (want %d) and %d successes (want 100)",
				chaosCount, injected, realFailures, missing, successes)
		}
	})
}
