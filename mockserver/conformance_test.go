package mockserver_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/conformance"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/plantest"
)

// TestConformance runs the contract's checks (internal/conformance, the
// engine of cmd/contextsvc-conform) against a test server. Here, unlike in
// the runner's own tests, this package's validator also holds every
// request and answer of the run to openapi.yaml: the runner's checks, the
// document and the mock's behaviour cannot drift apart without one of them
// failing.
func TestConformance(t *testing.T) {
	t.Parallel()
	const (
		key     = "sk_test_conformance"
		readKey = "sk_test_conformance_read"
		account = "conformance"
	)
	// A plan whose burst holds the whole run: the fake clock refills no
	// bucket.
	plan := plantest.Enterprise(t, 100_000, 10_000)
	clock := mockserver.NewFakeClock(time.Now())
	ts := mockserver.NewTestServer(t, mockserver.WithClock(clock),
		mockserver.WithKey(mockserver.Key{Token: key, Plan: mockserver.PlanEnterprise, PerMinute: plan.PerMinute(), Burst: plan.Burst(), Account: account}),
		mockserver.WithKey(mockserver.Key{Token: readKey, Plan: mockserver.PlanEnterprise, PerMinute: plan.PerMinute(), Burst: plan.Burst(), Account: account, Scope: mockserver.ScopeRead}))
	lim, err := contextsvc.NewLocalLimiter(plan)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := conformance.Run(t.Context(), conformance.Config{
		BaseURL: ts.URL, APIKey: key, ReadKey: readKey, Limiter: lim, PerMinute: plan.PerMinute(),
		Document:       mockserver.OpenAPI(),
		ReceiverListen: "127.0.0.1:0", DeliveryTimeout: 24 * time.Hour, RetryTimeout: 24 * time.Hour,
		Now: clock.Now,
		OnRetryWait: func() {
			go func() {
				if ts.WaitIdle(context.Background()) == nil {
					clock.Advance(time.Minute)
				}
			}()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Passed() {
		var b bytes.Buffer
		_ = rep.WriteText(&b)
		t.Fatalf("the mock differs from the contract:\n%s", b.String())
	}
	for _, l := range rep.LeftBehind {
		if l.Kind == "webhook" {
			if err := ts.DeleteWebhook(l.ID); err != nil {
				t.Error(err)
			}
		}
	}
}
