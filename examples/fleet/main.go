// Command fleet shows a fleet of independent clients sharing one API key's
// rate limit through Redis, against the embedded mock server.
//
// Each worker is what one process of a fleet would be: its own
// contextsvc.Client, its own connection to Redis and its own
// redisstore.NewLimiter for the key. The mock server holds the key on an
// Enterprise plan (6,000 requests a minute, burst 20, by default) and
// answers 429 past it. Two phases of 10 s each:
//
//   - shared: the workers pace themselves through Redis, so together they
//     send the plan's rate and the server answers no 429;
//   - local: each worker paces itself with its own contextsvc.WithPlan
//     bucket, as a fleet without Redis would, so together they try to
//     send the plan's rate once per worker. The server answers 429, every
//     worker waits out a Retry-After of a second, and meanwhile the
//     server's bucket fills only up to its burst: the fleet gets less of
//     its plan, not more.
//
// It prints each worker's requests, requests a second and 429 answers, and
// the totals. A run takes about 25 s:
//
//	go run ./examples/fleet                              # 8 workers (goroutines), redis-server started for the run
//	go run ./examples/fleet -procs 4 -workers 8          # 4 separate processes with 2 workers each
//	go run ./examples/fleet -redis-addr 127.0.0.1:6379   # an existing Redis
//	go run ./examples/fleet -plan business -duration 30s
//
// Without -redis-addr it starts Debian's redis-server on a free loopback
// port (apt-get install redis-server) and stops it at the end.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/internal/redistest"
	"github.com/contextsvc/contextsvc-go/mockserver"
	"github.com/contextsvc/contextsvc-go/redisstore"
)

// config is what the flags set.
type config struct {
	workers   int
	procs     int // 0: the workers are goroutines of this process
	duration  time.Duration
	plan      string // as the mock command's -key takes it: free, pro, business, enterprise=N/B
	redisAddr string // "" starts a redis-server for the run
	local     bool   // also run the phase without Redis

	// A child process (started by -procs) runs only workers, against the
	// parent's server and Redis, and prints their results as JSON lines.
	child   bool
	phase   string // shared or local
	baseURL string
	apiKey  string
	target  string // the context id the workers GET
	startAt int64  // Unix nanoseconds at which every worker starts
	first   int    // number of this process's first worker
}

func main() {
	var cfg config
	flag.IntVar(&cfg.workers, "workers", 8, "independent clients, each with its own Client, Redis connection and limiter")
	flag.IntVar(&cfg.procs, "procs", 0, "run the workers in this many separate processes (0: goroutines of this one)")
	flag.DurationVar(&cfg.duration, "duration", 10*time.Second, "length of each phase")
	flag.StringVar(&cfg.plan, "plan", "enterprise=6000/20", "plan of the key: free, pro, business or enterprise=PERMINUTE/BURST")
	flag.StringVar(&cfg.redisAddr, "redis-addr", "", "Redis to share the limit through (default: start redis-server on a free loopback port)")
	flag.BoolVar(&cfg.local, "local", true, "also run the phase with a local bucket per worker, for comparison")
	flag.BoolVar(&cfg.child, "child", false, "internal: run as a worker process of -procs")
	flag.StringVar(&cfg.phase, "phase", "", "internal: shared or local")
	flag.StringVar(&cfg.baseURL, "base-url", "", "internal: the server's base URL")
	flag.StringVar(&cfg.apiKey, "api-key", "", "internal: the API key")
	flag.StringVar(&cfg.target, "target", "", "internal: the context id to GET")
	flag.Int64Var(&cfg.startAt, "start-at", 0, "internal: when to start, Unix nanoseconds")
	flag.IntVar(&cfg.first, "first", 1, "internal: number of the first worker")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	if cfg.child {
		err = runChild(ctx, os.Stdout, cfg)
	} else {
		err = run(ctx, os.Stdout, cfg)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "fleet:", err)
		os.Exit(1)
	}
}

