package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// Defaults of [NewLimiter].
const (
	// DefaultKeyPrefix starts the name of every limiter key; the hex
	// SHA-256 of the API key follows it. redis_rate puts its own "rate:"
	// in front, so the Redis key reads rate:contextsvc:ratelimit:<hash>.
	DefaultKeyPrefix = "contextsvc:ratelimit:"
	// DefaultRecheckInterval is how long a failing-open limiter paces
	// locally before it tries Redis again.
	DefaultRecheckInterval = time.Second
)

// ErrUnavailable is wrapped, together with the cause, by the error a
// [FailClosed] limiter's Wait returns when Redis cannot be reached.
var ErrUnavailable = errors.New("redisstore: Redis unavailable")

// FailureMode is what a [Limiter] does when Redis cannot be reached.
type FailureMode int

const (
	// FailOpen, the default: pace this process alone with a local token
	// bucket of the same plan (a [contextsvc.LocalLimiter]), log the
	// change once, and go back to Redis as soon as it answers again (asked
	// in the background, so no Wait waits on an unreachable Redis). The
	// fleet may then try up to one plan's rate per process; the service
	// answers the excess 429 and the client retries it, so calls go on,
	// slower, and a fleet running flat out sees some whose retries run
	// out (as without Redis; see BENCHMARKS.md).
	FailOpen FailureMode = iota
	// FailClosed: Wait returns an error wrapping [ErrUnavailable] and the
	// cause, so each call fails at once without being sent (the client's
	// error reads "contextsvc: GET /contexts/x: waiting for the rate
	// limiter: redisstore: Redis unavailable: …"). For fleets where any
	// 429 costs more than a failed call.
	FailClosed
)

// String returns "fail open" or "fail closed".
func (m FailureMode) String() string {
	switch m {
	case FailOpen:
		return "fail open"
	case FailClosed:
		return "fail closed"
	}
	return "FailureMode(" + fmt.Sprint(int(m)) + ")"
}

// LimiterOption configures [NewLimiter]. An option given a value it cannot
// use makes NewLimiter return an error wrapping
// [contextsvc.ErrInvalidArgument].
type LimiterOption func(*limiterConfig) error

type limiterConfig struct {
	mode     FailureMode
	logger   *slog.Logger
	prefix   string
	recheck  time.Duration
	headroom int
}

// WithFailureMode sets what Wait does when Redis cannot be reached
// (default [FailOpen]).
func WithFailureMode(m FailureMode) LimiterOption {
	return func(c *limiterConfig) error {
		if m != FailOpen && m != FailClosed {
			return fmt.Errorf("%w: redisstore.WithFailureMode: unknown %v", contextsvc.ErrInvalidArgument, m)
		}
		c.mode = m
		return nil
	}
}

// WithLogger sets the logger that a [FailOpen] limiter tells when it
// falls back to its local bucket (one Warn per outage, with the cause) and
// when Redis is back (one Info). Default, and nil: none, like the rest of
// the SDK; [Limiter.Degraded] reports the state too. The API key is never
// logged.
func WithLogger(l *slog.Logger) LimiterOption {
	return func(c *limiterConfig) error {
		if l == nil {
			l = slog.New(slog.DiscardHandler)
		}
		c.logger = l
		return nil
	}
}

// WithKeyPrefix replaces [DefaultKeyPrefix], e.g. to keep two
// environments apart on one Redis. An empty prefix is an error.
func WithKeyPrefix(prefix string) LimiterOption {
	return func(c *limiterConfig) error {
		if prefix == "" {
			return fmt.Errorf("%w: redisstore.WithKeyPrefix(\"\"): leave the option out for %q", contextsvc.ErrInvalidArgument, DefaultKeyPrefix)
		}
		c.prefix = prefix
		return nil
	}
}

