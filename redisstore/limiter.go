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
	"golang.org/x/time/rate"

	contextsvc "github.com/contextsvc/contextsvc-go"
)

// Defaults of [NewLimiter].
const (
	// DefaultKeyPrefix starts the name of every limiter key; the hex
	// SHA-256 of the API key follows it. redis_rate puts its own "rate:"
	// in front, so the Redis key reads rate:contextsvc:ratelimit:<hash>.
	DefaultKeyPrefix = "contextsvc:ratelimit:"
	// DefaultRecheckInterval is how often a failing-open limiter asks
	// Redis again whether it answers, and how long after coming back it
	// keeps to its share of the plan.
	DefaultRecheckInterval = time.Second
)

// ErrUnavailable is wrapped, together with the cause, by the error a
// [FailClosed] limiter's Wait returns when Redis cannot be reached.
var ErrUnavailable = errors.New("redisstore: Redis unavailable")

// FailureMode is what a [Limiter] does when Redis cannot be reached.
type FailureMode int

const (
	// FailOpen, the default: pace this process alone with a local token
	// bucket of its share of the plan (the plan divided by the number of
	// limiters sharing the key, which they count through Redis every
	// second while it answers), log the change once, and go back to Redis
	// as soon as it answers again (asked in the background, every recheck
	// interval, so no Wait waits on an unreachable Redis). A fleet that
	// loses Redis together so keeps to about the plan's rate. Coming back,
	// the limiter charges the shared bucket with what it sent meanwhile,
	// and keeps to its share for one recheck interval more, while the
	// others come back. A Sentinel failover so costs at most one burst of
	// 429s (docs/fleet.md). A process that loses Redis alone, or before
	// any count, sends its share (the whole plan) on top of what the rest
	// of the fleet sends; the service answers the excess 429 and the
	// client retries it.
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
// falls back to its local bucket (one Warn per outage, with the cause and
// the share of the plan it paces to) and
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

// WithRecheckInterval sets how often a failing-open limiter asks Redis
// again whether it answers (default [DefaultRecheckInterval]); it must be
// positive. The first question follows the fall-back at once; each runs
// in the background, the next a recheck interval after the last began (or
// when it ends, if it took longer), for as long as Waits used the local
// bucket in the last minute. The one that finds Redis charges the shared
// bucket with the tokens the process granted itself meanwhile, and the
// limiter then keeps to its share of the plan for one recheck interval
// more: about the time the fleet's other limiters take to come back.
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
	rdb     redis.UniversalClient
	key     string // as given to redis_rate, which adds "rate:"
	fleet   string // the Redis key counting the limiters that share the bucket
	id      string // this limiter's name in fleet
	limit   redis_rate.Limit
	plan    contextsvc.Plan
	mode    FailureMode
	log     *slog.Logger
	recheck time.Duration

	degraded   atomic.Bool  // failing open: pacing with the local bucket
	beatDue    atomic.Int64 // when the next heartbeat is due, in Unix ns
	graceUntil atomic.Int64 // after coming back: until when Waits keep to the share too, in Unix ns (0: not)

	mu       sync.Mutex // guards what follows
	share    int        // limiters sharing the bucket, as Redis last counted them; 0 before the first count
	local    *fallback  // while degraded: this process's share of the plan
	probeAt  time.Time  // while degraded: when the next probe may start
	probing  bool       // a probe is asking Redis, or is scheduled to, while degraded
	lastUsed time.Time  // while degraded: when a Wait last used the local bucket
	grace    *rate.Limiter
}

// NewLimiter returns a Limiter for apiKey on plan, keeping its state in
// client (one server, Sentinel or Cluster). Its bucket holds one token
// fewer than the plan's burst, as a [contextsvc.LocalLimiter]'s does, so
// arrival jitter does not meet a 429 ([WithHeadroom] changes that). Every process sharing the key must
// give the same plan. The Redis key is named after the SHA-256 of apiKey,
// never the key itself ([Limiter.Key]); a [FailOpen] limiter also keeps
// its name in a second key, [Limiter.Key] without "rate:" and with
// ":limiters" added, a sorted set of the limiters that called Wait in the
// last 10 seconds (one entry of about 80 bytes each), by which each knows
// its share of the plan should Redis fail.
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
	if _, err := contextsvc.NewLocalLimiter(plan); err != nil { // the plan's own check
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
	key := cfg.prefix + hex.EncodeToString(sum[:])
	return &Limiter{
		rl:    redis_rate.NewLimiter(client),
		rdb:   client,
		key:   key,
		fleet: key + ":limiters",
		id:    newMemberName(),
		// GCRA with this burst and emission interval is exactly the
		// service's token bucket, less the headroom.
		limit:   redis_rate.Limit{Rate: plan.PerMinute(), Period: time.Minute, Burst: max(1, plan.Burst()-cfg.headroom)},
		plan:    plan,
		mode:    cfg.mode,
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
// Every few seconds a Wait also starts, in the background, a heartbeat
// that counts the limiters sharing the key (a second script, on a key of
// its own), so that a limiter that loses Redis knows its share of the
// plan.
//
// When Redis cannot be reached, Wait follows the [FailureMode]. A
// [FailOpen] limiter that found Redis unreachable paces with a local
// bucket of its share of the plan at once, without a round trip, until a
// probe in the background finds Redis again.
func (l *Limiter) Wait(ctx context.Context) error {
	if l.rl == nil {
		return fmt.Errorf("%w: redisstore: a Limiter not made by NewLimiter", contextsvc.ErrInvalidArgument)
	}
	if err := l.keepShare(ctx); err != nil {
		return err
	}
	var timer *time.Timer
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if l.mode == FailOpen && l.degraded.Load() {
			if local := l.paceLocally(); local != nil {
				// Redis came back while this Wait waited: ask it too.
				if granted, err := l.waitLocal(ctx, local); granted || err != nil {
					return err
				}
				continue
			}
		}
		asked := time.Now()
		res, err := l.rl.Allow(ctx, l.key, l.limit)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			if l.mode == FailClosed {
				return fmt.Errorf("%w: %w", ErrUnavailable, err)
			}
			if granted, err := l.waitLocal(ctx, l.fallBack(err)); granted || err != nil {
				return err
			}
			continue
		}
		if l.degraded.Load() {
			// This round trip began before another fell back: Redis is
			// back.
			l.recovered(0)
		} else if l.mode == FailOpen && time.Since(asked) > l.recheck {
			l.satThrough()
		}
		if l.mode == FailOpen {
			l.heartbeat()
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