// The mock server's keys, all in one account: setup writes with the
// unlimited one, and each phase has a key of its own on the plan, so each
// starts with a full bucket.
const (
	account   = "acct_fleet"
	setupKey  = "sk_test_fleet_setup"
	sharedKey = "sk_test_fleet_shared"
	localKey  = "sk_test_fleet_local"
)

// parsePlan reads -plan into the server's key and the client's plan.
func parsePlan(s string) (mockserver.Key, contextsvc.Plan, error) {
	k, err := mockserver.ParseKey("x:" + s)
	if err != nil || k.Plan == mockserver.PlanUnlimited {
		return k, contextsvc.Plan{}, fmt.Errorf("-plan %q: want free, pro, business or enterprise=PERMINUTE/BURST", s)
	}
	switch k.Plan {
	case mockserver.PlanFree:
		return k, contextsvc.FreePlan(), nil
	case mockserver.PlanPro:
		return k, contextsvc.ProPlan(), nil
	case mockserver.PlanBusiness:
		return k, contextsvc.BusinessPlan(), nil
	}
	p, err := contextsvc.EnterprisePlan(k.PerMinute, k.Burst)
	if err != nil {
		return k, contextsvc.Plan{}, fmt.Errorf("-plan %q: %w", s, err)
	}
	return k, p, nil
}