// WithHeadroom sets how many tokens of the plan's burst the shared bucket
// leaves unused (default 1, as [contextsvc.LocalLimiter] does; 0 paces to
// the plan exactly; negative is an error). Each token absorbs one emission
// interval of arrival jitter (10 ms at 6,000 a minute, 1 s on the Free
// plan): the service counts a request when it arrives, and requests
// granted by Redis in one order may reach it in another, from hosts at
// different distances or delayed by a busy CPU. A fleet running flat out
// on a fast plan may want headroom covering that difference, e.g. 5 tokens
// for 50 ms at 6,000 a minute. The bucket keeps at least one token
// whatever the headroom.
func WithHeadroom(tokens int) LimiterOption {
	return func(c *limiterConfig) error {
		if tokens < 0 {
			return fmt.Errorf("%w: redisstore.WithHeadroom(%d): want >= 0", contextsvc.ErrInvalidArgument, tokens)
		}
		c.headroom = tokens
		return nil
	}
}

// WithRecheckInterval sets how long a failing-open limiter paces locally
// before it asks Redis again whether it answers (default
// [DefaultRecheckInterval]); it must be positive. The question runs in the
// background, started by the first Wait after the interval, and spends no
// token.
func WithRecheckInterval(d time.Duration) LimiterOption {
	return func(c *limiterConfig) error {
		if d <= 0 {
			return fmt.Errorf("%w: redisstore.WithRecheckInterval(%v): must be positive", contextsvc.ErrInvalidArgument, d)
		}
		c.recheck = d
		return nil
	}
}

// Limiter is a [contextsvc.Limiter] shared, through Redis, by every
// process that builds one for the same API key: together they send at most
// the plan's rate. Give it to a client with [contextsvc.WithLimiter]. It is
// safe for concurrent use; build one per process and API key, and let
// every client of that process share it.
type Limiter struct {
	rl      *redis_rate.Limiter
	key     string // as given to redis_rate, which adds "rate:"
	limit   redis_rate.Limit
	plan    contextsvc.Plan
	mode    FailureMode
	local   *contextsvc.LocalLimiter
	log     *slog.Logger
	recheck time.Duration

	degraded  atomic.Bool // failing open: pacing with local
	mu        sync.Mutex  // guards recheckAt and probing
	recheckAt time.Time
	probing   bool // a probe is asking Redis, in the background, while degraded
}

// NewLimiter returns a Limiter for apiKey on plan, keeping its state in
// client (one server, Sentinel or Cluster). Its bucket holds one token
// fewer than the plan's burst, as a [contextsvc.LocalLimiter]'s does, so
// arrival jitter does not meet a 429 ([WithHeadroom] changes that). Every process sharing the key must
// give the same plan. The Redis key is named after the SHA-256 of apiKey,
// never the key itself ([Limiter.Key]).
//
// An empty apiKey, a nil client or a plan without a positive rate and
// burst is an error wrapping [contextsvc.ErrInvalidArgument].
func NewLimiter(client redis.UniversalClient, apiKey string, plan contextsvc.Plan, opts ...LimiterOption) (*Limiter, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: redisstore.NewLimiter: nil Redis client", contextsvc.ErrInvalidArgument)
	}
	if apiKey == "" {
		return nil, fmt.Errorf("%w: redisstore.NewLimiter: empty API key", contextsvc.ErrInvalidArgument)
	}
	local, err := contextsvc.NewLocalLimiter(plan)
	if err != nil {
		return nil, err
	}
	cfg := limiterConfig{
		mode:     FailOpen,
		logger:   slog.New(slog.DiscardHandler),
		prefix:   DefaultKeyPrefix,
		recheck:  DefaultRecheckInterval,
		headroom: 1,
	}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	sum := sha256.Sum256([]byte(apiKey))
	return &Limiter{
		rl:  redis_rate.NewLimiter(client),
		key: cfg.prefix + hex.EncodeToString(sum[:]),
		// GCRA with this burst and emission interval is exactly the
		// service's token bucket, less the headroom.
		limit:   redis_rate.Limit{Rate: plan.PerMinute(), Period: time.Minute, Burst: max(1, plan.Burst()-cfg.headroom)},
		plan:    plan,
		mode:    cfg.mode,
		local:   local,
		log:     cfg.logger,
		recheck: cfg.recheck,
	}, nil
}

// Key returns the Redis key holding the shared state: "rate:" (added by
// redis_rate), the prefix, and the hex SHA-256 of the API key.
func (l *Limiter) Key() string { return "rate:" + l.key }

