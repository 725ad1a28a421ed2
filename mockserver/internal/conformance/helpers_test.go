package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/conformance"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/plantest"
)

// The test account's keys: one of write scope, one of read scope, on an
// Enterprise plan whose burst holds a whole run, so that a run on a fake
// clock (which refills no bucket) never meets a 429.
const (
	writeKey  = "sk_test_conform_write"
	readKey   = "sk_test_conform_read"
	perMinute = 100_000
	burst     = 10_000
	account   = "conform"
)

// forever bounds the run's waits for deliveries in tests: a test ends by
// its own deadline, never by a wall-clock bound.
const forever = 24 * time.Hour

func keys() []mockserver.Option {
	return []mockserver.Option{
		mockserver.WithKey(mockserver.Key{Token: writeKey, Plan: mockserver.PlanEnterprise, PerMinute: perMinute, Burst: burst, Account: account}),
		mockserver.WithKey(mockserver.Key{Token: readKey, Plan: mockserver.PlanEnterprise, PerMinute: perMinute, Burst: burst, Account: account, Scope: mockserver.ScopeRead}),
	}
}

// fakeClockConfig is a run against srv, on clock, with every check on:
// a receiver on loopback, the retry of its failed attempt brought by
// advancing the clock once the mock has recorded the attempt.
func fakeClockConfig(t *testing.T, baseURL string, srv *mockserver.Server, clock *mockserver.FakeClock) conformance.Config {
	t.Helper()
	lim, err := contextsvc.NewLocalLimiter(plantest.Enterprise(t, perMinute, burst))
	if err != nil {
		t.Fatal(err)
	}
	return conformance.Config{
		BaseURL: baseURL, APIKey: writeKey, ReadKey: readKey,
		Limiter: lim, PerMinute: perMinute,
		Document:       mockserver.OpenAPI(),
		ReceiverListen: "127.0.0.1:0", DeliveryTimeout: forever, RetryTimeout: forever,
		Now: clock.Now,
		OnRetryWait: func() {
			go func() {
				// The failed attempt's retry is scheduled once the mock has
				// its answer; then the clock brings it.
				if err := srv.WaitIdle(context.Background()); err == nil {
					clock.Advance(time.Minute)
				}
			}()
		},
	}
}

// run runs cfg and fails the test on a configuration error.
func run(t *testing.T, cfg conformance.Config) *conformance.Report {
	t.Helper()
	rep, err := conformance.Run(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// text is the report as text and as JSON, for a test to read or search.
func text(t *testing.T, rep *conformance.Report) (string, string) {
	t.Helper()
	var txt, js bytes.Buffer
	if err := rep.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !json.Valid(js.Bytes()) {
		t.Fatalf("the JSON report is not JSON:\n%s", js.Bytes())
	}
	return txt.String(), js.String()
}

// statuses maps each check to its status.
func statuses(rep *conformance.Report) map[string]conformance.Status {
	out := map[string]conformance.Status{}
	for _, c := range rep.Checks {
		out[c.ID] = c.Status
	}
	return out
}

// tolerance lists the report's distinct differences as
// "tolerated|kind|summary|operations", sorted.
func tolerance(rep *conformance.Report) []string {
	var out []string
	for _, tl := range rep.Tolerance {
		ops := slices.Clone(tl.Operations)
		slices.Sort(ops)
		out = append(out, fmt.Sprintf("%t|%s|%s|%s", tl.Tolerated, tl.Kind, tl.Summary, strings.Join(ops, ",")))
	}
	slices.Sort(out)
	return out
}
