// Command ratelimits shows the SDK's rate-limit handling against the
// embedded mock server, with a key on the Free plan (60 requests a minute,
// burst 10):
//
//   - Phase 1: a client made WithPlan(PlanFree) sends 200 requests in a row.
//     Its token bucket has the plan's rate and one token less than its
//     burst (headroom for arrival jitter), so it spends that at once and
//     then paces itself to one request a second: no errors and no 429.
//   - Phase 2: a client without the limiter sends a burst from a few
//     workers. The server answers 429 with Retry-After once the burst is
//     spent; the client waits as asked and retries, and every call succeeds.
//
// At 60 a minute the 200 requests take about three minutes, by design.
// -n and -plan shorten it:
//
//	go run ./examples/ratelimits               # Free, 200 requests, ~3.5 min
//	go run ./examples/ratelimits -n 30         # ~40 s
//	go run ./examples/ratelimits -plan pro     # 300/min, burst 50: ~50 s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
)

// config is what the flags set.
type config struct {
	n       int    // requests of phase 1
	n2      int    // requests of phase 2; 0 means the plan's burst + 20
	workers int    // concurrent callers of phase 2
	plan    string // free, pro or business
}

// plans maps -plan to the server's and the client's names for it.
var plans = map[string]struct {
	server mockserver.Plan
	client contextsvc.Plan
}{
	"free":     {mockserver.PlanFree, contextsvc.FreePlan()},
	"pro":      {mockserver.PlanPro, contextsvc.ProPlan()},
	"business": {mockserver.PlanBusiness, contextsvc.BusinessPlan()},
}

func main() {
	var cfg config
	flag.IntVar(&cfg.n, "n", 200, "requests of phase 1 (paced by the client's limiter)")
	flag.IntVar(&cfg.n2, "n2", 0, "requests of phase 2 (limiter off); default: the plan's burst + 20")
	flag.IntVar(&cfg.workers, "workers", 3, "concurrent callers in phase 2")
	flag.StringVar(&cfg.plan, "plan", "free", "plan of the key: free, pro or business")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Stdout, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "ratelimits:", err)
		os.Exit(1)
	}
}

// The mock server's keys: one per phase, so each phase starts with a full
// bucket, and an unlimited one for the setup, all in one account.
const (
	account    = "acct_ratelimits"
	setupKey   = "sk_test_setup"
	pacedKey   = "sk_test_paced"
	unpacedKey = "sk_test_unpaced"
)

// run starts the mock server on a loopback port, runs both phases against
// it and prints what happens to w. It fails if any call failed.
func run(ctx context.Context, w io.Writer, cfg config) error {
	p, ok := plans[cfg.plan]
	if !ok {
		return fmt.Errorf("unknown plan %q: want free, pro or business", cfg.plan)
	}
	if cfg.n < 1 || cfg.n2 < 0 || cfg.workers < 1 {
		return errors.New("-n and -workers must be at least 1, -n2 at least 0")
	}
	if cfg.n2 == 0 {
		cfg.n2 = p.client.Burst() + 20
	}
	srv := mockserver.New(
		mockserver.WithKey(mockserver.Key{Token: setupKey, Account: account, Plan: mockserver.PlanUnlimited}),
		mockserver.WithKey(mockserver.Key{Token: pacedKey, Account: account, Plan: p.server}),
		mockserver.WithKey(mockserver.Key{Token: unpacedKey, Account: account, Plan: p.server}),
	)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()
	base := "http://" + ln.Addr().String() + "/v1"

	setup, err := contextsvc.NewClient(setupKey, contextsvc.WithBaseURL(base))
	if err != nil {
		return err
	}
	c, err := setup.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Rate limits", Content: "# Rate limits\n\nOne request at a time.\n"})
	if err != nil {
		return err
	}

	fmt.Fprintf(w, "Mock server on %s; keys on the %s plan.\n", base, p.client)
	fmt.Fprintf(w, "This takes about %s: phase 1 %s, phase 2 %s.\n\n",
		round(paceTime(p.client, cfg.n)+paceTime(p.client, cfg.n2)), round(paceTime(p.client, cfg.n)), round(paceTime(p.client, cfg.n2)))

	err1 := phasePaced(ctx, w, base, p.client, c.ID, cfg.n)
	fmt.Fprintln(w)
	err2 := phaseUnpaced(ctx, w, base, p.client, c.ID, cfg.n2, cfg.workers)
	return errors.Join(err1, err2)
}

// paceTime is how long n requests take at the plan's rate when the bucket
// starts full: the burst is free, the rest come at PerMinute/60 a second.
func paceTime(p contextsvc.Plan, n int) time.Duration {
	rest := max(0, n-p.Burst())
	return time.Duration(rest) * time.Minute / time.Duration(p.PerMinute())
}

func round(d time.Duration) time.Duration { return d.Round(time.Second) }