// Plan returns the plan the limiter paces to.
func (l *Limiter) Plan() contextsvc.Plan { return l.plan }

// Degraded reports whether a [FailOpen] limiter is pacing this process
// alone with its local bucket because Redis could not be reached.
func (l *Limiter) Degraded() bool { return l.degraded.Load() }

// Wait blocks until this process may send one request, or ctx is done.
//
// Each round is one script on Redis (EVALSHA), which either grants a token
// or says how long until the next one is due; Wait then sleeps exactly
// that long on a timer and asks again, since another process may have
// taken the token meanwhile. It never polls. When the wait Redis names
// would end after ctx's deadline, Wait returns at once with an error
// wrapping context.DeadlineExceeded.
//
// ctx bounds the sleeps. The Redis round trip itself is bounded by the
// go-redis client's own time-outs (ReadTimeout, 3 s by default), and by
// ctx only if the client was made with ContextTimeoutEnabled.
//
// When Redis cannot be reached, Wait follows the [FailureMode]. A
// [FailOpen] limiter that found Redis unreachable paces with its local
// bucket at once, without a round trip, until a probe in the background
// finds Redis again.
func (l *Limiter) Wait(ctx context.Context) error {
	if l.rl == nil {
		return fmt.Errorf("%w: redisstore: a Limiter not made by NewLimiter", contextsvc.ErrInvalidArgument)
	}
	var timer *time.Timer
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if l.mode == FailOpen && l.degraded.Load() && l.paceLocally() {
			return l.local.Wait(ctx)
		}
		res, err := l.rl.Allow(ctx, l.key, l.limit)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if l.mode == FailClosed {
				return fmt.Errorf("%w: %w", ErrUnavailable, err)
			}
			l.fallBack(err)
			return l.local.Wait(ctx)
		}
		if l.degraded.Load() {
			l.recovered()
		}
		if res.Allowed > 0 {
			return nil
		}
		wait := res.RetryAfter
		if wait <= 0 { // not something redis_rate answers; never spin on it
			wait = time.Millisecond
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return fmt.Errorf("redisstore: the shared rate limit's next token is %v away, past the context's deadline: %w", wait, context.DeadlineExceeded)
		}
		if timer == nil {
			timer = time.NewTimer(wait)
			defer timer.Stop()
		} else {
			timer.Reset(wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-timer.C:
		}
	}
}

// paceLocally reports whether this Wait uses the local bucket because
// Redis could not be reached, and once the recheck interval has passed
// starts a probe. The probe runs in the background rather than in this
// Wait: against a Redis that is down, a round trip takes go-redis's every
// dial retry (about 1.75 s with its defaults), and against one that stopped
// answering its read time-outs and retries, and one caller in every
// recheck interval would pay that.
func (l *Limiter) paceLocally() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.degraded.Load() {
		return false
	}
	if !l.probing && !time.Now().Before(l.recheckAt) {
		l.probing = true
		go l.probe()
	}
	return true
}

// probe asks Redis whether it answers again with the script Wait runs, at
// a cost of zero tokens, so it spends nothing of the fleet's plan. Its
// duration is bounded by the go-redis client's time-outs; one runs at a
// time.
func (l *Limiter) probe() {
	if _, err := l.rl.AllowN(context.Background(), l.key, l.limit, 0); err != nil {
		l.fallBack(err)
		return
	}
	l.recovered()
}

// fallBack switches to the local bucket after Redis failed with cause,
// logging only the switch, not every failed call.
func (l *Limiter) fallBack(cause error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.probing = false
	l.recheckAt = time.Now().Add(l.recheck)
	if !l.degraded.Swap(true) {
		l.log.Warn("contextsvc rate limiter: Redis unreachable; pacing this process alone with a local bucket of the plan until it answers again",
			"key", l.Key(), "plan", l.plan.String(), "recheck", l.recheck, "error", cause)
	}
}

// recovered switches back to Redis after a call through it succeeded.
func (l *Limiter) recovered() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.probing = false
	if l.degraded.Swap(false) {
		l.log.Info("contextsvc rate limiter: Redis reachable again; sharing the plan's rate with the fleet again", "key", l.Key())
	}
}
