package contextsvc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"
)

// This file is the glue to hashicorp/go-retryablehttp: the retry policy, the
// back-off, the error handler that keeps the last response, and the slog
// adapter for its logging.

// callKey finds the per-call state in a request's context.
type callKey struct{}

// callState is the context of one call: it carries what the retry hooks
// need but retryablehttp does not pass them (the method when there is no
// response, and how many attempts were made). Being the context itself
// (rather than a context.WithValue) costs one allocation per call.
type callState struct {
	context.Context
	requestOptions
	method   string
	path     string // for error messages; without the base URL
	attempts int
	// watchWrites makes the transport find out whether each failed attempt
	// reached the service (Contexts.Delete needs to know).
	watchWrites bool
	// mayHaveActed is set once an attempt ended in a status that may come
	// after the service acted (statusMayHaveActed), or in a transport
	// error after the request was written: the service may have acted on
	// it although the caller never saw its answer.
	mayHaveActed bool
	// retries counts the retries the policy decided on so far, and
	// plannedWait is the back-off it chose for the next one (when
	// hasPlannedWait), which the Backoff hook then uses: the policy must
	// know the wait to tell whether it fits in the call's deadline.
	retries        int
	plannedWait    time.Duration
	hasPlannedWait bool
	// lastStatus and lastHeader are the answer to the latest attempt (0 and
	// nil when it got none), for the Response of a call that ends without
	// the retry layer handing back a response: its context ended, or the
	// Limiter failed, while it waited to send the next attempt.
	lastStatus int
	lastHeader http.Header
	// hooks is the call's middleware; nil when there is none.
	hooks *callHooks
	// callClock keeps the call's time bounds (see timeouts.go), and
	// firstAttempt is the state of its first attempt (sendAttempt).
	callClock
	firstAttempt attempt
}

// newCallState returns the state of a call, with the client's retries.
func newCallState(ctx context.Context, method, path string) *callState {
	cs := &callState{Context: ctx, method: method, path: path}
	cs.requestOptions.method = method
	cs.maxRetries = -1
	return cs
}

// Value returns the call state for callKey and defers to the parent
// otherwise.
func (c *callState) Value(key any) any {
	if key == (callKey{}) {
		return c
	}
	return c.Context.Value(key)
}

// retryableMethod reports whether a request with this method may be sent
// again after a server error or a transport failure, when the service may
// have acted on it already. GET, HEAD, OPTIONS, PUT and DELETE are
// idempotent; a POST is too once it carries an Idempotency-Key (every POST
// the client sends does), because the service answers a repeat from its
// idempotency store instead of acting twice. Other methods (PATCH…, through
// Do) are not. A 429 is different: the service did not act on it.
func retryableMethod(m string, keyed bool) bool {
	switch m {
	case http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodHead, http.MethodOptions:
		return true
	case http.MethodPost:
		return keyed
	}
	return false
}

// checkRetry is the retryablehttp CheckRetry hook. The policy (the retry
// table of docs/client.md, which TestDocsRetryTable checks against it):
//   - 429: retry, any method;
//   - 500, 502, 503, 504 and transport errors: retry GET, HEAD, OPTIONS,
//     PUT, DELETE, and POST with an idempotency key;
//   - 409 on a POST with an idempotency key: retry (an earlier attempt with
//     the same key is still running on the service);
//   - anything else (other statuses, limiter failures): no retry;
//   - a Retry-After longer than the maximum wait: no retry, the caller gets
//     the error at once with RetryAfter set;
//   - a wait (Retry-After or back-off) that would end after the context's
//     deadline: no retry, the caller gets the answer (or the transport
//     error) at once rather than a bare deadline error after sleeping;
//   - a redirect the client refused (ErrRedirectRefused): no retry;
//   - a cancelled context: no retry.
func (c *Client) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	// The method comes from the call state: on a transport error there is
	// no response to read it from.
	var method string
	keyed := false
	cs, _ := ctx.Value(callKey{}).(*callState)
	if cs != nil {
		method, keyed = cs.method, cs.idemKey != ""
	} else if resp != nil && resp.Request != nil {
		method = resp.Request.Method
		keyed = resp.Request.Header.Get("Idempotency-Key") != ""
	}
	var retry bool
	if err != nil {
		retry = retryableMethod(method, keyed) && retryableTransportError(err)
	} else {
		switch resp.StatusCode {
		case http.StatusTooManyRequests:
			retry = true
		case http.StatusInternalServerError, http.StatusBadGateway,
			http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			retry = retryableMethod(method, keyed)
		case http.StatusConflict:
			retry = method == http.MethodPost && keyed
		}
		if retry {
			if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok && d > c.rc.RetryWaitMax {
				retry = false
			}
		}
	}
	if retry && ctx.Err() != nil {
		// Returning the context's error ends the loop; the error handler
		// closes the response.
		return false, ctx.Err()
	}
	if retry && cs != nil {
		// Decide the wait now, while the answer can still be returned: a
		// wait the deadline would cut short would lose it (a 429 would
		// become a bare "context deadline exceeded").
		//
		// After a transport error the Backoff hook cannot find the call
		// (it gets no answer), so it draws its own wait: only the shortest
		// one it can draw is known here.
		wait := c.rc.RetryWaitMin
		if resp != nil {
			wait = backoff(c.rc.RetryWaitMin, c.rc.RetryWaitMax, cs.retries, resp)
			cs.plannedWait, cs.hasPlannedWait = wait, true
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= wait {
			cs.hasPlannedWait = false
			return false, nil
		}
		cs.retries++
	}
	if retry && cs != nil && cs.hooks != nil {
		// The back-off starts now; the middleware hears of it when it ends.
		cs.hooks.retryWaitStart = time.Now()
	}
	return retry, nil
}

