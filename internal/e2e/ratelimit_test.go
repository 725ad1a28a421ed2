package e2e_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// Two keys of one account: setup writes with the unlimited one, so the
// limited key's bucket is spent only by the calls under test.
const (
	setupToken   = "sk_test_setup_unlimited"
	limitedToken = "sk_test_limited"
	// freeRefill fills a Free bucket from empty: burst 10 at 1 a second.
	freeRefill  = 10 * time.Second
	rateAccount = "acct_rate"
)

// seedContexts creates n contexts through the unlimited key and returns
// their ids, so each call under test addresses its own path.
func seedContexts(t *testing.T, ts *mockserver.TestServer, n int) []string {
	t.Helper()
	setup := newClient(t, ts, setupToken)
	ids := make([]string, n)
	for i := range ids {
		c, err := setup.Contexts.Create(context.Background(), &contextsvc.CreateContextRequest{Name: fmt.Sprintf("Rate %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = c.ID
	}
	return ids
}

// getAll gets every id at once, one goroutine each, and returns the errors.
func getAll(client *contextsvc.Client, ids []string) []error {
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			_, errs[i] = client.Contexts.Get(context.Background(), id)
		})
	}
	wg.Wait()
	return errs
}

// TestRetriesHonourRetryAfter fires many requests at once with a Free key
// and the client's limiter off: the server answers 429s, and the client
// retries each after the Retry-After the server gave, until every call
// succeeds.
//
// The server runs on a fake clock that the test moves forward by a whole
// refill of the bucket (10 s on Free) each time a 429 passes the wire, while
// the client really waits the Retry-After (in real time) before retrying:
// the test measures that wait on the wire. Jumping a whole refill keeps the
// real time to a few rounds of one-second waits; the server never sees a
// retry before its Retry-After has passed on its own clock either.
func TestRetriesHonourRetryAfter(t *testing.T) {
	t.Parallel()
	for _, n := range []int{20, 100} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			t.Parallel()
			if n > 20 && testing.Short() {
				t.Skip("100 connections and a few seconds of Retry-After waits; skipped with -short")
			}
			clock := mockserver.NewFakeClock(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
			ts := mockserver.NewTestServer(t, mockserver.WithClock(clock),
				mockserver.WithKey(mockserver.Key{Token: setupToken, Account: rateAccount, Plan: mockserver.PlanUnlimited}),
				mockserver.WithKey(mockserver.Key{Token: limitedToken, Account: rateAccount, Plan: mockserver.PlanFree}),
			)
			ids := seedContexts(t, ts, n)

			rt := newRecordingTransport()
			rt.onResponse = func(resp *http.Response) {
				if resp.StatusCode == http.StatusTooManyRequests {
					if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err != nil || secs < 1 {
						t.Errorf("429 with Retry-After %q, want whole seconds, at least 1", resp.Header.Get("Retry-After"))
					}
					clock.Advance(freeRefill)
				}
			}
			// Each round of retries finds a refilled bucket after its first
			// 429, so a call needs few retries; the margin is generous.
			client := newClient(t, ts, limitedToken, contextsvc.WithHTTPClient(rt.httpClient()),
				contextsvc.WithMaxRetries(10), contextsvc.WithRetryWait(10*time.Millisecond, 5*time.Second))

			for i, err := range getAll(client, ids) {
				if err != nil {
					t.Errorf("Get %s: %v", ids[i], err)
				}
			}

			byPath := map[string][]exchange{}
			for _, ex := range rt.exchanges() {
				byPath[ex.Path] = append(byPath[ex.Path], ex)
			}
			got429 := 0
			for _, id := range ids {
				log := byPath["/v1/contexts/"+id]
				if len(log) == 0 || log[len(log)-1].Status != http.StatusOK {
					t.Errorf("%s: attempts %+v, want the last one 200", id, log)
					continue
				}
				for i, ex := range log[:len(log)-1] {
					if ex.Status != http.StatusTooManyRequests {
						t.Errorf("%s attempt %d answered %d, want only 429s before the 200", id, i+1, ex.Status)
						continue
					}
					got429++
					secs, _ := strconv.Atoi(ex.RetryAfter)
					if waited := log[i+1].Sent.Sub(ex.Done); waited < time.Duration(secs)*time.Second {
						t.Errorf("%s: retried %v after a 429 asking for %ss", id, waited, ex.RetryAfter)
					}
				}
			}
			if got429 == 0 {
				t.Errorf("no 429 among %d simultaneous requests on a burst of 10: nothing was tested", n)
			}
			rl := client.RateLimit()
			if rl.Limit != 60 || rl.Observed.IsZero() {
				t.Errorf("client.RateLimit() = %+v, want the Free plan's limit of 60/min", rl)
			}
			t.Logf("%d calls: %d answers 429 retried, statuses %v", n, got429, rt.statuses())
		})
	}
}

