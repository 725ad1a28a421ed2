package contextsvc_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// A middleware that logs each call once with its operation and URL
// template, and each attempt; the per-call one adds a header to every
// attempt.
func ExampleWithMiddleware() {
	srv := exampleServer()
	defer srv.Close()
	logCalls := contextsvc.Middleware{
		Call: func(ctx context.Context, call *contextsvc.Call, next contextsvc.CallNext) (*http.Response, error) {
			resp, err := next(ctx)
			fmt.Printf("%s %s %s: %d attempt(s), error: %v\n", call.Operation, call.Method, call.URLTemplate, call.Attempts, err != nil)
			return resp, err
		},
		Attempt: func(req *http.Request, a *contextsvc.Attempt, next contextsvc.AttemptNext) (*http.Response, error) {
			fmt.Printf("  attempt %d\n", a.Number)
			return next(req)
		},
	}
	client, err := contextsvc.NewClient("sk_test_example", contextsvc.WithBaseURL(srv.URL+"/v1"),
		contextsvc.WithMiddleware(logCalls))
	if err != nil {
		log.Fatal(err)
	}

	tag := contextsvc.Middleware{
		Attempt: func(req *http.Request, a *contextsvc.Attempt, next contextsvc.AttemptNext) (*http.Response, error) {
			r := req.Clone(req.Context()) // never change the request itself
			r.Header.Set("X-Job", "nightly-import")
			return next(r)
		},
	}
	page, err := client.Contexts.List(context.Background(), nil, contextsvc.WithRequestMiddleware(tag))
	if err != nil {
		log.Fatal(err)
	}
	_, err = client.Contexts.Get(context.Background(), "ctx_missing")
	fmt.Println(len(page.Data), "contexts;", errors.Is(err, contextsvc.ErrNotFound))
	// Output:
	//   attempt 1
	// listContexts GET /v1/contexts: 1 attempt(s), error: false
	//   attempt 1
	// getContext GET /v1/contexts/{id}: 1 attempt(s), error: true
	// 3 contexts; true
}

// A delivery hook that prints how the handler answered each request
// (package contextsvcotel's traces them).
func ExampleWithDeliveryHook() {
	hook := func(r *http.Request) (context.Context, func(contextsvc.DeliveryResult)) {
		return r.Context(), func(res contextsvc.DeliveryResult) {
			fmt.Println(res.Outcome, res.StatusCode, res.DeliveryID, res.Attempt)
		}
	}
	handle := func(context.Context, *contextsvc.Event) error { return nil }
	h, err := contextsvc.NewWebhookHandler("whsec_example", handle, contextsvc.WithDeliveryHook(hook))
	if err != nil {
		log.Fatal(err)
	}

	body := `{"id":"evt_1","type":"context.created","timestamp":"` + time.Now().UTC().Format(time.RFC3339Nano) + `","data":{"contextId":"ctx_1","name":"Plan","createdBy":"user_1"}}`
	for _, sig := range []string{contextsvc.Sign([]byte(body), "whsec_example"), contextsvc.Sign([]byte(body), "whsec_example"), "sha256=forged"} {
		r := httptest.NewRequest(http.MethodPost, "/webhooks", strings.NewReader(body))
		r.Header.Set(contextsvc.DefaultSignatureHeader, sig)
		r.Header.Set("X-Service-Delivery", "dlv_1")
		r.Header.Set("X-Service-Delivery-Attempt", "1")
		h.ServeHTTP(httptest.NewRecorder(), r)
	}
	// Output:
	// handled 200 dlv_1 1
	// duplicate 200 dlv_1 1
	// bad_signature 401 dlv_1 1
}
