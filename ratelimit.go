package contextsvc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

// Plan is a service plan's request rate: a sustained number of requests per
// minute and a burst that may be spent at once. The client uses it to pace
// itself (see [WithPlan]) so it rarely meets a 429 at all.
type Plan struct {
	name      string
	perMinute int
	burst     int
}

// FreePlan returns the Free plan: 60 requests a minute, bursts of 10.
//
// The published plans are functions, not variables, so that no package can
// change a plan for every other one in the process.
func FreePlan() Plan { return Plan{name: "free", perMinute: 60, burst: 10} }

// ProPlan returns the Pro plan: 300 requests a minute, bursts of 50.
func ProPlan() Plan { return Plan{name: "pro", perMinute: 300, burst: 50} }

// BusinessPlan returns the Business plan: 1,000 requests a minute, bursts
// of 100.
func BusinessPlan() Plan { return Plan{name: "business", perMinute: 1000, burst: 100} }

// EnterprisePlan returns the plan of an Enterprise account, whose limits
// are agreed per account. perMinute and burst must be positive; otherwise
// it returns an error wrapping [ErrInvalidArgument].
func EnterprisePlan(perMinute, burst int) (Plan, error) {
	p := Plan{name: "enterprise", perMinute: perMinute, burst: burst}
	if err := p.validate(); err != nil {
		return Plan{}, err
	}
	return p, nil
}

// ParsePlan returns the plan that name spells as people write it in a flag,
// an environment variable or a configuration file: "free", "pro",
// "business", or "enterprise=PERMINUTE/BURST" for an Enterprise account's
// limits (enterprise=1200/100). Anything else is an error wrapping
// [ErrInvalidArgument] that names the forms there are.
func ParsePlan(name string) (Plan, error) {
	switch name {
	case "free":
		return FreePlan(), nil
	case "pro":
		return ProPlan(), nil
	case "business":
		return BusinessPlan(), nil
	}
	limits, ok := strings.CutPrefix(name, "enterprise=")
	if !ok {
		return Plan{}, fmt.Errorf("%w: plan %q must be free, pro, business or enterprise=PERMINUTE/BURST", ErrInvalidArgument, name)
	}
	n, b, ok := strings.Cut(limits, "/")
	perMinute, err1 := strconv.Atoi(n)
	burst, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || perMinute <= 0 || burst <= 0 {
		return Plan{}, fmt.Errorf("%w: plan %q: enterprise=PERMINUTE/BURST takes two positive numbers", ErrInvalidArgument, name)
	}
	return EnterprisePlan(perMinute, burst)
}

// Name returns the plan's name: "free", "pro", "business" or "enterprise".
func (p Plan) Name() string { return p.name }

// PerMinute returns the sustained requests per minute.
func (p Plan) PerMinute() int { return p.perMinute }

// Burst returns how many requests may be sent at once.
func (p Plan) Burst() int { return p.burst }

// String describes the plan, e.g. "pro (300/min, burst 50)".
func (p Plan) String() string {
	return p.name + " (" + strconv.Itoa(p.perMinute) + "/min, burst " + strconv.Itoa(p.burst) + ")"
}

func (p Plan) validate() error {
	if p.perMinute <= 0 || p.burst <= 0 {
		return fmt.Errorf("%w: plan %q needs a positive rate and burst, got %d/min burst %d",
			ErrInvalidArgument, p.name, p.perMinute, p.burst)
	}
	return nil
}

// Limiter paces requests on the client side. Wait blocks until one request
// may be sent or ctx is done (then it returns an error). Every attempt,
// retries included, waits once. [LocalLimiter] paces one process (it is
// what [WithPlan] installs), redisstore.Limiter a fleet sharing a key;
// *rate.Limiter satisfies it too, and a caller can plug in its own.
type Limiter interface {
	Wait(ctx context.Context) error
}

// LocalLimiter paces the requests of one process to a plan: a token bucket
// that refills PerMinute/60 tokens a second, as the bucket the service
// keeps per key does, and holds one token fewer than the plan's Burst (at
// least one). Build one with [NewLocalLimiter] and give it to several
// clients with [WithLimiter] to pace them together; [WithPlan] builds one
// per client. It is safe for concurrent use.
//
// The token of headroom is what keeps a paced client free of 429s: the
// service counts a request when it arrives, not when it was sent, so a
// request that overtakes an earlier one on another connection, or an
// earlier one slowed by a connection set-up, would otherwise find the
// service's bucket a fraction of a token short. One token absorbs arrival
// jitter of up to one refill interval (1 s on the Free plan).
type LocalLimiter struct {
	plan Plan
	rl   *rate.Limiter
}

// NewLocalLimiter returns a LocalLimiter for the plan. A plan without a
// positive rate and burst (the zero Plan) is an error wrapping
// [ErrInvalidArgument].
func NewLocalLimiter(p Plan) (*LocalLimiter, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	return &LocalLimiter{plan: p, rl: rate.NewLimiter(rate.Limit(float64(p.perMinute)/60), max(1, p.burst-1))}, nil
}

// Plan returns the plan the limiter paces to.
func (l *LocalLimiter) Plan() Plan { return l.plan }

// Wait blocks until one request may be sent, or ctx is done. When the
// wait would end after ctx's deadline it returns at once, with an error
// wrapping [context.DeadlineExceeded]. A LocalLimiter not made by
// NewLocalLimiter has no plan: its Wait fails with [ErrInvalidArgument].
func (l *LocalLimiter) Wait(ctx context.Context) error {
	if l.rl == nil {
		return fmt.Errorf("%w: a LocalLimiter not made by NewLocalLimiter", ErrInvalidArgument)
	}
	return waitRate(ctx, l.rl)
}