// phasePaced sends n requests in a row from a client paced WithPlan.
func phasePaced(ctx context.Context, w io.Writer, base string, plan contextsvc.Plan, id string, n int) error {
	fmt.Fprintf(w, "Phase 1: %d requests, client made WithPlan(%s).\n", n, plan.Name())
	fmt.Fprintf(w, "  The client's token bucket is the server's: %d at once, then %d a second.\n", plan.Burst(), plan.PerMinute()/60)
	ct := &countingTransport{base: http.DefaultTransport}
	client, err := contextsvc.NewClient(pacedKey, contextsvc.WithBaseURL(base), contextsvc.WithPlan(plan),
		contextsvc.WithHTTPClient(&http.Client{Transport: ct}))
	if err != nil {
		return err
	}
	start := time.Now()
	var failed int
	step := max(1, n/10)
	for i := 1; i <= n; i++ {
		if _, err := client.Contexts.Get(ctx, id); err != nil {
			failed++
			fmt.Fprintf(w, "  request %d failed: %v\n", i, err)
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
		if i%step == 0 || i == n || i == plan.Burst() {
			rl := client.RateLimit()
			fmt.Fprintf(w, "  %4d/%d  %6.1fs  server: %d/min, %d left now  answers 429: %d\n",
				i, n, time.Since(start).Seconds(), rl.Limit, rl.Remaining, ct.count(http.StatusTooManyRequests))
		}
	}
	elapsed := time.Since(start)
	fmt.Fprintf(w, "  Done: %d requests in %.1fs, %d errors, %d answers 429.\n", n, elapsed.Seconds(), failed, ct.count(http.StatusTooManyRequests))
	if ct.count(http.StatusTooManyRequests) > 0 {
		// The client's bucket keeps one token of headroom, which absorbs
		// arrival jitter up to one refill interval; say so if more occurred.
		fmt.Fprintln(w, "  A paced client met a 429: requests reached the server more than one refill interval out of")
		fmt.Fprintln(w, "  the order they were sent in. The client waited the Retry-After and retried, so nothing failed.")
	}
	if failed > 0 {
		return fmt.Errorf("phase 1: %d of %d requests failed", failed, n)
	}
	return nil
}

// phaseUnpaced sends n requests from workers with the limiter off: 429s
// come, and the client's retries absorb them.
func phaseUnpaced(ctx context.Context, w io.Writer, base string, plan contextsvc.Plan, id string, n, workers int) error {
	fmt.Fprintf(w, "Phase 2: %d requests from %d workers, limiter off.\n", n, workers)
	fmt.Fprintf(w, "  Past the burst of %d the server answers 429 with Retry-After; the client waits and retries.\n", plan.Burst())
	ct := &countingTransport{base: http.DefaultTransport}
	// The workers compete for one refill: a caller may lose a few rounds,
	// so it gets more retries than the default 3.
	client, err := contextsvc.NewClient(unpacedKey, contextsvc.WithBaseURL(base), contextsvc.WithMaxRetries(10*workers),
		contextsvc.WithHTTPClient(&http.Client{Transport: ct}))
	if err != nil {
		return err
	}
	start := time.Now()
	var next, done, failed atomic.Int64
	var mu sync.Mutex // serialises the progress lines
	step := int64(max(1, n/10))
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(n) && ctx.Err() == nil {
				_, err := client.Contexts.Get(ctx, id)
				d := done.Add(1)
				mu.Lock()
				if err != nil {
					failed.Add(1)
					fmt.Fprintf(w, "  a request failed: %v\n", err)
				}
				if d%step == 0 || d == int64(n) {
					rl := client.RateLimit()
					fmt.Fprintf(w, "  %4d/%d  %6.1fs  server: %d left now, full again in %s  answers 429 so far: %d (retried)\n",
						d, n, time.Since(start).Seconds(), rl.Remaining, rl.Reset, ct.count(http.StatusTooManyRequests))
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	fmt.Fprintf(w, "  Done: %d requests in %.1fs, %d errors; the server answered 429 %d times and every one was retried.\n",
		n, time.Since(start).Seconds(), failed.Load(), ct.count(http.StatusTooManyRequests))
	if err := ctx.Err(); err != nil {
		return err
	}
	if f := failed.Load(); f > 0 {
		return fmt.Errorf("phase 2: %d of %d requests failed", f, n)
	}
	return nil
}

// countingTransport counts the server's answers by status, including those
// the client's retries hide from the caller.
type countingTransport struct {
	base http.RoundTripper
	mu   sync.Mutex
	n    map[int]int
}

// RoundTrip implements http.RoundTripper.
func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err == nil {
		t.mu.Lock()
		if t.n == nil {
			t.n = map[int]int{}
		}
		t.n[resp.StatusCode]++
		t.mu.Unlock()
	}
	return resp, err
}

func (t *countingTransport) count(status int) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n[status]
}
