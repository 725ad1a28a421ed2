package contextsvc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
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

// The published plans. Enterprise plans are set per account: build one with
// [EnterprisePlan].
var (
	PlanFree     = Plan{name: "free", perMinute: 60, burst: 10}
	PlanPro      = Plan{name: "pro", perMinute: 300, burst: 50}
	PlanBusiness = Plan{name: "business", perMinute: 1000, burst: 100}
)

// EnterprisePlan returns the plan of an Enterprise account, whose limits are
// agreed per account. perMinute and burst must be positive; [WithPlan]
// reports an error otherwise.
func EnterprisePlan(perMinute, burst int) Plan {
	return Plan{name: "enterprise", perMinute: perMinute, burst: burst}
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
// retries included, waits once. *rate.Limiter satisfies it; a caller can plug
// in its own, e.g. one shared by many processes.
type Limiter interface {
	Wait(ctx context.Context) error
}

// NewLimiter returns a token bucket for the plan: it refills PerMinute/60
// tokens a second, as the bucket the service keeps per key does, and holds
// one token fewer than the plan's Burst (at least one).
//
// The token of headroom is what keeps a paced client free of 429s: the
// service counts a request when it arrives, not when it was sent, so a
// request that overtakes an earlier one on another connection, or an
// earlier one slowed by a connection set-up, would otherwise find the
// service's bucket a fraction of a token short. One token absorbs arrival
// jitter of up to one refill interval (1 s on the Free plan).
func NewLimiter(p Plan) (Limiter, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	return rate.NewLimiter(rate.Limit(float64(p.perMinute)/60), max(1, p.burst-1)), nil
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

// parseRateLimit reads the X-RateLimit-* headers. It returns the zero value
// when X-RateLimit-Limit is absent or unreadable.
func parseRateLimit(h http.Header, now time.Time) RateLimit {
	limit, err := strconv.Atoi(h.Get("X-RateLimit-Limit"))
	if err != nil {
		return RateLimit{}
	}
	rl := RateLimit{Limit: limit, Observed: now}
	if v, err := strconv.Atoi(h.Get("X-RateLimit-Remaining")); err == nil {
		rl.Remaining = v
	}
	if v, err := strconv.ParseFloat(h.Get("X-RateLimit-Reset"), 64); err == nil && v > 0 {
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
		err := t.limiter.Wait(ctx)
		if hooks != nil {
			hooks.wait(cs.Context, WaitLimiter, cs.attempts+1, start, err)
		}
		if err != nil {
			// rate.Limiter refuses early when the wait would pass the
			// deadline; report that as the deadline so errors.Is works.
			// Only for rate.Limiter: another Limiter's own failure (e.g. a
			// shared store that is down) is not a deadline.
			if _, isRate := t.limiter.(*rate.Limiter); isRate && ctx.Err() == nil && !errors.Is(err, context.DeadlineExceeded) {
				if _, ok := ctx.Deadline(); ok {
					err = fmt.Errorf("%w: %w", context.DeadlineExceeded, err)
				}
			}
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
	if err == nil && resp.Header.Get("X-RateLimit-Limit") != "" {
		t.state.setRateLimit(parseRateLimit(resp.Header, time.Now()))
	}
	return resp, err
}
