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
// The shared bucket leaves 100 ms of the plan's rate unused (-headroom,
// redisstore.WithHeadroom): Redis grants tokens in one order, but a busy
// machine may deliver the requests to the server in another, and a
// request that arrives later than its token allowed finds the server's
// bucket short. If the shared phase still meets 429s, the example says so
// and which option absorbs more; the client retried them, and a loaded
// machine is no failure. It exits 1 only when a call failed for another
// reason than the rate limit.
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
	"math"
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
	"github.com/contextsvc/contextsvc-go/mockserver"
	"github.com/contextsvc/contextsvc-go/redisstore"
	"github.com/contextsvc/contextsvc-go/redisstore/redistest"
)

// config is what the flags set.
type config struct {
	workers   int
	procs     int // 0: the workers are goroutines of this process
	duration  time.Duration
	plan      string // as the mock command's -key takes it: free, pro, business, enterprise=N/B
	redisAddr string // "" starts a redis-server for the run
	local     bool   // also run the phase without Redis
	// headroom is the arrival jitter the shared bucket absorbs: the tokens
	// the plan's rate refills in that time are left unused.
	headroom time.Duration

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
	// A worker process (-procs) is this program started with childEnv
	// set; only then are the flags that wire it to its parent defined, so
	// -h shows the user's flags alone.
	cfg, err := parseFlags(os.Args[1:], os.Getenv(childEnv) == "1", os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
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

// parseFlags parses the command line: the user's flags, and in a worker
// process (child) also those its parent passes. Errors and -h are
// reported on stderr with the usage.
func parseFlags(args []string, child bool, stderr io.Writer) (config, error) {
	cfg := config{child: child}
	fs := flag.NewFlagSet("fleet", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&cfg.workers, "workers", 8, "independent clients, each with its own Client, Redis connection and limiter")
	fs.IntVar(&cfg.procs, "procs", 0, "run the workers in this many separate processes (0: goroutines of this one)")
	fs.DurationVar(&cfg.duration, "duration", 10*time.Second, "length of each phase")
	fs.StringVar(&cfg.plan, "plan", "enterprise=6000/20", "plan of the key: free, pro, business or enterprise=PERMINUTE/BURST")
	fs.StringVar(&cfg.redisAddr, "redis-addr", "", "Redis to share the limit through (default: start redis-server on a free loopback port)")
	fs.BoolVar(&cfg.local, "local", true, "also run the phase with a local bucket per worker, for comparison")
	fs.DurationVar(&cfg.headroom, "headroom", 100*time.Millisecond, "arrival jitter the shared bucket absorbs: the tokens the plan refills in this time are left unused (redisstore.WithHeadroom); raise it if the shared phase meets 429s on a busy machine")
	if child {
		fs.StringVar(&cfg.phase, "phase", "", "shared or local")
		fs.StringVar(&cfg.baseURL, "base-url", "", "the server's base URL")
		fs.StringVar(&cfg.apiKey, "api-key", "", "the API key")
		fs.StringVar(&cfg.target, "target", "", "the context id to GET")
		fs.Int64Var(&cfg.startAt, "start-at", 0, "when to start, Unix nanoseconds")
		fs.IntVar(&cfg.first, "first", 1, "number of the first worker")
	}
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		err := fmt.Errorf("unexpected argument %q (flags only)", fs.Arg(0))
		fmt.Fprintf(stderr, "fleet: %v\n", err)
		return cfg, err
	}
	return cfg, nil
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
	if cfg.workers < 1 || cfg.procs < 0 || cfg.procs > cfg.workers || cfg.duration <= 0 || cfg.headroom < 0 {
		return errors.New("need -workers >= 1, 0 <= -procs <= -workers, -duration > 0 and -headroom >= 0")
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
			fmt.Fprintf(w, "Phase shared: every worker paces through redisstore.NewLimiter on one Redis key, for %s;\n", cfg.duration)
			fmt.Fprintf(w, "  the shared bucket leaves %d of the plan's %d tokens unused, for %v of arrival jitter (-headroom).\n",
				min(headroomTokens(plan, cfg.headroom), plan.Burst()-1), plan.Burst(), cfg.headroom)
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
		t := report(w, results, cfg.duration, plan)
		if phase == "shared" && t.tooMany > 0 {
			explain429(w, t, cfg.headroom, plan)
		}
		if t.failed > 0 {
			errs = append(errs, fmt.Errorf("phase %s: %d calls failed for another reason than the rate limit (the first: %s)", phase, t.failed, t.firstErr))
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}

func perSecond(p contextsvc.Plan) float64 { return float64(p.PerMinute()) / 60 }

// explain429 says why a shared phase met 429s, which is load, not a
// failure, and which option absorbs them.
func explain429(w io.Writer, t totals, headroom time.Duration, plan contextsvc.Plan) {
	more := 2 * max(headroom, 50*time.Millisecond)
	fmt.Fprintf(w, "  The server answered %d requests 429 although the fleet stayed within the plan: Redis granted\n", t.tooMany)
	fmt.Fprintf(w, "  their tokens in one order, and they reached the server in another, later than %v of jitter\n", headroom)
	fmt.Fprintf(w, "  allows (a busy machine delays some). The client retried them (%d calls gave up). Leave more\n", t.rateLimited)
	fmt.Fprintf(w, "  headroom: -headroom %v here, redisstore.WithHeadroom(%d) in your code.\n", more, headroomTokens(plan, more))
}

// headroomTokens is the number of tokens the plan refills in d: what the
// shared bucket leaves unused to absorb d of arrival jitter.
func headroomTokens(p contextsvc.Plan, d time.Duration) int {
	return int(math.Ceil(d.Seconds() * perSecond(p)))
}

// workerResult is what one worker did.
type workerResult struct {
	Name        string `json:"name"`
	Requests    int    `json:"requests"`    // calls that succeeded
	TooMany     int    `json:"tooMany"`     // answers 429 (retried by the client)
	RateLimited int    `json:"rateLimited"` // calls that failed on 429s, their retries spent
	Failed      int    `json:"failed"`      // calls that failed otherwise
	FirstErr    string `json:"firstErr,omitempty"`
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
		args := []string{"-phase", cfg.phase, "-plan", cfg.plan, "-redis-addr", cfg.redisAddr,
			"-base-url", cfg.baseURL, "-api-key", cfg.apiKey, "-target", cfg.target,
			"-workers", strconv.Itoa(n), "-duration", cfg.duration.String(), "-headroom", cfg.headroom.String(),
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
		lim, err := redisstore.NewLimiter(rdb, cfg.apiKey, plan, redisstore.WithHeadroom(headroomTokens(plan, cfg.headroom)))
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
		case errors.Is(err, contextsvc.ErrRateLimited):
			res.RateLimited++
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

// totals are a phase's totals.
type totals struct {
	tooMany, rateLimited, failed int
	firstErr                     string
}

// report prints the results as a table and returns the totals.
func report(w io.Writer, results []workerResult, d time.Duration, plan contextsvc.Plan) totals {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\tworker\trequests\treq/s\tanswers 429\tgave up on 429\tfailed\t")
	var total int
	var t totals
	for _, r := range results {
		fmt.Fprintf(tw, "\t%s\t%d\t%.1f\t%d\t%d\t%d\t\n", r.Name, r.Requests, float64(r.Requests)/d.Seconds(), r.TooMany, r.RateLimited, r.Failed)
		total += r.Requests
		t.tooMany += r.TooMany
		t.rateLimited += r.RateLimited
		t.failed += r.Failed
		if t.firstErr == "" {
			t.firstErr = r.FirstErr
		}
	}
	rate := float64(total) / d.Seconds()
	fmt.Fprintf(tw, "\ttotal\t%d\t%.1f\t%d\t%d\t%d\t\n", total, rate, t.tooMany, t.rateLimited, t.failed)
	tw.Flush()
	fmt.Fprintf(w, "  Together: %.1f requests a second, %.2f of the plan's %.1f; %d answers 429, %d calls gave up on them, %d failed otherwise.\n",
		rate, rate/perSecond(plan), perSecond(plan), t.tooMany, t.rateLimited, t.failed)
	if t.firstErr != "" {
		fmt.Fprintf(w, "  The first other failure: %s\n", t.firstErr)
	}
	return t
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
