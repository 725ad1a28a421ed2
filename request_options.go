package contextsvc

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"net/textproto"
	"strings"
	"time"
)

// RequestOption configures one call: it is the trailing argument of every
// operation (Contexts.Get, Contexts.Create, Webhooks.Register…) and of
// [Client.Do]. An option that cannot apply (a malformed header, an
// idempotency key on a GET) fails the call with [ErrInvalidArgument] before
// anything is sent.
type RequestOption func(*requestOptions) error

// requestOptions is what a call's RequestOptions set. It is part of the
// call's state, so options cost no allocation of their own per call.
type requestOptions struct {
	method string      // the call's method, for options valid on some methods only
	header http.Header // the request's own header map, which options may set
	// idemKey is the POST's Idempotency-Key: the caller's, or a fresh one.
	idemKey string
	// into receives the call's Response, when the caller asked for it.
	into *Response
	// maxRetries replaces the client's WithMaxRetries for this call; < 0
	// keeps the client's.
	maxRetries int
	// attemptTimeout bounds each attempt; 0 means none of the call's own.
	attemptTimeout time.Duration
	// middleware is the call's own (WithRequestMiddleware).
	middleware []Middleware
}

// Response describes the HTTP exchange behind a call: its last attempt's
// status and headers, and how many attempts were made. Ask for it with
// [WithResponseInto]; it is filled when the call returns, whether it
// succeeded or failed.
//
// On an [*Error], StatusCode, RequestID, RateLimit and Attempts equal the
// error's fields. After a transport failure (no answer), StatusCode is 0
// and Header nil. A call that ends while waiting to send its next attempt
// (its context is done, or the Limiter fails) reports the answer its last
// attempt got, e.g. the 503 it meant to retry.
type Response struct {
	// StatusCode is the HTTP status of the last attempt's answer.
	StatusCode int
	// Header holds that answer's headers. Do not change it.
	Header http.Header
	// RequestID identifies the request in the service's logs: the
	// X-Request-Id header (on an error, the error's RequestID).
	RequestID string
	// RateLimit holds that answer's X-RateLimit-* headers: the rate limit as
	// this call left it, unlike [Client.RateLimit], which is whichever
	// answer arrived last across all goroutines.
	RateLimit RateLimit
	// Attempts is how many times the request was sent, retries included.
	Attempts int
	// IdempotencyKey is the Idempotency-Key a POST carried on every attempt
	// (the caller's from WithIdempotencyKey, or the one the client made);
	// empty for other methods. Calling again with
	// WithIdempotencyKey(IdempotencyKey) is safe after a failure: the
	// service answers as it did the first time instead of acting twice.
	IdempotencyKey string
	// Replayed is true when the service answered from its idempotency store
	// (header Idempotent-Replayed: true): an earlier attempt with the same
	// key had already been processed, and this is its answer.
	Replayed bool
}

// WithResponseInto makes the call fill *r with its [Response] (status,
// headers, request id, rate limit, attempts) when it returns, on success and
// on error alike. A call refused before anything was sent
// (ErrInvalidArgument) leaves *r untouched.
func WithResponseInto(r *Response) RequestOption {
	return func(o *requestOptions) error {
		if r == nil {
			return fmt.Errorf("%w: WithResponseInto(nil)", ErrInvalidArgument)
		}
		o.into = r
		return nil
	}
}

// WithRequestHeader sets a header on the call's request (replacing the
// client's value of that header, e.g. Accept or User-Agent; a later
// WithRequestHeader of the same name replaces an earlier one). key must be
// a valid header name and value must not contain line breaks or other
// control characters (a header injection). Authorization (the client's
// key), Idempotency-Key (use [WithIdempotencyKey]) and the headers the
// transport owns (Host, Content-Length, Transfer-Encoding, Connection) are
// refused. The value never appears in error messages.
func WithRequestHeader(key, value string) RequestOption {
	name := textproto.CanonicalMIMEHeaderKey(key)
	err := checkRequestHeader(name, value)
	vals := []string{value} // built once: the transport never changes it
	return func(o *requestOptions) error {
		if err != nil {
			return err
		}
		o.header[name] = vals
		return nil
	}
}

// checkRequestHeader reports why a header may not be set per call.
func checkRequestHeader(name, value string) error {
	if name == "" || strings.ContainsFunc(name, func(r rune) bool { return !isTokenChar(r) }) {
		return fmt.Errorf("%w: WithRequestHeader: the header name is empty or has characters a header name cannot have", ErrInvalidArgument)
	}
	switch name {
	case "Authorization":
		return fmt.Errorf("%w: WithRequestHeader: Authorization is the client's API key and cannot be set per call", ErrInvalidArgument)
	case "Idempotency-Key":
		return fmt.Errorf("%w: WithRequestHeader: use WithIdempotencyKey for Idempotency-Key", ErrInvalidArgument)
	case "Host", "Content-Length", "Transfer-Encoding", "Connection":
		return fmt.Errorf("%w: WithRequestHeader: %s is set by the transport", ErrInvalidArgument, name)
	}
	// Tab is the one control character a field value may hold; CR and LF
	// would start a new header line.
	if strings.ContainsFunc(value, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f }) {
		return fmt.Errorf("%w: WithRequestHeader: the value of %s contains a line break or another control character", ErrInvalidArgument, name)
	}
	return nil
}

