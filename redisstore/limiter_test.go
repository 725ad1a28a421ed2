package redisstore_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/redisstore"
	"github.com/contextsvc/contextsvc-go/redisstore/redistest"
)

// newLimiter builds a limiter on c, failing the test on error.
func newLimiter(t *testing.T, c redis.UniversalClient, apiKey string, plan contextsvc.Plan, opts ...redisstore.LimiterOption) *redisstore.Limiter {
	t.Helper()
	l, err := redisstore.NewLimiter(c, apiKey, plan, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// testKey returns an API key of the test's own, so tests sharing a Redis
// never share a bucket.
func testKey(t *testing.T) string { return "sk_test_" + strings.Trim(redistest.Prefix(t), ":") }

// TestLimiterSharedRate: three go-redis clients (three pools, as three
// processes would have), each with its own Limiter for one key, and four
// goroutines on each, together get no more than the plan allows. Redis's
// grants cannot be observed directly, but each Wait returns after its
// grant, and the first grant comes after start; so if the k-th Wait to
// return did so before start + (k - bucket) emission intervals, more than
// the plan was granted (checkPaced).
func TestLimiterSharedRate(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	const (
		perMinute = 6000 // 100 a second
		burst     = 5    // 4 in the shared bucket
		clients   = 3
		perClient = 4
		waits     = 15 // per goroutine: 180 in all, about 1.8 s
	)
	plan := enterprisePlan(t, perMinute, burst)
	key := testKey(t)
	interval := time.Minute / perMinute

	var mu sync.Mutex
	var returns []time.Duration
	var wg sync.WaitGroup
	ctx := t.Context()
	start := time.Now()
	for range clients {
		lim := newLimiter(t, redistest.Client(t, srv), key, plan)
		for range perClient {
			wg.Go(func() {
				for range waits {
					if err := lim.Wait(ctx); err != nil {
						t.Error(err)
						return
					}
					d := time.Since(start)
					mu.Lock()
					returns = append(returns, d)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	total := clients * perClient * waits
	if len(returns) != total {
		t.Fatalf("%d Waits returned, want %d", len(returns), total)
	}
	// The shared bucket holds burst-1 tokens. Redis's clock (TIME) and
	// Go's can disagree by a little; a millisecond is far below the 10 ms
	// interval.
	checkPaced(t, "Waits", returns, burst-1, interval, time.Millisecond)
	slices.Sort(returns)
	t.Logf("%d Waits over %v: %.0f/s for a plan of %d/s", total, returns[total-1], float64(total)/returns[total-1].Seconds(), perMinute/60)
}

// TestLimiterSleepsWhatRedisSays: a Wait that finds the bucket empty
// makes exactly two round trips (the refusal naming the wait, then the
// grant after sleeping it): it sleeps what Redis says and never polls.
func TestLimiterSleepsWhatRedisSays(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t, redistest.Shared(t))
	// Load the script first (EVALSHA, NOSCRIPT, EVAL) with another key,
	// so the counts below are the steady state's.
	if err := newLimiter(t, c, testKey(t)+"_warm", contextsvc.FreePlan()).Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	hook := &countingHook{}
	c.AddHook(hook)
	// 600 a minute: a token every 100 ms; burst 2, so 1 in the bucket.
	lim := newLimiter(t, c, testKey(t), enterprisePlan(t, 600, 2))
	ctx := context.Background()
	if err := lim.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	if n := hook.scripts.Load(); n != 1 {
		t.Fatalf("a Wait with a token free ran %d scripts, want 1", n)
	}
	start := time.Now()
	if err := lim.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	if n := hook.scripts.Load() - 1; n != 2 {
		t.Errorf("a Wait for the next token ran %d scripts, want 2 (refused with the wait, then granted)", n)
	}
	if elapsed < 90*time.Millisecond {
		t.Errorf("the second Wait returned after %v; the next token was 100 ms away", elapsed)
	}
}

// TestLimiterHonoursContext: a Wait whose token would come after the
// context's deadline returns at once with DeadlineExceeded, and a
// cancelled Wait returns Canceled while sleeping.
func TestLimiterHonoursContext(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t, redistest.Shared(t))
	// One a minute, burst 2: one token, then the next a minute later.
	lim := newLimiter(t, c, testKey(t), enterprisePlan(t, 1, 2))
	if err := lim.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}

	// Refused at once, on Redis's word, rather than after sleeping until
	// the deadline: the error says so, the context's own would not.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := lim.Wait(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "past the context's deadline") {
		t.Errorf("Wait with a 30 s deadline for a token a minute away: %v, want DeadlineExceeded at once", err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- lim.Wait(ctx) }()
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Wait: %v, want Canceled", err)
	}
}

// TestLimiterHeadroom: the shared bucket holds the plan's burst less the
// headroom (one token by default, as NewLimiter), at least one: that many
// Waits pass at once on a slow plan, and the next one would wait.
func TestLimiterHeadroom(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t, redistest.Shared(t))
	plan := enterprisePlan(t, 1, 10) // one a minute: no refill during the test
	for _, tc := range []struct {
		opts []redisstore.LimiterOption
		want int
	}{
		{nil, 9},
		{[]redisstore.LimiterOption{redisstore.WithHeadroom(0)}, 10},
		{[]redisstore.LimiterOption{redisstore.WithHeadroom(4)}, 6},
		{[]redisstore.LimiterOption{redisstore.WithHeadroom(30)}, 1},
	} {
		lim := newLimiter(t, c, testKey(t)+fmt.Sprint("_", tc.want), plan, tc.opts...)
		for i := range tc.want {
			if err := lim.Wait(context.Background()); err != nil {
				t.Fatalf("bucket of %d: Wait %d: %v", tc.want, i+1, err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		if err := lim.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("bucket of %d: Wait %d = %v, want DeadlineExceeded (the next token is a minute away)", tc.want, tc.want+1, err)
		}
		cancel()
	}
}

// TestLimiterKeys: the Redis key is named after the API key's SHA-256 and
// never holds the key itself, and it expires once the bucket would be
// full again.
func TestLimiterKeys(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t, redistest.Shared(t))
	apiKey := testKey(t)
	prefix := redistest.Prefix(t)
	// 60 a minute, burst 10: 9 tokens, full again 9 s after emptying.
	lim := newLimiter(t, c, apiKey, contextsvc.FreePlan(), redisstore.WithKeyPrefix(prefix))
	sum := sha256.Sum256([]byte(apiKey))
	if want := "rate:" + prefix + hex.EncodeToString(sum[:]); lim.Key() != want {
		t.Errorf("Key() = %q, want %q", lim.Key(), want)
	}
	ctx := context.Background()
	for range 9 {
		if err := lim.Wait(ctx); err != nil {
			t.Fatal(err)
		}
	}
	ttl, err := c.PTTL(ctx, lim.Key()).Result()
	if err != nil {
		t.Fatal(err)
	}
	// redis_rate sets whole seconds: ceil(9 tokens × 1 s), counted down
	// since the last Wait (however long ago that was on a busy machine).
	if ttl <= 0 || ttl > 9*time.Second {
		t.Errorf("PTTL %v after spending the bucket, want up to 9 s", ttl)
	}
	keys, err := c.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if strings.Contains(k, apiKey) {
			t.Errorf("Redis key %q contains the API key", k)
		}
		v, _ := c.Get(ctx, k).Result()
		if strings.Contains(v, apiKey) {
			t.Errorf("Redis key %q holds the API key", k)
		}
	}
	if !slices.Contains(keys, lim.Key()) {
		t.Errorf("Redis has no key %s", lim.Key())
	}
}

// TestLimiterThroughClients: three clients, each with its own go-redis
// connection and limiter on one key, call a server (that holds the key to
// the same plan) without one 429.
func TestLimiterThroughClients(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	const token = "sk_test_shared_plan"
	plan := enterprisePlan(t, 600, 5)
	ts := newPlanServer(t, plan)
	limKey := testKey(t) // the limiter's key: one of the test's own on the shared Redis
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range 3 {
		lim := newLimiter(t, redistest.Client(t, srv), limKey, plan)
		client, err := contextsvc.NewClient(token, contextsvc.WithBaseURL(ts.URL), contextsvc.WithLimiter(lim), contextsvc.WithMaxRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			for j := range 5 {
				if _, err := client.Contexts.Get(ctx, "ctx_missing_"+fmt.Sprint(i, "_", j)); !errors.Is(err, contextsvc.ErrNotFound) {
					t.Errorf("client %d call %d: %v, want 404 (and never 429)", i, j, err)
				}
			}
		})
	}
	wg.Wait()
}

// TestLimiterFailClosed: with Redis stopped, every Wait fails at once with
// an error wrapping ErrUnavailable and the cause, a call through a client
// fails with it unsent, and once Redis is back Waits pass again.
func TestLimiterFailClosed(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	// go-redis's defaults retry a refused connection for about 1.75 s
	// (5 dials × 4 tries) before giving up; one try each keeps this short.
	fast := &redis.Options{MaxRetries: -1, DialerRetries: 1}
	lim := newLimiter(t, redistest.Client(t, srv, fast), "sk_test_closed", contextsvc.BusinessPlan(),
		redisstore.WithFailureMode(redisstore.FailClosed))
	ts := newPlanServer(t, contextsvc.BusinessPlan())
	client, err := contextsvc.NewClient("sk_test_closed", contextsvc.WithBaseURL(ts.URL), contextsvc.WithLimiter(lim))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := lim.Wait(ctx); err != nil {
		t.Fatal(err)
	}

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	err = lim.Wait(ctx)
	if !errors.Is(err, redisstore.ErrUnavailable) || !isNetError(err) {
		t.Errorf("Wait with Redis stopped: %v, want ErrUnavailable wrapping a network error", err)
	}
	_, err = client.Contexts.Get(ctx, "ctx_x")
	if !errors.Is(err, redisstore.ErrUnavailable) ||
		!strings.HasPrefix(err.Error(), "contextsvc: GET /contexts/ctx_x: waiting for the rate limiter: redisstore: Redis unavailable: ") {
		t.Errorf("call with Redis stopped: %v", err)
	}
	if n := ts.requests.Load(); n != 0 {
		t.Errorf("the server received %d requests; want the call refused unsent", n)
	}
	if lim.Degraded() {
		t.Error("a fail-closed limiter reports Degraded")
	}

	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if err := lim.Wait(ctx); err != nil {
		t.Errorf("Wait after Redis is back: %v", err)
	}
	if _, err := client.Contexts.Get(ctx, "ctx_x"); !errors.Is(err, contextsvc.ErrNotFound) {
		t.Errorf("call after Redis is back: %v, want 404", err)
	}
}

// TestLimiterFailOpen: goroutines keep calling Wait while Redis is stopped
// and started again. No Wait fails; the limiter paces locally meanwhile,
// says so once in the log, and goes back to Redis (and says so once) after
// the restart.
func TestLimiterFailOpen(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, redistest.Options{})
	rec := &logRecorder{}
	c := redistest.Client(t, srv)
	apiKey := "sk_test_open_secret"
	lim := newLimiter(t, c, apiKey, enterprisePlan(t, 60000, 100), // 1,000 a second
		redisstore.WithLogger(slog.New(rec)), redisstore.WithRecheckInterval(20*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var mu sync.Mutex
	var waits int
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for ctx.Err() == nil {
				if err := lim.Wait(ctx); err != nil && ctx.Err() == nil {
					t.Errorf("Wait: %v", err)
				}
				mu.Lock()
				waits++
				mu.Unlock()
			}
		})
	}
	count := func() int { mu.Lock(); defer mu.Unlock(); return waits }
	before := count()
	waitFor(t, "Waits through Redis", func() bool { return count() > before+50 })
	if lim.Degraded() {
		t.Fatal("degraded with Redis up")
	}

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the fall-back", lim.Degraded)
	stopped := count()
	waitFor(t, "Waits with Redis stopped", func() bool { return count() > stopped+50 })

	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "Redis again", func() bool { return !lim.Degraded() })
	waitFor(t, "Redis to hold the key again", func() bool { return c.Exists(ctx, lim.Key()).Val() == 1 })
	cancel()
	wg.Wait()

	var warns, infos int
	for _, line := range rec.lines() {
		switch {
		case strings.HasPrefix(line, "WARN contextsvc rate limiter: Redis unreachable"):
			warns++
		case strings.HasPrefix(line, "INFO contextsvc rate limiter: Redis reachable again"):
			infos++
		}
		if strings.Contains(line, apiKey) {
			t.Errorf("log line shows the API key: %s", line)
		}
	}
	if warns != 1 || infos != 1 {
		t.Errorf("log has %d fall-back and %d recovery lines, want 1 and 1:\n%s", warns, infos, strings.Join(rec.lines(), "\n"))
	}
}

