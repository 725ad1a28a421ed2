package contextsvc

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// This file is the client's middleware hook: what a call looks like to the
// caller's middleware, and how the client runs it around the call, each
// attempt and each wait. Package contextsvcotel builds its tracing and
// metrics on it.

// Middleware wraps a client's calls, for tracing, metrics, logging or
// changing requests. Each field is optional; install it for every call with
// [WithMiddleware] or for one call with [WithRequestMiddleware]. A call runs
// through the client's middleware first (outermost), then the call's own,
// each in the order given.
//
// A call is one operation (Contexts.Get, Webhooks.Register…) or one
// [Client.Do]: Call sees it once, around all its attempts and the waits
// between them; Attempt sees each request actually sent; Wait is told of
// every wait for the rate limiter and every back-off before a retry. With no
// middleware the client does none of this work.
type Middleware struct {
	// Call wraps a whole call. It must call next at most once, with the
	// context the call goes on with (ctx itself, or one derived from it,
	// e.g. carrying a span: attempts and waits then see it). It returns
	// what next returned, or an error of its own. next returns the call's
	// outcome as the caller will see it: its 2xx response (whose body the
	// operation then reads), or its error (an [*Error] for a non-2xx
	// answer). A Call that does not call next answers the call itself: a
	// response it returns is treated as the service's (a non-2xx one
	// becomes an [*Error]).
	Call func(ctx context.Context, call *Call, next CallNext) (*http.Response, error)

	// Attempt wraps each attempt like an [http.RoundTripper]: it must not
	// modify req (clone it to add headers or change its context, as a
	// RoundTripper does) and must return next's response or an error. It
	// runs after the attempt's wait for the rate limiter; the attempt's
	// time-out ([WithAttemptTimeout]) starts inside next. req's context
	// carries the context the Call hooks passed on.
	Attempt func(req *http.Request, attempt *Attempt, next AttemptNext) (*http.Response, error)

	// Wait is told of each wait of the call once it is over: for the
	// client-side rate limiter before each attempt ([WithPlan],
	// [WithLimiter]; not called without one), and the back-off before each
	// retry. ctx is the call's context as the Call hooks passed it on. It
	// must not block.
	Wait func(ctx context.Context, wait *Wait)
}

// CallNext runs the rest of a call: the inner middleware, then the call's
// attempts. See [Middleware].
type CallNext func(ctx context.Context) (*http.Response, error)

// AttemptNext sends one attempt through the inner middleware and the
// transport. See [Middleware].
type AttemptNext func(req *http.Request) (*http.Response, error)

// Call describes one call to middleware. Do not modify it.
type Call struct {
	// Operation is the service's name for the operation, as in its
	// reference: listContexts, getContext, createContext, updateContext,
	// deleteContext, listVersions, exportContext or registerWebhook. It is
	// found from the method and path, so a [Client.Do] of a documented
	// endpoint names it too; it is empty for a path or method the service
	// does not document.
	Operation string
	// Method is the HTTP method.
	Method string
	// URLTemplate is the path of the endpoint with its variables as
	// placeholders, from the host on: "/v1/contexts/{id}". It holds no id,
	// so it may name spans and label metrics. It is empty for a path the
	// service does not document (through [Client.Do]).
	URLTemplate string
	// URL is the request's URL, ids and query included: never a metric
	// label. It never carries the API key (which travels in a header).
	URL *url.URL
	// Attempts is how many attempts the call has sent so far; once next
	// has returned, all of them (0 when none was sent, e.g. because the
	// limiter refused).
	Attempts int
}

// Attempt describes one attempt of a call to middleware. Do not modify it.
type Attempt struct {
	// Call is the call the attempt belongs to.
	Call *Call
	// Number counts the attempts of the call, from 1; Number-1 is how many
	// times the request was sent again.
	Number int
}

// WaitReason says what a call waited for.
type WaitReason string

// The waits of a call.
const (
	// WaitLimiter is the wait for the client-side rate limiter before an
	// attempt.
	WaitLimiter WaitReason = "limiter"
	// WaitRetry is the back-off between a failed attempt and the next: the
	// service's Retry-After, or exponential back-off with jitter.
	WaitRetry WaitReason = "retry"
)