// waitRate waits for rl. rate.Limiter refuses early when the wait would
// pass ctx's deadline, with an error of its own; that is reported as the
// deadline, so errors.Is(err, context.DeadlineExceeded) holds.
func waitRate(ctx context.Context, rl *rate.Limiter) error {
	err := rl.Wait(ctx)
	if err != nil && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
		if _, ok := ctx.Deadline(); ok {
			err = fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
		}
	}
	return err
}

// RateLimit is the service's view of the key's rate limit, from the
// X-RateLimit-* headers of a response. The zero value means "no headers
// seen" (e.g. a key without a limit).
type RateLimit struct {
	// Limit is the sustained requests per minute (X-RateLimit-Limit).
	Limit int
	// Remaining is how many requests may be sent now (X-RateLimit-Remaining).
	Remaining int
	// Reset is how long until the bucket is full again (X-RateLimit-Reset).
	Reset time.Duration
	// Observed is when the response carrying these headers arrived.
	Observed time.Time
}

// maxRateLimitReset is the longest X-RateLimit-Reset taken: a bucket that
// refills in more than a day is no limit per minute. Longer values (and
// Inf, NaN, 1e300, which would overflow a Duration) are refused.
const maxRateLimitReset = 24 * time.Hour

// parseRateLimit reads the X-RateLimit-* headers. It returns the zero value
// when X-RateLimit-Limit is absent, unreadable or negative. A Remaining that
// is unreadable or negative, or a Reset that is not a number of seconds
// from 0 to a day, is left at zero: values that cannot be are refused, not
// turned into a negative count or an overflowed duration.
func parseRateLimit(h http.Header, now time.Time) RateLimit {
	limit, err := strconv.Atoi(h.Get("X-RateLimit-Limit"))
	if err != nil || limit < 0 {
		return RateLimit{}
	}
	rl := RateLimit{Limit: limit, Observed: now}
	if v, err := strconv.Atoi(h.Get("X-RateLimit-Remaining")); err == nil && v >= 0 {
		rl.Remaining = v
	}
	if v, err := strconv.ParseFloat(h.Get("X-RateLimit-Reset"), 64); err == nil && v > 0 && v <= maxRateLimitReset.Seconds() {
		rl.Reset = time.Duration(v * float64(time.Second))
	}
	return rl
}

// parseRetryAfter reads a Retry-After value given as whole seconds or as an
// HTTP date (RFC 9110). A date in the past means "now".
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		if s < 0 {
			return 0, false
		}
		// Cap far below overflow; no sane server asks for more than a day.
		const maxSeconds = int64(365 * 24 * 3600)
		return time.Duration(min(s, maxSeconds)) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// transport sits between the retry layer and the caller's transport. Because
// retryablehttp calls it once per attempt, every attempt spends a limiter
// token and records the rate-limit headers and the attempt count.
//
// It deliberately has no CloseIdleConnections method: retryablehttp calls
// http.Client.CloseIdleConnections after every call that fails in its error
// path (retries run out, a transport error, a cancelled wait), which on a
// shared client would drop every other caller's keep-alive connections;
// without the method that call does nothing.
type transport struct {
	base    http.RoundTripper
	limiter Limiter
	state   *clientState
}

// limiterError marks a failure of the client-side limiter, which the retry
// policy must never retry (it already honoured the context).
type limiterError struct{ err error }

// Error has no "contextsvc:" prefix: the call's error that wraps it has.
func (e *limiterError) Error() string { return "waiting for the rate limiter: " + e.err.Error() }
func (e *limiterError) Unwrap() error { return e.err }

// ErrorType names the failure for OpenTelemetry's error.type (the
// semantic conventions' Go helper looks for this method).
func (e *limiterError) ErrorType() string { return "rate_limiter" }

// RoundTrip waits for the limiter, counts the attempt, sends, and records
// the rate-limit headers of the answer.
func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	cs, _ := ctx.Value(callKey{}).(*callState)
	var hooks *callHooks
	if cs != nil && cs.hooks != nil {
		hooks = cs.hooks
		hooks.beforeAttempt(cs)
	}
	if t.limiter != nil {
		var start time.Time
		if hooks != nil {
			start = time.Now()
		}
		var err error
		if rl, ok := t.limiter.(*rate.Limiter); ok {
			// A caller's own *rate.Limiter gets the deadline reporting of
			// LocalLimiter. Another Limiter's failure (e.g. a shared store
			// that is down) is its own, not a deadline.
			err = waitRate(ctx, rl)
		} else {
			err = t.limiter.Wait(ctx)
		}
		if hooks != nil {
			hooks.wait(cs.Context, WaitLimiter, cs.attempts+1, start, err)
		}
		if err != nil {
			if req.Body != nil {
				req.Body.Close()
			}
			return nil, &limiterError{err: err}
		}
	}
	// Counted once past the limiter: Attempts is how many times the
	// request was actually sent.
	var resp *http.Response
	var err error
	switch {
	case hooks != nil:
		cs.attempts++
		resp, err = hooks.sendAttempt(t.base, req, cs)
	case cs != nil:
		cs.attempts++
		resp, err = sendAttempt(t.base, req, cs)
	default:
		resp, err = t.base.RoundTrip(req)
	}
	if err == nil && resp.Request == nil {
		// The retry policy finds the call from the answer (see
		// backoffHook); a caller's transport may not set it.
		resp.Request = req
	}
	if err == nil && resp.Header.Get("X-RateLimit-Limit") != "" {
		t.state.setRateLimit(parseRateLimit(resp.Header, time.Now()))
	}
	return resp, err
}