// retryableTransportError tells failures that may pass on a second try
// (connection refused or reset, time-outs) from those that will not: the
// client-side limiter refused (it has already honoured the context), the
// server's certificate is not trusted, or the client refused a redirect (a
// loop or another origin would only be met again).
func retryableTransportError(err error) bool {
	var le *limiterError
	var certErr *tls.CertificateVerificationError
	var authErr x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	switch {
	case errors.As(err, &le), errors.As(err, &certErr), errors.As(err, &authErr), errors.As(err, &hostErr),
		errors.Is(err, ErrRedirectRefused):
		return false
	}
	return true
}

// statusMayHaveActed reports whether an answer with this status may come
// after the service acted on the request: a 500 (it failed part way), or a
// gateway's 502 or 504 (the service may have acted, its answer lost on the
// way). A 503 or a 429 says the request was not processed.
func statusMayHaveActed(status int) bool {
	switch status {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// backoffHook is the retryablehttp Backoff hook: the wait checkRetry chose
// for this retry (found through the answer's request), else backoff's.
func backoffHook(minWait, maxWait time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil && resp.Request != nil {
		if cs, ok := resp.Request.Context().Value(callKey{}).(*callState); ok && cs.hasPlannedWait {
			cs.hasPlannedWait = false
			return cs.plannedWait
		}
	}
	return backoff(minWait, maxWait, attempt, resp)
}

// backoff is the wait before a retry: the server's Retry-After when given
// (checkRetry has already refused values above max), but never less than
// min, so that "Retry-After: 0" cannot make the client send as fast as it
// can; otherwise exponential back-off with full jitter: a uniform wait
// between min and min·2^attempt, capped at max. Jitter spreads the retries
// of many clients that failed together.
func backoff(minWait, maxWait time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil {
		if d, ok := parseRetryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
			return min(max(d, minWait), maxWait)
		}
	}
	if maxWait <= minWait {
		return minWait
	}
	base := max(minWait, time.Millisecond)
	ceiling := maxWait
	if attempt < 32 {
		if c := base << attempt; c > 0 && c < maxWait {
			ceiling = c
		}
	}
	if ceiling <= minWait {
		return minWait
	}
	return minWait + rand.N(ceiling-minWait+1)
}

// errorHandler is the retryablehttp ErrorHandler hook. Without it,
// retryablehttp would drop the last response and return a "giving up"
// string; with it, the caller's code sees the last response (and makes the
// typed *Error with its body) or the underlying error.
func errorHandler(resp *http.Response, err error, _ int) (*http.Response, error) {
	if err != nil {
		if resp != nil {
			drainAndClose(resp.Body)
		}
		return nil, err
	}
	return resp, nil
}

// drainAndClose reads what is left of a body (a bounded amount) so the
// connection can be reused, then closes it.
func drainAndClose(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	_ = body.Close()
}

// slogAdapter lets retryablehttp log through a *slog.Logger. It is installed
// only when the caller gave a logger, and it scrubs the API key from every
// value in case some error text ever carries it.
type slogAdapter struct {
	logger *slog.Logger
	secret string
}

func (a slogAdapter) Error(msg string, kv ...any) { a.log(slog.LevelError, msg, kv) }
func (a slogAdapter) Warn(msg string, kv ...any)  { a.log(slog.LevelWarn, msg, kv) }
func (a slogAdapter) Info(msg string, kv ...any)  { a.log(slog.LevelInfo, msg, kv) }
func (a slogAdapter) Debug(msg string, kv ...any) { a.log(slog.LevelDebug, msg, kv) }

func (a slogAdapter) log(level slog.Level, msg string, kv []any) {
	ctx := context.Background()
	if !a.logger.Enabled(ctx, level) {
		return
	}
	clean := make([]any, len(kv))
	for i, v := range kv {
		clean[i] = a.scrub(v)
	}
	a.logger.Log(ctx, level, "contextsvc: "+msg, clean...)
}

// scrub turns values into text and removes the key from it. Keys (even
// positions) are plain strings from retryablehttp and pass unchanged.
func (a slogAdapter) scrub(v any) any {
	var s string
	switch x := v.(type) {
	case string:
		s = x
	case int, int64, bool, time.Duration:
		return v
	case http.Header:
		return "[headers omitted]"
	default:
		s = fmt.Sprint(v)
	}
	if a.secret != "" && strings.Contains(s, a.secret) {
		s = strings.ReplaceAll(s, a.secret, redacted)
	}
	return s
}
