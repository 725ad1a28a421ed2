package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/time/rate"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// fleetToken is the API key a fleet run's clients share.
const fleetToken = "sk_test_fleet"

// planServer is the service as far as pacing can tell: one key's plan
// enforced as the service's limits are, a token bucket of Burst that
// refills at PerMinute a minute (the mock server's rule too), answered 429
// with the contract's Retry-After and error body when the bucket is empty,
// and 404 (no such context: what the fleet's calls ask for) otherwise.
type planServer struct {
	URL      string       // the base URL, ending in /v1
	requests atomic.Int64 // requests received
}

func newPlanServer(tb testing.TB, plan contextsvc.Plan) *planServer {
	tb.Helper()
	ps := &planServer{}
	var mu sync.Mutex
	lim := rate.NewLimiter(rate.Limit(float64(plan.PerMinute())/60), plan.Burst())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ps.requests.Add(1)
		now := time.Now()
		mu.Lock()
		res := lim.ReserveN(now, 1)
		delay := res.DelayFrom(now)
		if delay > 0 {
			res.CancelAt(now)
		}
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if delay > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(max(int(math.Ceil(delay.Seconds())), 1)))
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, `{"error":{"type":"rate_limited","message":"rate limit exceeded"}}`)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, `{"error":{"type":"not_found","message":"no such context"}}`)
	}))
	tb.Cleanup(srv.Close)
	ps.URL = srv.URL + "/v1"
	return ps
}

// fleetAttempt is one request a fleet client sent: when (since the run's
// start, after its limiter granted it) and the status it got.
type fleetAttempt struct {
	at     time.Duration
	status int
}

// fleetFailure is one call that failed other than by the run's end: when
// it returned, and its error.
type fleetFailure struct {
	at  time.Duration
	err error
}

// fleetResult is what a fleet run saw.
type fleetResult struct {
	start    time.Time // the run's start: every time below counts from it
	elapsed  time.Duration
	ok       int            // calls answered as the service answers a request within the limit (404)
	attempts []fleetAttempt // every request sent, in the order they were sent
	failed   []fleetFailure
}

// tooMany counts the answers 429 to requests sent in [from, to).
func (r *fleetResult) tooMany(from, to time.Duration) int {
	n := 0
	for _, a := range r.attempts {
		if a.status == http.StatusTooManyRequests && a.at >= from && a.at < to {
			n++
		}
	}
	return n
}

// sent returns the send times of the requests sent in [from, to), in
// order.
func (r *fleetResult) sent(from, to time.Duration) []time.Duration {
	var at []time.Duration
	for _, a := range r.attempts {
		if a.at >= from && a.at < to {
			at = append(at, a.at)
		}
	}
	slices.Sort(at)
	return at
}

// tooManyBySecond maps each second of the run to the answers 429 of
// requests sent in it.
func (r *fleetResult) tooManyBySecond() map[int]int {
	when := map[int]int{}
	for _, a := range r.attempts {
		if a.status == http.StatusTooManyRequests {
			when[int(a.at/time.Second)]++
		}
	}
	return when
}

// runFleet runs clients independent clients (each its own Client and HTTP
// transport, and the pacing option pace(i) gives it: a limiter of its
// own, on a Redis client of its own) calling Contexts.Get in a loop
// against a server that holds their key to plan, until ctx is done. Answers
// 429 are counted on the wire; the clients retry them as usual. sent, if
// not nil, counts the requests sent as they go.
func runFleet(ctx context.Context, tb testing.TB, plan contextsvc.Plan, clients int, pace func(i int) contextsvc.Option, sent *atomic.Int64) *fleetResult {
	tb.Helper()
	ts := newPlanServer(tb, plan)
	var mu sync.Mutex
	var ok atomic.Int64
	if sent == nil {
		sent = new(atomic.Int64)
	}
	t0 := time.Now()
	res := &fleetResult{start: t0}
	rec := &recording{base: http.DefaultTransport.(*http.Transport).Clone(), start: t0, mu: &mu, res: res, sent: sent}
	defer rec.base.CloseIdleConnections()
	var cs []*contextsvc.Client
	for i := range clients {
		c, err := contextsvc.NewClient(fleetToken, contextsvc.WithBaseURL(ts.URL),
			contextsvc.WithHTTPClient(&http.Client{Transport: rec}), pace(i))
		if err != nil {
			tb.Fatal(err)
		}
		cs = append(cs, c)
	}
	var wg sync.WaitGroup
	for _, c := range cs {
		wg.Go(func() {
			for ctx.Err() == nil {
				_, err := c.Contexts.Get(ctx, "ctx_fleet_missing")
				switch {
				case errors.Is(err, contextsvc.ErrNotFound):
					ok.Add(1)
				case ctx.Err() != nil, errors.Is(err, context.DeadlineExceeded):
					// The run ended, or the next token is past its end.
				default:
					mu.Lock()
					res.failed = append(res.failed, fleetFailure{at: time.Since(t0), err: err})
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	res.elapsed = time.Since(t0)
	res.ok = int(ok.Load())
	return res
}

// recording is the fleet's HTTP transport: it notes every request's send
// time and answer in res.
type recording struct {
	base  *http.Transport
	start time.Time
	mu    *sync.Mutex
	res   *fleetResult
	sent  *atomic.Int64
}

func (r *recording) RoundTrip(req *http.Request) (*http.Response, error) {
	at := time.Since(r.start)
	resp, err := r.base.RoundTrip(req)
	status := 0
	if err == nil {
		status = resp.StatusCode
	}
	r.mu.Lock()
	r.res.attempts = append(r.res.attempts, fleetAttempt{at: at, status: status})
	r.mu.Unlock()
	r.sent.Add(1)
	return resp, err
}

// checkPaced fails tb if the send times at (since some start, in any
// order) show more than a shared bucket of burst tokens refilled one per
// interval from that start could have granted: the k-th (1-based) no
// earlier than (k - burst) intervals after the start. A slow machine only
// makes sends later, so the check cannot fail for want of speed. Redis's
// clock and Go's can disagree by a little; slack covers it.
func checkPaced(tb testing.TB, what string, at []time.Duration, burst int, interval, slack time.Duration) {
	tb.Helper()
	at = slices.Sorted(slices.Values(at))
	for k := burst + 1; k <= len(at); k++ {
		earliest := time.Duration(k-burst) * interval
		if got := at[k-1]; got < earliest-slack {
			tb.Fatalf("%s: request number %d went out %v after the start; a bucket of %d refilled one per %v allows it at %v at the earliest",
				what, k, got, burst, interval, earliest)
		}
	}
}

// fleetSummary is one line saying what a run got.
func (r *fleetResult) summary(plan contextsvc.Plan) string {
	rate := float64(r.ok) / r.elapsed.Seconds()
	return fmt.Sprintf("%d calls answered in %v: %.1f/s, %.3f of the plan; %d requests, %d answered 429; %d calls failed",
		r.ok, r.elapsed.Round(time.Millisecond), rate, rate/(float64(plan.PerMinute())/60), len(r.attempts), r.tooMany(0, r.elapsed+time.Hour), len(r.failed))
}