// scriptFault is a go-redis hook that stands in for a Redis that cannot be
// reached: while failing, every script fails at once; while hanging, every
// script blocks until release is closed and then fails, as a call to a
// host that stopped answering does once go-redis's time-outs run out.
// A script sent with a context marked by callerKey (a caller's Wait, not
// the limiter's check in the background) fails at once instead of
// hanging, and is counted: the test needs no timer to tell that a Wait
// would have waited on the hanging Redis.
type scriptFault struct {
	mode          atomic.Int32  // faultNone, faultFail or faultHang
	hanging       chan struct{} // gets a value each time a script starts hanging
	release       chan struct{}
	callerHanging atomic.Int32 // scripts of a caller's Wait met while hanging
	// charged adds up the tokens asked for by the scripts on a bucket
	// ("rate:…") that ran in the background (not in a caller's Wait)
	// while no fault was set.
	charged atomic.Int64
}

// callerKey marks the context of a caller's Wait.
type callerKey struct{}

const (
	faultNone = iota
	faultFail
	faultHang
)

func newScriptFault(t *testing.T) *scriptFault {
	f := &scriptFault{hanging: make(chan struct{}, 16), release: make(chan struct{})}
	t.Cleanup(f.releaseAll)
	return f
}

func (f *scriptFault) releaseAll() {
	select {
	case <-f.release:
	default:
		close(f.release)
	}
}