// TestPlanPacingAvoids429 checks that a client paced by WithPlan with the
// key's own plan never meets a 429: the client's token bucket is the
// server's.
//
// The server's bucket reads the time at which each call left the client's
// limiter (the recording transport stamps it, a wrapper sets the server's
// fake clock to it), not the time the request happened to reach the
// server. That isolates what the SDK controls, its pacing. The "free, real
// clock" case then checks the same on the wall clock, where the loopback's
// jitter (a first request slower on the wire than the eleventh) reorders
// arrivals: the client's bucket keeps one token of headroom below the
// plan's burst for exactly that (see LocalLimiter), and before it had, an
// exactly paced client met an occasional 429 here under -race.
func TestPlanPacingAvoids429(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		key    mockserver.Key
		plan   contextsvc.Plan
		calls  int
		slow   bool
		minDur time.Duration // what the plan's refill rate forces
		real   bool          // the server on the wall clock, not the send-time clock
	}{
		// Burst 10 (9 in the client's bucket), then one a second: 13 calls
		// take about 4 s.
		{"free", mockserver.Key{Plan: mockserver.PlanFree}, contextsvc.FreePlan(), 13, true, 3 * time.Second, false},
		{"free, real clock", mockserver.Key{Plan: mockserver.PlanFree}, contextsvc.FreePlan(), 13, true, 3 * time.Second, true},
		// The same shape scaled up: burst 10, then 100 a second.
		{"enterprise 6000/min", mockserver.Key{Plan: mockserver.PlanEnterprise, PerMinute: 6000, Burst: 10},
			enterprisePlan(t, 6000, 10), 100, false, 900 * time.Millisecond, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.slow && testing.Short() {
				t.Skip("about 3 s of pacing; skipped with -short")
			}
			key := tc.key
			key.Token, key.Account = limitedToken, rateAccount
			opts := []mockserver.Option{
				mockserver.WithKey(mockserver.Key{Token: setupToken, Account: rateAccount, Plan: mockserver.PlanUnlimited}),
				mockserver.WithKey(key),
			}
			var ts *mockserver.TestServer
			if tc.real {
				ts = mockserver.NewTestServer(t, opts...)
			} else {
				ts = newSendTimeServer(t, mockserver.NewFakeClock(time.Now()), opts...)
			}
			ids := seedContexts(t, ts, 1)

			rt := newRecordingTransport()
			rt.stampSent = true
			client := newClient(t, ts, limitedToken, contextsvc.WithHTTPClient(rt.httpClient()),
				contextsvc.WithPlan(tc.plan), contextsvc.WithMaxRetries(0))
			start := time.Now()
			for i := range tc.calls {
				if _, err := client.Contexts.Get(context.Background(), ids[0]); err != nil {
					t.Fatalf("call %d: %v (statuses so far %v)", i+1, err, rt.statuses())
				}
			}
			elapsed := time.Since(start)
			if st := rt.statuses(); st[http.StatusOK] != tc.calls || len(st) != 1 {
				t.Errorf("statuses %v, want %d answers 200 and nothing else", st, tc.calls)
			}
			if elapsed < tc.minDur {
				t.Errorf("%d calls took %v: the limiter did not pace (want at least %v)", tc.calls, elapsed, tc.minDur)
			}
			if rl := client.RateLimit(); rl.Limit != tc.plan.PerMinute() {
				t.Errorf("X-RateLimit-Limit %d, want the plan's %d", rl.Limit, tc.plan.PerMinute())
			}
		})
	}
}

// sentHeader carries the real time at which the client sent a request, from
// the recording transport to newSendTimeServer's wrapper.
const sentHeader = "X-E2e-Sent-Unix-Nano"

// newSendTimeServer is mockserver.NewTestServer with the server's fake
// clock set, before each request, to the send time the request carries (see
// TestPlanPacingAvoids429). The clock never goes back, so requests must be
// sent one at a time.
func newSendTimeServer(t *testing.T, clock *mockserver.FakeClock, opts ...mockserver.Option) *mockserver.TestServer {
	t.Helper()
	s := mockserver.New(append(opts, mockserver.WithClock(clock))...)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ns, err := strconv.ParseInt(r.Header.Get(sentHeader), 10, 64); err == nil {
			clock.Set(time.Unix(0, ns))
		}
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return &mockserver.TestServer{Server: s, URL: hs.URL + "/v1", APIKey: s.DefaultKey().Token, HTTP: hs}
}