// run starts Redis (unless given) and the mock server, runs the phases and
// prints their results to w.
func run(ctx context.Context, w io.Writer, cfg config) error {
	if cfg.workers < 1 || cfg.procs < 0 || cfg.procs > cfg.workers || cfg.duration <= 0 {
		return errors.New("need -workers >= 1, 0 <= -procs <= -workers and -duration > 0")
	}
	key, plan, err := parsePlan(cfg.plan)
	if err != nil {
		return err
	}

	if cfg.redisAddr == "" {
		srv, err := redistest.Launch(redistest.Options{})
		if errors.Is(err, redistest.ErrNotInstalled) {
			return fmt.Errorf("no -redis-addr given and redis-server is not installed: %s, or point -redis-addr at a Redis", redistest.InstallHint)
		}
		if err != nil {
			return err
		}
		defer srv.Close()
		cfg.redisAddr = srv.Addr()
		fmt.Fprintf(w, "Redis: started redis-server on %s (pid %d, no persistence); it stops at the end.\n", srv.Addr(), srv.PID())
	} else {
		// One try, so a wrong address is reported at once.
		rdb := redis.NewClient(&redis.Options{Addr: cfg.redisAddr, MaxRetries: -1, DialerRetries: 1})
		err := rdb.Ping(ctx).Err()
		rdb.Close()
		if err != nil {
			return fmt.Errorf("the Redis at %s: %w", cfg.redisAddr, err)
		}
		fmt.Fprintf(w, "Redis: %s\n", cfg.redisAddr)
	}

	onPlan := func(token string) mockserver.Key {
		k := key
		k.Token, k.Account = token, account
		return k
	}
	srv := mockserver.New(
		mockserver.WithKey(mockserver.Key{Token: setupKey, Account: account, Plan: mockserver.PlanUnlimited}),
		mockserver.WithKey(onPlan(sharedKey)),
		mockserver.WithKey(onPlan(localKey)),
	)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()
	cfg.baseURL = "http://" + ln.Addr().String() + "/v1"
	setup, err := contextsvc.NewClient(setupKey, contextsvc.WithBaseURL(cfg.baseURL))
	if err != nil {
		return err
	}
	c, err := setup.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Fleet", Content: "# Fleet\n\nShared by every worker.\n"})
	if err != nil {
		return err
	}
	cfg.target = c.ID
	where := "goroutines of this process"
	if cfg.procs > 0 {
		where = fmt.Sprintf("spread over %d processes", cfg.procs)
	}
	fmt.Fprintf(w, "Mock server on %s; the key is on the %s plan: %.1f requests a second.\n", cfg.baseURL, plan, perSecond(plan))
	fmt.Fprintf(w, "%d workers, %s, each with its own Client and Redis connection.\n", cfg.workers, where)

	phases := []string{"shared"}
	if cfg.local {
		phases = append(phases, "local")
	}
	var errs []error
	for _, phase := range phases {
		fmt.Fprintln(w)
		switch phase {
		case "shared":
			fmt.Fprintf(w, "Phase shared: every worker paces through redisstore.NewLimiter on one Redis key, for %s.\n", cfg.duration)
			cfg.apiKey = sharedKey
		case "local":
			fmt.Fprintf(w, "Phase local: every worker paces with its own WithPlan bucket (no Redis), for %s.\n", cfg.duration)
			cfg.apiKey = localKey
		}
		cfg.phase = phase
		results, err := runPhase(ctx, cfg)
		if err != nil {
			return err
		}
		tooMany, failed := report(w, results, cfg.duration, plan)
		if phase == "shared" && (tooMany > 0 || failed > 0) {
			errs = append(errs, fmt.Errorf("the shared phase met %d answers 429 and %d failed calls", tooMany, failed))
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

func perSecond(p contextsvc.Plan) float64 { return float64(p.PerMinute()) / 60 }

// workerResult is what one worker did.
type workerResult struct {
	Name     string `json:"name"`
	Requests int    `json:"requests"` // calls that succeeded
	TooMany  int    `json:"tooMany"`  // answers 429 (retried by the client)
	Failed   int    `json:"failed"`   // calls that failed
	FirstErr string `json:"firstErr,omitempty"`
}

// runPhase runs cfg.workers workers for cfg.duration, in this process or
// in cfg.procs children, all starting at the same instant.
func runPhase(ctx context.Context, cfg config) ([]workerResult, error) {
	// Half a second for child processes to start, so no worker gets a
	// head start.
	cfg.startAt = time.Now().Add(500 * time.Millisecond).UnixNano()
	if cfg.procs == 0 {
		return runWorkers(ctx, cfg, 1, cfg.workers)
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	type out struct {
		res []workerResult
		err error
	}
	outs := make([]out, cfg.procs)
	var wg sync.WaitGroup
	first := 1
	for p := range cfg.procs {
		n := cfg.workers / cfg.procs
		if p < cfg.workers%cfg.procs {
			n++
		}
		args := []string{"-child", "-phase", cfg.phase, "-plan", cfg.plan, "-redis-addr", cfg.redisAddr,
			"-base-url", cfg.baseURL, "-api-key", cfg.apiKey, "-target", cfg.target,
			"-workers", strconv.Itoa(n), "-duration", cfg.duration.String(),
			"-start-at", strconv.FormatInt(cfg.startAt, 10), "-first", strconv.Itoa(first)}
		first += n
		wg.Go(func() {
			cmd := exec.CommandContext(ctx, exe, args...)
			cmd.Env = append(os.Environ(), childEnv+"=1")
			cmd.Stderr = os.Stderr
			stdout, err := cmd.Output()
			if err != nil {
				outs[p].err = fmt.Errorf("worker process %d: %w", p+1, err)
				return
			}
			sc := bufio.NewScanner(strings.NewReader(string(stdout)))
			for sc.Scan() {
				var r workerResult
				if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
					outs[p].err = fmt.Errorf("worker process %d printed %q: %w", p+1, sc.Text(), err)
					return
				}
				outs[p].res = append(outs[p].res, r)
			}
		})
	}
	wg.Wait()
	var results []workerResult
	for _, o := range outs {
		if o.err != nil {
			return nil, o.err
		}
		results = append(results, o.res...)
	}
	return results, nil
}

// childEnv marks a worker process; the example's test binary runs main
// when it sees it.
const childEnv = "CONTEXTSVC_FLEET_CHILD"

// runChild runs this process's share of the workers and prints one JSON
// line per worker.
func runChild(ctx context.Context, w io.Writer, cfg config) error {
	if cfg.baseURL == "" || cfg.apiKey == "" || cfg.target == "" || cfg.redisAddr == "" || cfg.workers < 1 {
		return errors.New("-child needs -base-url, -api-key, -target, -redis-addr and -workers")
	}
	results, err := runWorkers(ctx, cfg, cfg.first, cfg.workers)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	for _, r := range results {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// runWorkers runs n workers numbered from first, in goroutines of this
// process.
func runWorkers(ctx context.Context, cfg config, first, n int) ([]workerResult, error) {
	_, plan, err := parsePlan(cfg.plan)
	if err != nil {
		return nil, err
	}
	start := time.Unix(0, cfg.startAt)
	end := start.Add(cfg.duration)
	results := make([]workerResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = worker(ctx, cfg, plan, fmt.Sprintf("worker %d", first+i), start, end)
		})
	}
	wg.Wait()
	return results, errors.Join(errs...)
}

// worker is one member of the fleet: a Client of its own, paced by a
// limiter shared through its own Redis connection (phase shared) or by a
// bucket of its own (phase local), calling GET until end.
func worker(ctx context.Context, cfg config, plan contextsvc.Plan, name string, start, end time.Time) (workerResult, error) {
	res := workerResult{Name: name}
	// A transport of its own, as a separate process would have.
	counter := &countingTransport{base: http.DefaultTransport.(*http.Transport).Clone()}
	opts := []contextsvc.Option{contextsvc.WithBaseURL(cfg.baseURL), contextsvc.WithHTTPClient(&http.Client{Transport: counter})}
	switch cfg.phase {
	case "shared":
		rdb := redis.NewClient(&redis.Options{Addr: cfg.redisAddr})
		defer rdb.Close()
		lim, err := redisstore.NewLimiter(rdb, cfg.apiKey, plan)
		if err != nil {
			return res, err
		}
		opts = append(opts, contextsvc.WithLimiter(lim))
	case "local":
		opts = append(opts, contextsvc.WithPlan(plan))
	default:
		return res, fmt.Errorf("unknown phase %q", cfg.phase)
	}
	client, err := contextsvc.NewClient(cfg.apiKey, opts...)
	if err != nil {
		return res, err
	}

	ctx, cancel := context.WithDeadline(ctx, end)
	defer cancel()
	select {
	case <-time.After(time.Until(start)):
	case <-ctx.Done():
		return res, nil
	}
	for ctx.Err() == nil {
		_, err := client.Contexts.Get(ctx, cfg.target)
		switch {
		case err == nil:
			res.Requests++
		case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
			// The phase ends (or would, before the next token): not a
			// failure.
		default:
			res.Failed++
			if res.FirstErr == "" {
				res.FirstErr = err.Error()
			}
		}
	}
	res.TooMany = counter.tooMany()
	return res, nil
}

// report prints the results as a table and returns the total 429 answers
// and failed calls.
func report(w io.Writer, results []workerResult, d time.Duration, plan contextsvc.Plan) (tooMany, failed int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tworker\trequests\treq/s\tanswers 429\tfailed\t")
	var total int
	for _, r := range results {
		fmt.Fprintf(tw, "\t%s\t%d\t%.1f\t%d\t%d\t\n", r.Name, r.Requests, float64(r.Requests)/d.Seconds(), r.TooMany, r.Failed)
		total += r.Requests
		tooMany += r.TooMany
		failed += r.Failed
	}
	rate := float64(total) / d.Seconds()
	fmt.Fprintf(tw, "\ttotal\t%d\t%.1f\t%d\t%d\t\n", total, rate, tooMany, failed)
	tw.Flush()
	fmt.Fprintf(w, "  Together: %.1f requests a second, %.2f of the plan's %.1f; %d answers 429, %d failed calls.\n",
		rate, rate/perSecond(plan), perSecond(plan), tooMany, failed)
	for _, r := range results {
		if r.FirstErr != "" {
			fmt.Fprintf(w, "  %s's first failure: %s\n", r.Name, r.FirstErr)
			break
		}
	}
	return tooMany, failed
}

// countingTransport counts the server's 429 answers, including those the
// client's retries hide from the caller.
type countingTransport struct {
	base http.RoundTripper
	mu   sync.Mutex
	n429 int
}

// RoundTrip implements http.RoundTripper.
func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusTooManyRequests {
		t.mu.Lock()
		t.n429++
		t.mu.Unlock()
	}
	return resp, err
}

func (t *countingTransport) tooMany() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.n429
}