func (f *scriptFault) DialHook(next redis.DialHook) redis.DialHook { return next }

func (f *scriptFault) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if name := strings.ToLower(cmd.Name()); name != "evalsha" && name != "eval" {
			return next(ctx, cmd)
		}
		switch f.mode.Load() {
		case faultFail:
			cmd.SetErr(errors.New("simulated: Redis unreachable"))
			return cmd.Err()
		case faultHang:
			if ctx.Value(callerKey{}) != nil {
				f.callerHanging.Add(1)
				cmd.SetErr(errors.New("simulated: Redis stopped answering, and a caller's Wait asked it"))
				return cmd.Err()
			}
			f.hanging <- struct{}{}
			<-f.release
			cmd.SetErr(errors.New("simulated: Redis stopped answering"))
			return cmd.Err()
		}
		err := next(ctx, cmd)
		// EVALSHA sha numkeys key burst rate period cost; a NOSCRIPT
		// answer is followed by EVAL with the same arguments.
		if args := cmd.Args(); err == nil && ctx.Value(callerKey{}) == nil && len(args) == 8 && strings.HasPrefix(fmt.Sprint(args[3]), "rate:") {
			n, _ := strconv.Atoi(fmt.Sprint(args[7]))
			f.charged.Add(int64(n))
		}
		return err
	}
}