// isTokenChar reports whether r may appear in a header name (RFC 9110
// token).
func isTokenChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}

// WithIdempotencyKey makes a POST carry the caller's Idempotency-Key
// instead of the fresh random one the client makes for every POST. The key
// must be 1 to 255 printable ASCII characters, not starting or ending with a
// space (HTTP would strip it). Use a key per operation you mean to happen
// once, e.g. derived from your own request or job id, and the same key when
// you repeat that operation: the service then answers a repeat as it
// answered the first time, and acts only once. Only POST requests carry a
// key; on another method the option is refused.
func WithIdempotencyKey(key string) RequestOption {
	problem := idempotencyKeyProblem(key)
	return func(o *requestOptions) error {
		if problem != "" {
			return fmt.Errorf("%w: WithIdempotencyKey: %s", ErrInvalidArgument, problem)
		}
		if o.method != http.MethodPost {
			return fmt.Errorf("%w: WithIdempotencyKey: only a POST carries an idempotency key, not a %s", ErrInvalidArgument, o.method)
		}
		o.idemKey = key
		return nil
	}
}

// WithRequestMaxRetries replaces, for this call, the client's
// [WithMaxRetries]: n is how many times a failed attempt may be sent again
// (0: no retry). The retry rules and waits stay the client's.
func WithRequestMaxRetries(n int) RequestOption {
	return func(o *requestOptions) error {
		if n < 0 {
			return fmt.Errorf("%w: WithRequestMaxRetries(%d): must not be negative", ErrInvalidArgument, n)
		}
		o.maxRetries = n
		return nil
	}
}

// WithAttemptTimeout bounds each attempt of the call as a whole
// (connecting, sending, waiting for the answer and reading its body, like
// http.Client.Timeout), not the call: an attempt that runs out is a
// transport error matching [ErrTimeout], retried by the usual rules with
// the same idempotency key. The whole call, retries and waits included, is
// bounded by [WithCallTimeout] and the context. For [ContextsService.Export]
// the time-out also covers reading the returned Body.
func WithAttemptTimeout(d time.Duration) RequestOption {
	return func(o *requestOptions) error {
		if d <= 0 {
			return fmt.Errorf("%w: WithAttemptTimeout(%v): must be positive", ErrInvalidArgument, d)
		}
		o.attemptTimeout = d
		return nil
	}
}

// apply runs the call's options against the request's header map.
func (o *requestOptions) apply(h http.Header, opts []RequestOption) error {
	o.header = h
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(o); err != nil {
			return err
		}
	}
	o.header = nil // the request keeps it; the call state need not
	return nil
}

// report fills the caller's Response, if one was asked for, from the
// response the call returns and the *Error made of it, or, when the call
// returns none (resp nil), from the latest attempt's answer, if it got one.
func (cs *callState) report(resp *http.Response, e *Error) {
	if cs.into == nil {
		return
	}
	r := Response{Attempts: cs.attempts, IdempotencyKey: cs.idemKey}
	status, h := cs.lastStatus, cs.lastHeader
	if resp != nil {
		status, h = resp.StatusCode, resp.Header
	}
	switch {
	case e != nil:
		r.StatusCode, r.RequestID, r.RateLimit, r.Attempts = e.StatusCode, e.RequestID, e.RateLimit, e.Attempts
	case h != nil:
		r.StatusCode = status
		r.RequestID = inert(h.Get("X-Request-Id"), maxErrorToken)
		r.RateLimit = parseRateLimit(h, time.Now())
	}
	if h != nil {
		r.Header = h
		r.Replayed = h.Get("Idempotent-Replayed") == "true"
	}
	*cs.into = r
}

// maxIdempotencyKey is the contract's longest Idempotency-Key.
const maxIdempotencyKey = 255

// idempotencyKeyProblem applies the contract's rule (1 to 255 printable
// ASCII characters), refuses outer spaces, which HTTP strips in transit, and
// says what is wrong ("" when nothing is). It never quotes the key.
func idempotencyKeyProblem(k string) string {
	switch {
	case len(k) == 0 || len(k) > maxIdempotencyKey:
		return fmt.Sprintf("the key has %d characters: need 1 to %d", len(k), maxIdempotencyKey)
	case strings.ContainsFunc(k, func(r rune) bool { return r < ' ' || r > '~' }):
		return "the key has a character outside printable ASCII"
	case k[0] == ' ' || k[len(k)-1] == ' ':
		return "the key starts or ends with a space, which HTTP would strip"
	}
	return ""
}

// newIdempotencyKey returns a fresh key: 26 base32 characters from
// crypto/rand, 130 random bits, so two calls never share one.
func newIdempotencyKey() string { return rand.Text() }