// Wait describes one finished wait of a call to middleware. Do not modify
// it.
type Wait struct {
	// Call is the call that waited.
	Call *Call
	// Reason says what it waited for.
	Reason WaitReason
	// Attempt is the number of the attempt the wait came before.
	Attempt int
	// Start is when the wait began.
	Start time.Time
	// Duration is how long it lasted.
	Duration time.Duration
	// Err says why the wait ended before its time: the context ended, or
	// the limiter failed. No attempt follows then. nil when the wait ran
	// its course.
	Err error
}

// WithMiddleware runs every call of the client through mw (see
// [Middleware]), in the order given and around any call's own
// ([WithRequestMiddleware]).
func WithMiddleware(mw ...Middleware) Option {
	return func(o *options) error {
		o.middleware = append(o.middleware, mw...)
		return nil
	}
}

// WithRequestMiddleware runs the call through mw (see [Middleware]) as well
// as through the client's own ([WithMiddleware]), inside them.
func WithRequestMiddleware(mw ...Middleware) RequestOption {
	return func(o *requestOptions) error {
		o.middleware = append(o.middleware, mw...)
		return nil
	}
}

// callHooks is the middleware of one call, set on its state when the client
// or the call has any, so that a call without middleware does none of this.
type callHooks struct {
	mws     []Middleware
	call    Call
	attempt Attempt // the current attempt's; attempts come one after another
	// retryWaitStart is when the retry policy decided to send the request
	// again (zero when it has not, or once the next attempt began): the
	// back-off's start.
	retryWaitStart time.Time

	// The chains run hook after hook by index, so a call makes no closure
	// per hook: nextCall and nextAttempt are runCall and runAttempt as
	// values, made once per call.
	client                *Client
	cs                    *callState
	req                   *retryablehttp.Request
	base                  http.RoundTripper // under the attempts
	callStep, attemptStep int               // the next hook to run
	sent, attemptSent     bool              // the innermost step has run
	nextCall              CallNext
	nextAttempt           AttemptNext
}

// hooked reports whether a call must go through middleware.
func (c *Client) hooked(cs *callState) bool {
	return len(c.middleware) > 0 || len(cs.middleware) > 0
}

// sendHooked is send for a call with middleware: it runs the Call hooks
// around the retry layer, whose transport runs the Attempt and Wait hooks.
func (c *Client) sendHooked(cs *callState, req *retryablehttp.Request) (*http.Response, error) {
	mws := c.middleware
	if len(cs.middleware) > 0 {
		mws = append(slices.Clip(mws), cs.middleware...)
	}
	h := &callHooks{mws: mws, call: Call{Method: cs.method, URL: req.URL}, client: c, cs: cs, req: req}
	h.call.URLTemplate, h.call.Operation = c.route(cs.method, req.URL)
	h.attempt.Call = &h.call
	h.nextCall = h.runCall
	cs.hooks = h

	resp, err := h.runCall(cs.Context)
	if !h.sent {
		// A middleware answered the call itself.
		if err == nil && resp != nil && resp.Body == nil {
			resp.Body = http.NoBody
		}
		if err == nil && resp == nil {
			err = errNoAnswer
		}
		return c.finish(cs, resp, err)
	}
	if err == nil && resp == nil {
		return nil, fmt.Errorf("contextsvc: %s %s: %w", cs.method, cs.path, errNoAnswer)
	}
	return resp, err
}

// runCall runs the next Call hook, or, past the last, sends the call
// through the retry layer with the context the hooks passed on.
func (h *callHooks) runCall(ctx context.Context) (*http.Response, error) {
	for h.callStep < len(h.mws) {
		m := h.mws[h.callStep]
		h.callStep++
		if m.Call != nil {
			return m.Call(ctx, &h.call, h.nextCall)
		}
	}
	cs := h.cs
	if h.sent {
		return nil, fmt.Errorf("contextsvc: %s %s: %w", cs.method, cs.path, errNextTwice)
	}
	h.sent = true
	if ctx != nil {
		// The caller's context is never cs itself, so this makes no cycle.
		cs.Context = ctx
	}
	// The call's bound starts on the context the hooks passed on, so that
	// no hook can lift it.
	h.client.startClock(cs)
	resp, err := h.client.retryClient(cs).Do(h.req)
	if err != nil && err == cs.Err() && !h.retryWaitStart.IsZero() {
		// The context ended during the back-off.
		h.wait(cs.Context, WaitRetry, cs.attempts+1, h.retryWaitStart, cs.ctxErr())
	}
	return h.client.finish(cs, resp, err)
}