func (f *scriptFault) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestLimiterFailOpenProbesInBackground: while a failing-open limiter
// paces locally, its checks whether Redis answers again run in the
// background. A Wait never waits on an unreachable Redis once the limiter
// knows it is unreachable (a check can take go-redis's every time-out and
// retry, seconds, or much longer for a host that stopped answering). The
// check that finds Redis again charges the shared bucket with the tokens
// the process granted itself meanwhile, and no more: the service counted
// those requests against the same bucket.
func TestLimiterFailOpenProbesInBackground(t *testing.T) {
	t.Parallel()
	c := redistest.Client(t, redistest.Shared(t))
	fault := newScriptFault(t)
	c.AddHook(fault)
	// 600 a minute, burst 10: alone, the limiter's local bucket paces to
	// the whole plan, a token every 100 ms.
	lim := newLimiter(t, c, testKey(t), enterprisePlan(t, 600, 10), redisstore.WithRecheckInterval(10*time.Millisecond))
	ctx := context.WithValue(context.Background(), callerKey{}, true)
	wait := func(what string) {
		t.Helper()
		if err := lim.Wait(ctx); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if n := fault.callerHanging.Load(); n != 0 {
			t.Fatalf("%s: the Wait asked a Redis known to be unreachable (%d scripts)", what, n)
		}
	}

	wait("Redis up")
	fault.mode.Store(faultFail)
	wait("Redis fails") // falls back: local token 1
	if !lim.Degraded() {
		t.Fatal("not degraded after Redis failed")
	}
	fault.mode.Store(faultHang)
	<-fault.hanging // a check in the background is hanging
	wait("Redis hangs")
	wait("Redis still hangs") // local tokens 2 and 3
	charged := fault.charged.Load()
	fault.mode.Store(faultNone)
	fault.releaseAll() // the hanging check fails; the next finds Redis
	waitFor(t, "Redis again", func() bool { return !lim.Degraded() })
	waitFor(t, "the charge", func() bool { return fault.charged.Load()-charged >= 3 })
	if n := fault.charged.Load() - charged; n != 3 {
		t.Errorf("the shared bucket was charged %d tokens for 3 granted locally", n)
	}
}

// TestLimiterFailOpenShare: four limiters of one key, each on its own
// connection, count each other through Redis; when Redis fails, each
// paces to a quarter of the plan, so that together they keep to it.
func TestLimiterFailOpenShare(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	const limiters = 4
	// 600 a minute, burst 10: a quarter is 150 a minute (one token every
	// 400 ms), burst 2.
	plan := enterprisePlan(t, 600, 10)
	key := testKey(t)
	type member struct {
		lim   *redisstore.Limiter
		fault *scriptFault
		log   *logRecorder
	}
	var fleet []member
	for range limiters {
		c := redistest.Client(t, srv)
		m := member{fault: newScriptFault(t), log: &logRecorder{}}
		c.AddHook(m.fault)
		m.lim = newLimiter(t, c, key, plan, redisstore.WithLogger(slog.New(m.log)))
		fleet = append(fleet, m)
	}
	ctx := context.Background()
	// Until every limiter's heartbeat (in the background: the second 100
	// ms after the first, then one a second while it waits) counted the
	// others.
	waitFor(t, "the limiters counting each other", func() bool {
		counted := true
		for _, m := range fleet {
			if err := m.lim.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			counted = counted && m.lim.Share() == limiters
		}
		return counted
	})
	c := redistest.Client(t, srv)
	set := strings.TrimPrefix(fleet[0].lim.Key(), "rate:") + ":limiters"
	if n := c.ZCard(ctx, set).Val(); n != limiters {
		t.Errorf("the fleet's set %s holds %d limiters, want %d", set, n, limiters)
	}
	if ttl := c.PTTL(ctx, set).Val(); ttl <= 0 || ttl > 10*time.Second {
		t.Errorf("the fleet's set expires in %v, want within 10 s", ttl)
	}

	for _, m := range fleet {
		m.fault.mode.Store(faultFail)
	}
	start := time.Now()
	var at []time.Duration
	for i := range 3 {
		if err := fleet[0].lim.Wait(ctx); err != nil {
			t.Fatalf("local token %d: %v", i+1, err)
		}
		at = append(at, time.Since(start))
	}
	line, _, ok := fleet[0].log.last(logFellBack)
	if !ok || !strings.Contains(line, "limiters=4") || !strings.Contains(line, "perMinute=150") {
		t.Errorf("fall-back logged as %q, want a quarter of the plan: limiters=4 perMinute=150", line)
	}
	// Its bucket starts empty: each token at least 400 ms after the one
	// before, the first within 400 ms.
	checkPaced(t, "the local bucket", at, 1, 400*time.Millisecond, 0)
}

func TestNewLimiterRefusesBadArguments(t *testing.T) {
	t.Parallel()
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer c.Close()
	tests := []struct {
		name   string
		client redis.UniversalClient
		key    string
		plan   contextsvc.Plan
		opts   []redisstore.LimiterOption
	}{
		{"nil client", nil, "sk", contextsvc.FreePlan(), nil},
		{"empty key", c, "", contextsvc.FreePlan(), nil},
		{"zero plan", c, "sk", contextsvc.Plan{}, nil},
		{"unknown failure mode", c, "sk", contextsvc.FreePlan(), []redisstore.LimiterOption{redisstore.WithFailureMode(7)}},
		{"negative headroom", c, "sk", contextsvc.FreePlan(), []redisstore.LimiterOption{redisstore.WithHeadroom(-1)}},
		{"empty key prefix", c, "sk", contextsvc.FreePlan(), []redisstore.LimiterOption{redisstore.WithKeyPrefix("")}},
		{"zero recheck interval", c, "sk", contextsvc.FreePlan(), []redisstore.LimiterOption{redisstore.WithRecheckInterval(0)}},
		{"negative recheck interval", c, "sk", contextsvc.FreePlan(), []redisstore.LimiterOption{redisstore.WithRecheckInterval(-time.Second)}},
	}
	for _, tc := range tests {
		if l, err := redisstore.NewLimiter(tc.client, tc.key, tc.plan, tc.opts...); !errors.Is(err, contextsvc.ErrInvalidArgument) || l != nil {
			t.Errorf("%s: %v, want ErrInvalidArgument", tc.name, err)
		}
	}
}

func TestFailureModeString(t *testing.T) {
	t.Parallel()
	for m, want := range map[redisstore.FailureMode]string{redisstore.FailOpen: "fail open", redisstore.FailClosed: "fail closed", 9: "FailureMode(9)"} {
		if got := m.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(m), got, want)
		}
	}
}