// sendAttempt runs an attempt through the Attempt hooks.
func (h *callHooks) sendAttempt(base http.RoundTripper, req *http.Request, cs *callState) (*http.Response, error) {
	h.attempt.Number = cs.attempts
	h.call.Attempts = cs.attempts
	h.base, h.attemptStep, h.attemptSent = base, 0, false
	if h.nextAttempt == nil {
		h.nextAttempt = h.runAttempt
	}
	resp, err := h.runAttempt(req)
	if err == nil && resp == nil {
		err = errNoAnswer
	}
	return resp, err
}

// runAttempt runs the next Attempt hook, or, past the last, sends the
// attempt.
func (h *callHooks) runAttempt(req *http.Request) (*http.Response, error) {
	for h.attemptStep < len(h.mws) {
		m := h.mws[h.attemptStep]
		h.attemptStep++
		if m.Attempt != nil {
			return m.Attempt(req, &h.attempt, h.nextAttempt)
		}
	}
	if h.attemptSent {
		return nil, errNextTwice
	}
	h.attemptSent = true
	return sendAttempt(h.base, req, h.cs)
}

// errNoAnswer is a middleware returning neither a response nor an error.
var errNoAnswer = errors.New("a middleware returned neither a response nor an error")

// errNextTwice is a middleware calling next a second time.
var errNextTwice = errors.New("a middleware called next more than once")

// wait tells the Wait hooks of a wait that began at start and is over now.
func (h *callHooks) wait(ctx context.Context, reason WaitReason, attempt int, start time.Time, err error) {
	w := Wait{Call: &h.call, Reason: reason, Attempt: attempt, Start: start, Duration: time.Since(start), Err: err}
	for _, m := range h.mws {
		if m.Wait != nil {
			m.Wait(ctx, &w)
		}
	}
}

// beforeAttempt reports the back-off that ends as the next attempt begins,
// if the retry policy started one.
func (h *callHooks) beforeAttempt(cs *callState) {
	if !h.retryWaitStart.IsZero() {
		h.wait(cs.Context, WaitRetry, cs.attempts+1, h.retryWaitStart, nil)
		h.retryWaitStart = time.Time{}
	}
}

// endpoints is the service's endpoint table, as in its reference, with
// paths relative to the base URL.
var endpoints = [...]struct{ method, template, operation string }{
	{http.MethodGet, "/contexts", "listContexts"},
	{http.MethodPost, "/contexts", "createContext"},
	{http.MethodGet, "/contexts/{id}", "getContext"},
	{http.MethodPut, "/contexts/{id}", "updateContext"},
	{http.MethodDelete, "/contexts/{id}", "deleteContext"},
	{http.MethodGet, "/contexts/{id}/versions", "listVersions"},
	{http.MethodGet, "/contexts/{id}/export", "exportContext"},
	{http.MethodPost, "/webhooks", "registerWebhook"},
}

// route finds the endpoint of a request in the table: its URL template
// (from the host on) and the service's operation name. Both are empty for
// a path the table does not have; the operation is empty for a method the
// path does not take.
func (c *Client) route(method string, u *url.URL) (template, operation string) {
	rel, ok := strings.CutPrefix(u.EscapedPath(), c.base.EscapedPath())
	if !ok {
		return "", ""
	}
	found := -1
	for i, e := range endpoints {
		if found < 0 && matchTemplate(e.template, rel) {
			template, found = e.template, i
		}
		if template == e.template && method == e.method {
			operation = e.operation
			break
		}
	}
	if found < 0 {
		return "", ""
	}
	c.state.templatesOnce.Do(func() {
		for i, e := range endpoints {
			c.state.templates[i] = c.base.Path + e.template
		}
	})
	return c.state.templates[found], operation
}

// matchTemplate reports whether an escaped path matches a template such as
// "/contexts/{id}/versions", whose "{…}" segments match any non-empty
// segment.
func matchTemplate(template, path string) bool {
	for template != "" && path != "" {
		if template[0] != '/' || path[0] != '/' {
			return false
		}
		var t, p string
		t, template = cutSegment(template[1:])
		p, path = cutSegment(path[1:])
		if p == "" || (t != p && !strings.HasPrefix(t, "{")) {
			return false
		}
	}
	return template == "" && path == ""
}

// cutSegment splits a path without its leading "/" into its first segment
// and the rest, which starts with "/" (or is empty).
func cutSegment(s string) (segment, rest string) {
	if i := strings.IndexByte(s, '/'); i >= 0 {
		return s[:i], s[i:]
	}
	return s, ""
}
