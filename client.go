package contextsvc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
	"github.com/hashicorp/go-retryablehttp"
)

// SDKVersion is this module's version, following semantic versioning: from
// 1.0.0 on, its exported API changes only compatibly until a 2.0.0 (see
// CHANGELOG.md). It is sent in the User-Agent header.
const SDKVersion = "1.0.0"

// DefaultUserAgent is sent in the User-Agent header of every request; a
// caller's [WithUserAgent] is put in front of it.
const DefaultUserAgent = "contextsvc-go/" + SDKVersion

// Environment variables read by [NewClient] when the corresponding argument
// or option is not given.
const (
	EnvAPIKey  = "CONTEXTSVC_API_KEY"
	EnvBaseURL = "CONTEXTSVC_BASE_URL"
)

// Defaults of the retry options.
const (
	DefaultMaxRetries   = 3
	DefaultRetryWaitMin = 500 * time.Millisecond
	DefaultRetryWaitMax = 30 * time.Second
)

// Defaults of the time bounds: whatever a server does (accept the
// connection and never answer, send an answer's headers and stall its
// body), every call ends. See [WithCallTimeout], [WithHeaderTimeout] and
// [WithStallTimeout].
const (
	// DefaultCallTimeout bounds a whole call, its retries and the waits
	// before them (back-off, Retry-After, the rate limiter) included.
	DefaultCallTimeout = 2 * time.Minute
	// DefaultHeaderTimeout bounds each attempt from its start (connecting,
	// sending) until the answer's headers come.
	DefaultHeaderTimeout = 30 * time.Second
	// DefaultStallTimeout bounds each read of an answer's body: how long
	// the client waits for the next bytes of it.
	DefaultStallTimeout = 30 * time.Second
)

// DefaultMaxResponseBytes is the most the client reads of one answer's body
// unless [WithMaxResponseBytes] says otherwise: 32 MiB, counted after
// decompression. The contract bounds a context's content to 1,000,000
// bytes, so a context, a version or a page of the default 20 fits with room
// to spare; a page of 100 full-size contexts may not (ask for smaller pages,
// or raise the bound).
const DefaultMaxResponseBytes = 32 << 20

// maxResponseHeaderBytes bounds an answer's headers on the transport the
// client makes (a caller's, from WithHTTPClient, keeps its own bound).
const maxResponseHeaderBytes = 1 << 20

// maxRedirects is how many redirects in a row a call follows (within the
// base URL's origin), as net/http's own default.
const maxRedirects = 10

// Client talks to the Context Management Service. Create one with
// [NewClient] and share it: it is safe for concurrent use, and reusing it
// reuses connections.
//
// Formatting a Client (%v, %+v, %#v, String, GoString) never shows the API
// key.
type Client struct {
	// Contexts holds the operations on contexts, their versions and
	// exports.
	Contexts *ContextsService
	// Webhooks holds the webhook registration.
	Webhooks *WebhooksService

	apiKey  string
	baseURL string   // ends in /v1, no trailing slash
	base    *url.URL // parsed baseURL, to refuse sending the key elsewhere
	// maxBody bounds what the client reads of an answer's body.
	maxBody int64
	// The time bounds of every call (WithCallTimeout) and of each attempt
	// (WithHeaderTimeout, WithStallTimeout).
	callTimeout, headerTimeout, stallTimeout time.Duration
	// Header values are built once and shared by every request: the
	// transport never modifies them, and it saves allocations per call.
	authHeader []string
	uaHeader   []string
	rc         *retryablehttp.Client
	state      *clientState
	middleware []Middleware // WithMiddleware's, clipped so a call's own are appended to a copy
}

// clientState is the mutable part of a Client, behind a pointer so that a
// Client value never contains a lock.
type clientState struct {
	mu        sync.Mutex
	rateLimit RateLimit
	// templates are the endpoints' URL templates from the host on, for
	// middleware (see route), made at the first call that needs them.
	templatesOnce sync.Once
	templates     [len(endpoints)]string
}

func (s *clientState) setRateLimit(rl RateLimit) {
	s.mu.Lock()
	s.rateLimit = rl
	s.mu.Unlock()
}

var (
	headerAcceptJSON      = []string{"application/json"}
	headerContentTypeJSON = []string{"application/json"}
)

// options collects what the Option functions set.
type options struct {
	baseURL    string
	httpClient *http.Client
	maxRetries int
	waitMin    time.Duration
	waitMax    time.Duration
	limiter    Limiter
	userAgent  string
	logger     *slog.Logger
	middleware []Middleware
	maxBody    int64

	callTimeout, headerTimeout, stallTimeout time.Duration
}

// Option configures a Client in [NewClient].
type Option func(*options) error

// WithBaseURL sets the service's base URL, which must end in /v1 (a
// trailing slash is fine). Without it, CONTEXTSVC_BASE_URL is used; an
// empty u is an error (an unset variable, most likely), not the fallback.
func WithBaseURL(u string) Option {
	return func(o *options) error {
		if u == "" {
			return fmt.Errorf("%w: WithBaseURL(\"\"): give the base URL, ending in /v1, or leave the option out to use %s", ErrInvalidArgument, EnvBaseURL)
		}
		o.baseURL = u
		return nil
	}
}

// WithHTTPClient sets the HTTP client whose transport, timeout and cookie
// jar are used. The Client works on a copy, so the caller's value is not
// changed; its transport is wrapped, not replaced. Its CheckRedirect, if
// any, is asked after the client's own check, which refuses every redirect
// away from the base URL's origin ([ErrRedirectRefused]).
//
// The client's own time bounds ([WithCallTimeout], [WithHeaderTimeout],
// [WithStallTimeout]) apply over any transport: they are the client's, not
// the transport's. hc's Timeout, if set, bounds each attempt as well, the
// reading of an export's Body included. The call and header bounds end a
// round trip through its request's context, so they need a transport that
// returns when that context ends (net/http's does): one that ignores it
// holds the call for as long as it takes. The stall bound closes the body,
// so it holds whatever the transport does once the answer has come.
func WithHTTPClient(hc *http.Client) Option {
	return func(o *options) error {
		if hc == nil {
			return fmt.Errorf("%w: WithHTTPClient(nil)", ErrInvalidArgument)
		}
		o.httpClient = hc
		return nil
	}
}

// WithMaxRetries sets how many times a failed request may be sent again
// (0 turns retries off). The default is DefaultMaxRetries.
func WithMaxRetries(n int) Option {
	return func(o *options) error {
		if n < 0 {
			return fmt.Errorf("%w: WithMaxRetries(%d): must not be negative", ErrInvalidArgument, n)
		}
		o.maxRetries = n
		return nil
	}
}

// WithRetryWait sets the shortest and longest wait between attempts. The
// longest is also the most the client accepts from a Retry-After header:
// when the service asks for longer, the call fails at once with an [*Error]
// whose RetryAfter says how long.
func WithRetryWait(minWait, maxWait time.Duration) Option {
	return func(o *options) error {
		if minWait < 0 || maxWait < minWait {
			return fmt.Errorf("%w: WithRetryWait(%v, %v): need 0 <= min <= max", ErrInvalidArgument, minWait, maxWait)
		}
		o.waitMin, o.waitMax = minWait, maxWait
		return nil
	}
}

// WithPlan paces the client to the plan's rate with a token bucket of its
// own (a [LocalLimiter]). Without WithPlan or WithLimiter the client does
// not pace itself and relies on retrying 429 answers.
func WithPlan(p Plan) Option {
	return func(o *options) error {
		l, err := NewLocalLimiter(p)
		if err != nil {
			return err
		}
		o.limiter = l
		return nil
	}
}

// WithLimiter paces the client with the caller's limiter, e.g. one shared
// with other clients or processes. nil turns pacing off.
func WithLimiter(l Limiter) Option {
	return func(o *options) error {
		o.limiter = l
		return nil
	}
}

// WithUserAgent puts the caller's product token in front of the SDK's own
// in the User-Agent header, e.g. "myapp/1.2 contextsvc-go/1.0.0". An empty
// token, or one with a line break or another control character, is an
// error.
func WithUserAgent(ua string) Option {
	return func(o *options) error {
		ua = strings.TrimSpace(ua)
		if ua == "" {
			return fmt.Errorf("%w: WithUserAgent: empty product token", ErrInvalidArgument)
		}
		if strings.ContainsFunc(ua, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f }) {
			return fmt.Errorf("%w: WithUserAgent: contains a line break or another control character", ErrInvalidArgument)
		}
		o.userAgent = ua
		return nil
	}
}

// WithMaxResponseBytes sets the most the client reads of one answer's body,
// counted after decompression (a gzip answer is counted as it inflates):
// a longer answer fails the call with [ErrResponseTooLarge] once the client
// has read n+1 bytes (at once when Content-Length says so), and reads no
// further. It covers the answers the operations decode, the bodies
// [Client.Do] decodes or copies, and the Body that [ContextsService.Export]
// returns. n must be positive; the default is [DefaultMaxResponseBytes].
// Error answers are cut to 4 KiB whatever n is.
func WithMaxResponseBytes(n int64) Option {
	return func(o *options) error {
		if n <= 0 {
			return fmt.Errorf("%w: WithMaxResponseBytes(%d): must be positive", ErrInvalidArgument, n)
		}
		o.maxBody = n
		return nil
	}
}

// WithCallTimeout bounds every call as a whole: from its start until it
// returns, its attempts, the waits before them (for the rate limiter, the
// back-off, a Retry-After) and the reading of its answer included. A call
// that runs out fails with an error matching [ErrTimeout] and
// [context.DeadlineExceeded]; a wait that would end after the bound is not
// begun: the call returns the answer it got at once, as for a context's
// deadline. A context's earlier deadline still ends a call sooner; a later
// one does not extend it. An export's Body, read after [ContextsService.Export]
// returns, is bounded by [WithStallTimeout] only, so a large download is
// not cut. d must be positive; the default is [DefaultCallTimeout]. To let
// contexts alone bound the calls, give a d longer than any of their
// deadlines.
func WithCallTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("%w: WithCallTimeout(%v): must be positive: every call has a bound (a context's earlier deadline ends it sooner)", ErrInvalidArgument, d)
		}
		o.callTimeout = d
		return nil
	}
}

// WithHeaderTimeout bounds each attempt from its start (connecting,
// sending the request) until the answer's headers come. An attempt that
// runs out ends with an error matching [ErrTimeout] and
// [context.DeadlineExceeded], and is retried like any transport error
// (with the same idempotency key). d must be positive; the default is
// [DefaultHeaderTimeout].
func WithHeaderTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("%w: WithHeaderTimeout(%v): must be positive", ErrInvalidArgument, d)
		}
		o.headerTimeout = d
		return nil
	}
}

// WithStallTimeout bounds each read of an answer's body: a read that gets
// nothing for d ends the attempt, and the call, with an error matching
// [ErrTimeout] and [context.DeadlineExceeded]. It is a bound on a stall,
// not on the whole body: a body that keeps coming, however slowly and
// however long, is read to its end. It holds while you read an export's
// Body too (time you spend between reads is not counted). d must be
// positive; the default is [DefaultStallTimeout].
func WithStallTimeout(d time.Duration) Option {
	return func(o *options) error {
		if d <= 0 {
			return fmt.Errorf("%w: WithStallTimeout(%v): must be positive", ErrInvalidArgument, d)
		}
		o.stallTimeout = d
		return nil
	}
}

// WithLogger makes the client log retries and failed attempts through
// logger. By default (and with nil) it logs nothing. The API key and the
// Authorization header are never logged.
func WithLogger(logger *slog.Logger) Option {
	return func(o *options) error {
		o.logger = logger
		return nil
	}
}

// NewClient returns a client authenticating with apiKey. An empty apiKey
// falls back to CONTEXTSVC_API_KEY; without WithBaseURL the base URL comes
// from CONTEXTSVC_BASE_URL. A missing key or base URL, a base URL not ending
// in /v1, or a bad option is an error here rather than at the first call.
func NewClient(apiKey string, opts ...Option) (*Client, error) {
	o := options{
		maxRetries: DefaultMaxRetries,
		waitMin:    DefaultRetryWaitMin,
		waitMax:    DefaultRetryWaitMax,
		maxBody:    DefaultMaxResponseBytes,

		callTimeout:   DefaultCallTimeout,
		headerTimeout: DefaultHeaderTimeout,
		stallTimeout:  DefaultStallTimeout,
	}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	if apiKey == "" {
		apiKey = os.Getenv(EnvAPIKey)
	}
	if apiKey == "" {
		return nil, fmt.Errorf("%w: no API key: pass one or set %s", ErrInvalidArgument, EnvAPIKey)
	}
	if strings.ContainsFunc(apiKey, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		// The key itself is deliberately not quoted in the message.
		return nil, fmt.Errorf("%w: the API key contains spaces or control characters", ErrInvalidArgument)
	}
	if o.baseURL == "" {
		o.baseURL = os.Getenv(EnvBaseURL)
	}
	base, err := parseBaseURL(o.baseURL)
	if err != nil {
		return nil, err
	}

	var hc http.Client
	if o.httpClient != nil {
		hc = *o.httpClient
	}
	inner := hc.Transport
	if inner == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// The default of 2 idle connections per host makes concurrent
		// callers open and close connections all the time.
		t.MaxIdleConnsPerHost = 64
		// An answer's headers are read whole before anything else: bound
		// them well below net/http's 10 MiB (the service's are a few
		// hundred bytes).
		t.MaxResponseHeaderBytes = maxResponseHeaderBytes
		inner = t
	}
	state := &clientState{}
	hc.Transport = &transport{base: inner, limiter: o.limiter, state: state}

	ua := DefaultUserAgent
	if o.userAgent != "" {
		ua = o.userAgent + " " + DefaultUserAgent
	}
	c := &Client{
		apiKey:     apiKey,
		baseURL:    strings.TrimSuffix(base.String(), "/"),
		base:       base,
		authHeader: []string{"Bearer " + apiKey},
		uaHeader:   []string{ua},
		state:      state,
		middleware: slices.Clip(o.middleware),
		maxBody:    o.maxBody,

		callTimeout:   o.callTimeout,
		headerTimeout: o.headerTimeout,
		stallTimeout:  o.stallTimeout,
	}
	// Redirects are checked here, on the http.Client, so that no request
	// follows one to another origin: not the operations', not Do's.
	hc.CheckRedirect = c.checkRedirect(hc.CheckRedirect)
	c.rc = &retryablehttp.Client{
		HTTPClient:   &hc,
		RetryWaitMin: o.waitMin,
		RetryWaitMax: o.waitMax,
		RetryMax:     o.maxRetries,
		CheckRetry:   c.checkRetry,
		Backoff:      backoffHook,
		ErrorHandler: errorHandler,
	}
	if o.logger != nil {
		c.rc.Logger = slogAdapter{logger: o.logger, secret: apiKey}
	}
	c.Contexts = &ContextsService{client: c}
	c.Webhooks = &WebhooksService{client: c}
	return c, nil
}

// parseBaseURL checks that u is an absolute http(s) URL whose path ends in
// /v1, and returns it without a trailing slash. Its errors quote what the
// caller typed (see shownURL), so the mistake is visible.
func parseBaseURL(u string) (*url.URL, error) {
	if u == "" {
		return nil, fmt.Errorf("%w: no base URL: use WithBaseURL or set %s", ErrInvalidArgument, EnvBaseURL)
	}
	shown := shownURL(u)
	if strings.TrimSpace(u) != u {
		// Typically copied from a file with its newline, or quoted with a
		// space; url.Parse's complaint would not say so.
		return nil, fmt.Errorf("%w: base URL %q starts or ends with white space", ErrInvalidArgument, shown)
	}
	if fixed, ok := schemeTypo(u); ok {
		// "http//x/v1" would otherwise read as a host named "http".
		return nil, fmt.Errorf("%w: base URL %q: need an absolute http or https URL: did you mean %q?", ErrInvalidArgument, shown, shownURL(fixed))
	}
	if scheme, ok := missingScheme(u); ok {
		// url.Parse would read "localhost:8080/v1" as the scheme
		// "localhost" and the opaque "8080/v1", and the error would be
		// about neither.
		return nil, fmt.Errorf("%w: base URL %q has no scheme: did you mean %q?", ErrInvalidArgument, shown, scheme+"://"+shown)
	}
	p, err := url.Parse(u)
	if err != nil {
		// url.Parse's error quotes the whole URL, credentials and all.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%w: base URL: %w", ErrInvalidArgument, err)
	}
	if (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
		return nil, fmt.Errorf("%w: base URL %q: need an absolute http or https URL", ErrInvalidArgument, shown)
	}
	if p.User != nil || p.RawQuery != "" || p.Fragment != "" {
		return nil, fmt.Errorf("%w: base URL %q: must not carry user info, a query or a fragment", ErrInvalidArgument, shown)
	}
	p.Path = strings.TrimSuffix(p.Path, "/")
	p.RawPath = ""
	if !strings.HasSuffix(p.Path, "/v1") {
		return nil, fmt.Errorf("%w: base URL %q must end in /v1", ErrInvalidArgument, shown)
	}
	return p, nil
}

// shownURL is the base URL as the caller typed it, for error messages,
// without what may be a secret: the user info (user:password@) and the
// values of query parameters (their names stay, to show that a query is
// there). It works on the text, so it shows URLs url.Parse refuses too.
func shownURL(u string) string {
	rest, frag, hasFrag := strings.Cut(u, "#")
	rest, query, hasQuery := strings.Cut(rest, "?")
	// The authority runs from after the scheme and its slashes, also when
	// they are mistyped ("http//u:p@x", "https:/u:p@x"), or from the start
	// when there is no scheme ("u:p@localhost:8080"), to the next "/".
	authStart := authorityStart(rest)
	authEnd := len(rest)
	if i := strings.IndexByte(rest[authStart:], '/'); i >= 0 {
		authEnd = authStart + i
	}
	if at := strings.LastIndexByte(rest[authStart:authEnd], '@'); at >= 0 {
		rest = rest[:authStart] + rest[authStart+at+1:]
	}
	var b strings.Builder
	b.WriteString(rest)
	if hasQuery {
		b.WriteByte('?')
		for i, kv := range strings.Split(query, "&") {
			if i > 0 {
				b.WriteByte('&')
			}
			name, _, hasValue := strings.Cut(kv, "=")
			b.WriteString(name)
			if hasValue {
				b.WriteString("=…")
			}
		}
	}
	if hasFrag {
		b.WriteByte('#')
		b.WriteString(frag)
	}
	return b.String()
}

// schemeTypo reports whether u starts with http or https followed by a
// mistyped "://" ("http//x/v1", "http:/x/v1", "https:x/v1", "http:///x/v1"),
// and the URL the caller probably meant. A host that merely starts with
// "http" ("httpbin.org/v1") is no typo.
func schemeTypo(u string) (string, bool) {
	for _, scheme := range []string{"https", "http"} {
		if len(u) < len(scheme) || !strings.EqualFold(u[:len(scheme)], scheme) {
			continue
		}
		rest := u[len(scheme):]
		if strings.HasPrefix(rest, "://") && !strings.HasPrefix(rest, ":///") {
			return "", false // well-formed
		}
		trimmed := strings.TrimLeft(rest, ":/")
		if trimmed == rest || trimmed == "" {
			return "", false
		}
		return scheme + "://" + trimmed, true
	}
	return "", false
}

// authorityStart returns where the authority of a URL, well-formed or not,
// starts: after a scheme-like prefix followed by colons and slashes with at
// least one slash in them ("https://", "http//", "http:/", "//"), else 0.
// The prefix never contains an "@", so no user info comes before it.
func authorityStart(u string) int {
	i := 0
	for i < len(u) && (u[i] >= 'a' && u[i] <= 'z' || u[i] >= 'A' && u[i] <= 'Z' || u[i] >= '0' && u[i] <= '9' ||
		u[i] == '+' || u[i] == '-' || u[i] == '.') {
		i++
	}
	j := i
	for j < len(u) && (u[j] == ':' || u[j] == '/') {
		j++
	}
	if strings.IndexByte(u[i:j], '/') >= 0 {
		return j
	}
	return 0
}

// missingScheme reports whether u is a host and path typed without a
// scheme ("localhost:8080/v1", "api.example.com/v1"), and the scheme to
// suggest: http for a loopback host, https otherwise.
func missingScheme(u string) (string, bool) {
	if strings.Contains(u, "://") || strings.HasPrefix(u, "/") {
		return "", false
	}
	authority, _, _ := strings.Cut(u, "/")
	authority, _, _ = strings.Cut(authority, "?")
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		authority = authority[at+1:]
	}
	host := authority
	if h, port, err := net.SplitHostPort(authority); err == nil {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return "", false // "mailto:x", "http:x.test": not host:port
		}
		host = h
	} else if strings.Contains(authority, ":") && !strings.HasPrefix(authority, "[") {
		return "", false
	}
	host = strings.Trim(host, "[]")
	if host == "" || strings.ContainsFunc(host, func(r rune) bool {
		return !(r == '.' || r == '-' || r == ':' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		return "", false
	}
	if strings.EqualFold(host, "localhost") {
		return "http", true
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return "http", true
	}
	return "https", true
}

// checkRedirect is the http.Client's CheckRedirect. It follows a redirect
// only within the base URL's origin (scheme, host and port), where the key
// may go, refuses a loop or an 11th redirect in a row at once, and then
// asks the caller's own check (WithHTTPClient's), if any. Its errors match
// ErrRedirectRefused, which the retry policy never retries, and name the
// target's origin only (its path and query may carry anything).
func (c *Client) checkRedirect(next func(*http.Request, []*http.Request) error) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		status := 0
		if req.Response != nil {
			status = req.Response.StatusCode
		}
		if !sameOrigin(req.URL, c.base) {
			return fmt.Errorf("%w: the service answered %d with a redirect to %s, another origin than the base URL's %s, where the API key must not go",
				ErrRedirectRefused, status, inert(origin(req.URL), maxErrorToken), origin(c.base))
		}
		target := req.URL.String()
		for _, v := range via {
			if v.URL.String() == target {
				return fmt.Errorf("%w: the service answered %d with a redirect back to %s, a loop",
					ErrRedirectRefused, status, inert(req.URL.EscapedPath(), maxErrorToken))
			}
		}
		if len(via) > maxRedirects {
			return fmt.Errorf("%w: the service answered with more than %d redirects in a row", ErrRedirectRefused, maxRedirects)
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
}

// sameOrigin reports whether u has base's scheme, host and port (a port
// left out is the scheme's default).
func sameOrigin(u, base *url.URL) bool {
	return strings.EqualFold(u.Scheme, base.Scheme) && strings.EqualFold(hostPort(u), hostPort(base))
}

// hostPort is u's host with its port, the scheme's default if none is given.
func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		switch strings.ToLower(u.Scheme) {
		case "http":
			port = "80"
		case "https":
			port = "443"
		}
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// origin is u's scheme and authority without user info, e.g.
// "http://127.0.0.1:8080".
func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

// BaseURL returns the base URL requests go to, ending in /v1.
func (c *Client) BaseURL() string { return c.baseURL }

// RateLimit returns the X-RateLimit-* headers of the most recent response
// that carried them (the zero value before any did). Safe for concurrent
// use; with concurrent calls "most recent" is the last one to arrive. For
// the figures of one call, use [WithResponseInto].
func (c *Client) RateLimit() RateLimit {
	c.state.mu.Lock()
	defer c.state.mu.Unlock()
	return c.state.rateLimit
}

// String describes the client without its API key.
func (c Client) String() string {
	return "contextsvc.Client{BaseURL: " + strconv.Quote(c.baseURL) + ", APIKey: [REDACTED]}"
}

// GoString describes the client for %#v without its API key.
func (c Client) GoString() string {
	return "&contextsvc.Client{BaseURL:" + strconv.Quote(c.baseURL) + ", APIKey:\"[REDACTED]\"}"
}

// Format makes every fmt verb (%v, %+v, %s, %#v…) print the redacted form,
// so a client logged by accident does not leak its key.
func (c Client) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		io.WriteString(f, c.GoString())
		return
	}
	io.WriteString(f, c.String())
}

// NewRequest builds a request for an endpoint the SDK does not wrap, to be
// sent with [Client.Do]. path is relative to the base URL ("contexts" or
// "/contexts?limit=5" both address {base}/contexts); body, when not nil, is
// sent as JSON (a []byte or io.Reader body is sent as is).
//
// The request does not carry the API key: Do adds it when sending, so a
// request that is printed or logged never shows the key.
func (c *Client) NewRequest(ctx context.Context, method, path string, body any) (*http.Request, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	case io.Reader:
		rd = b
	default:
		buf, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("contextsvc: encoding the request body: %w", err)
		}
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.baseURL+"/"+strings.TrimPrefix(path, "/"), rd)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	// Fresh values, not the client's shared slices: the caller owns this
	// request and may change its headers in place.
	req.Header.Set("User-Agent", c.uaHeader[0])
	req.Header.Set("Accept", "application/json")
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// Do sends req (typically built with [Client.NewRequest]) with the client's
// authentication, retries, pacing and error checking. A 2xx body is decoded
// as JSON into v, or copied into v if v is an io.Writer, or discarded if v is
// nil; an empty body leaves v untouched. It is decoded as the operations
// decode their answers, with the same decoder (see [ParseEvent] too): a body
// that is not one JSON value (trailing data, say), or a value of one of the
// SDK's types without what the contract requires (a [Context] without its
// id), is an [ErrMalformedResponse]. What Do reads or copies is bounded as
// every answer is ([WithMaxResponseBytes]), and Do is a call like the
// operations for the client's time bounds ([WithCallTimeout] covers the
// whole of it, the copy into a writer included). A non-2xx answer is an
// [*Error].
// The returned response's body is already closed; its status and headers
// remain readable. req must address the client's base URL: the API key is
// never sent anywhere else, nor does a redirect take it elsewhere
// ([ErrRedirectRefused]). A POST carries an Idempotency-Key
// (WithIdempotencyKey's if given, else req's own header, else a fresh one)
// and is retried like the wrapped operations.
func (c *Client) Do(ctx context.Context, req *http.Request, v any, opts ...RequestOption) (*http.Response, error) {
	if req == nil || req.URL == nil {
		return nil, fmt.Errorf("%w: Do: nil request", ErrInvalidArgument)
	}
	if req.URL.Scheme != c.base.Scheme || req.URL.Host != c.base.Host ||
		(!strings.HasPrefix(req.URL.Path, c.base.Path+"/") && req.URL.Path != c.base.Path) {
		return nil, fmt.Errorf("%w: Do: %s is outside the base URL %s", ErrInvalidArgument, req.URL.Redacted(), c.baseURL)
	}
	if ctx == nil {
		ctx = req.Context()
	}
	cs := newCallState(ctx, req.Method, req.URL.Path)
	defer cs.end()
	r := req.Clone(cs)
	if r.Header.Get("Authorization") == "" {
		r.Header["Authorization"] = c.authHeader
	}
	if r.Header.Get("User-Agent") == "" {
		r.Header["User-Agent"] = c.uaHeader
	}
	if own := r.Header.Get("Idempotency-Key"); own != "" && r.Method == http.MethodPost {
		if problem := idempotencyKeyProblem(own); problem != "" {
			return nil, fmt.Errorf("%w: Do: the request's Idempotency-Key header: %s", ErrInvalidArgument, problem)
		}
		cs.idemKey = own
	}
	if err := c.prepare(cs, r.Header, opts); err != nil {
		return nil, err
	}
	rr, err := retryablehttp.FromRequest(r)
	if err != nil {
		// Not an ErrInvalidArgument, so the caller's Response must not
		// keep what an earlier call left in it.
		cs.report(nil, nil)
		return nil, fmt.Errorf("contextsvc: reading the request body: %w", err)
	}
	resp, err := c.send(cs, rr)
	if err != nil {
		return nil, err
	}
	switch w := v.(type) {
	case nil:
		drainAndClose(resp.Body)
	case io.Writer:
		defer drainAndClose(resp.Body)
		if resp.ContentLength > c.maxBody {
			return resp, c.tooLarge(cs)
		}
		stop := closeWhenDone(cs.Context, resp.Body)
		n, err := io.Copy(w, io.LimitReader(resp.Body, c.maxBody))
		if err == nil && n == c.maxBody {
			// At the bound: one more byte says whether the body goes on.
			var probe [1]byte
			if m, _ := io.ReadFull(resp.Body, probe[:]); m > 0 {
				stop()
				return resp, c.tooLarge(cs)
			}
		}
		stop()
		switch {
		case err != nil:
			return resp, c.wrapErr(cs, contextCause(cs, err))
		case cs.Err() != nil:
			return resp, c.wrapErr(cs, cs.ctxErr())
		}
	default:
		// The decoder of the typed operations, so that Do accepts and
		// refuses the same bytes they do; an empty body leaves v as it was.
		buf, err := c.readBody(resp, cs)
		defer releaseBody(buf)
		if err != nil {
			return resp, err
		}
		if len(bytes.TrimSpace(buf.b)) > 0 {
			if err := c.unmarshalBody(buf.b, cs, v); err != nil {
				return resp, err
			}
		}
	}
	return resp, nil
}

// call sends one request to path (relative to the base URL, starting with
// "/") with an optional JSON body and returns the 2xx response, whose body
// the caller must close. It is the hot path of every wrapped operation, so it
// builds the retryablehttp request directly.
func (c *Client) call(ctx context.Context, method, path string, body any, accept []string, opts []RequestOption) (*http.Response, *callState, error) {
	cs := newCallState(ctx, method, path)
	// Only Delete turns a 404 after a lost answer into success, so only a
	// DELETE pays for finding out whether a failed attempt was sent.
	cs.watchWrites = method == http.MethodDelete
	var raw any // stays a nil interface without a body: a typed nil would send one
	if body != nil {
		buf, err := json.Marshal(body)
		if err != nil {
			return nil, cs, fmt.Errorf("contextsvc: encoding the request body: %w", err)
		}
		raw = buf
	}
	req, err := retryablehttp.NewRequestWithContext(cs, method, c.baseURL+path, raw)
	if err != nil {
		return nil, cs, fmt.Errorf("%w: %w", ErrInvalidArgument, err)
	}
	req.Header["Authorization"] = c.authHeader
	req.Header["User-Agent"] = c.uaHeader
	req.Header["Accept"] = accept
	if raw != nil {
		req.Header["Content-Type"] = headerContentTypeJSON
	}
	if err := c.prepare(cs, req.Header, opts); err != nil {
		return nil, cs, err
	}
	resp, err := c.send(cs, req)
	return resp, cs, err
}

// prepare applies the call's options to it and to its request's headers,
// and gives a POST its Idempotency-Key: the same on every attempt, since
// retries resend the same headers.
func (c *Client) prepare(cs *callState, h http.Header, opts []RequestOption) error {
	if len(opts) > 0 {
		if err := cs.apply(h, opts); err != nil {
			return err
		}
	}
	if cs.method == http.MethodPost {
		if cs.idemKey == "" {
			cs.idemKey = newIdempotencyKey()
		}
		h["Idempotency-Key"] = []string{cs.idemKey}
	}
	return nil
}

// send runs the request through the retry layer (and the middleware, if
// any) and returns the call's outcome (see finish). The call's bound
// starts as the retry layer does (startClock); the caller ends it
// (cs.end) once it has read the answer.
func (c *Client) send(cs *callState, req *retryablehttp.Request) (*http.Response, error) {
	if c.hooked(cs) {
		return c.sendHooked(cs, req)
	}
	c.startClock(cs)
	resp, err := c.retryClient(cs).Do(req)
	return c.finish(cs, resp, err)
}

// finish turns what the retry layer returned into the call's outcome: a
// non-2xx answer into an *Error, a failure into an error that unwraps to its
// cause. It fills the caller's Response (WithResponseInto) either way.
func (c *Client) finish(cs *callState, resp *http.Response, err error) (*http.Response, error) {
	if err != nil {
		cs.report(nil, nil)
		return nil, c.wrapErr(cs, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// A proxy or debugging endpoint that echoes the request would put
		// the key into the error's Body and Message, and from there into
		// the caller's logs: the echo is removed, escaped or not, also when
		// it straddles the cut (hence the read-ahead).
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, int64(maxErrorBody+keyEchoReadAhead(len(c.apiKey)))))
		drainAndClose(resp.Body)
		body := redactKey(raw, c.apiKey, maxErrorBody)
		e := newError(resp, body, cs.attempts, c.apiKey)
		cs.report(resp, e)
		return nil, e
	}
	cs.report(resp, nil)
	return resp, nil
}

// retryClient returns the retry layer for the call: the client's, or, when
// the call sets its own number of retries, a copy with that number.
func (c *Client) retryClient(cs *callState) *retryablehttp.Client {
	if cs.maxRetries < 0 || cs.maxRetries == c.rc.RetryMax {
		return c.rc
	}
	return &retryablehttp.Client{
		HTTPClient:   c.rc.HTTPClient,
		Logger:       c.rc.Logger,
		RetryWaitMin: c.rc.RetryWaitMin,
		RetryWaitMax: c.rc.RetryWaitMax,
		RetryMax:     cs.maxRetries,
		CheckRetry:   c.rc.CheckRetry,
		Backoff:      c.rc.Backoff,
		ErrorHandler: c.rc.ErrorHandler,
	}
}

// redacted replaces the API key wherever some text would carry it.
const redacted = "[REDACTED]"

// callError is a transport or context failure of a call: its text names the
// call and never carries the API key, and it unwraps to the cause, so
// errors.Is and errors.As work as usual.
type callError struct {
	msg string
	err error
}

func (e *callError) Error() string { return e.msg }
func (e *callError) Unwrap() error { return e.err }

// wrapErr names the call in a transport or context error and keeps the
// cause reachable through errors.Is / errors.As.
func (c *Client) wrapErr(cs *callState, err error) error {
	if te := cs.ownTimeout(); te != nil && !errors.As(err, new(*timeoutError)) {
		// The call's bound ended it: whatever the layers made of its
		// ended context (context.Canceled, a limiter's error), that is
		// the reason.
		err = te
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		// url.Error repeats the full URL; the call's path is enough and the
		// cause stays reachable.
		err = ue.Err
	}
	msg := "contextsvc: " + cs.method + " " + cs.path
	if cs.attempts > 1 {
		msg += " (after " + strconv.Itoa(cs.attempts) + " attempts)"
	}
	// The cause's text comes from the caller's transport, a proxy, a
	// server's malformed answer or a custom Limiter, any of which may quote
	// the request's headers or carry anything at all: it is redacted, cut
	// and made inert.
	msg += ": " + inert(redactString(err.Error(), c.apiKey), maxErrorMessage)
	return &callError{msg: msg, err: err}
}

// bodyBuffer holds a 2xx body read whole. bodyPool recycles them: reading
// the whole body and unmarshalling it costs no more than a json.Decoder
// (which also buffers the whole value) and saves its allocations on every
// call.
type bodyBuffer struct{ b []byte }

var bodyPool = sync.Pool{New: func() any { return new(bodyBuffer) }}

// maxPooledBody keeps one huge page from pinning its buffer in the pool.
const maxPooledBody = 1 << 20

// decodeJSON reads a 2xx body, releases the connection and decodes the body
// into v. Times that encoding/json refuses but RFC 3339 allows (lower-case
// "t"/"z", a space for "T", a leap second) are accepted (responseJSON). A
// body that is not the value v's type requires (see validator) is an
// ErrMalformedResponse.
func (c *Client) decodeJSON(resp *http.Response, cs *callState, v any) error {
	buf, err := c.readBody(resp, cs)
	defer releaseBody(buf)
	if err != nil {
		return err
	}
	return c.unmarshalBody(buf.b, cs, v)
}

// readBody reads a whole 2xx body, at most c.maxBody bytes of it, into a
// pooled buffer and closes it; the caller hands the buffer back with
// releaseBody. A body that does not end before the call's context does is
// an error, whatever the transport: the read is cut by closing the body.
func (c *Client) readBody(resp *http.Response, cs *callState) (*bodyBuffer, error) {
	buf := bodyPool.Get().(*bodyBuffer)
	defer resp.Body.Close()
	if resp.ContentLength > c.maxBody {
		return buf, c.tooLarge(cs)
	}
	stop := closeWhenDone(cs.Context, resp.Body)
	b, err := readAtMost(buf.b[:0], resp.Body, c.maxBody, resp.ContentLength)
	stop()
	buf.b = b
	switch {
	case err == errTooLarge:
		return buf, c.tooLarge(cs)
	case err != nil:
		return buf, fmt.Errorf("contextsvc: %s %s: reading the response: %w", cs.method, cs.path, contextCause(cs, err))
	case cs.Err() != nil:
		return buf, fmt.Errorf("contextsvc: %s %s: reading the response: %w", cs.method, cs.path, cs.ctxErr())
	}
	return buf, nil
}

// errTooLarge is readAtMost's signal that the body went past its limit.
var errTooLarge = errors.New("too large")

// readAtMost appends r's bytes to b until EOF, and fails with errTooLarge
// once more than limit bytes were read. It grows b as io.ReadAll does, but
// never past limit+1 bytes, and to size+1 at once when the size is known,
// so an answer past the bound costs at most about twice the bound in
// allocations.
func readAtMost(b []byte, r io.Reader, limit, size int64) ([]byte, error) {
	if size >= 0 && size < limit && int64(cap(b)) <= size {
		b = make([]byte, 0, size+1) // +1: room to see EOF without growing
	}
	for {
		if len(b) == cap(b) {
			if int64(len(b)) > limit {
				return b, errTooLarge
			}
			next := int64(max(2*cap(b), 4096))
			if next >= limit {
				// Straight to the most the body may take, rather than a
				// last doubling to limit and one more byte.
				next = limit + 1
			}
			nb := make([]byte, len(b), next)
			copy(nb, b)
			b = nb
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if int64(len(b)) > limit {
			return b, errTooLarge
		}
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// tooLarge is the error of a call whose answer is longer than c.maxBody.
func (c *Client) tooLarge(cs *callState) error {
	return fmt.Errorf("%w: %s %s: the answer is longer than %d bytes, the most the client reads (WithMaxResponseBytes)",
		ErrResponseTooLarge, cs.method, cs.path, c.maxBody)
}

// closeWhenDone closes body when ctx (the caller's) ends, to cut short a
// read that the transport would not (net/http's own does; a caller's may
// not), and returns the function that stops watching. A context that
// never ends costs nothing. (The call's own bounds close the body
// themselves: see callState.fire.)
func closeWhenDone(ctx context.Context, body io.Closer) (stop func() bool) {
	if ctx.Done() == nil {
		return func() bool { return false }
	}
	return context.AfterFunc(ctx, func() { body.Close() })
}

// contextCause reports a read that failed because the call's context
// ended (closeWhenDone closed the body under it, with an error of the
// body's own) as the context's error, or the client's bound that ended it,
// so errors.Is(err, context.DeadlineExceeded) holds.
func contextCause(cs *callState, err error) error {
	cause := cs.ctxErr()
	if cause != nil && !errors.Is(err, cause) {
		return fmt.Errorf("%w (%v)", cause, err)
	}
	return err
}

// releaseBody returns a buffer from readBody to the pool. Decoded values
// never alias it: the decoder copies every string.
func releaseBody(buf *bodyBuffer) {
	if cap(buf.b) <= maxPooledBody {
		buf.b = buf.b[:0]
		bodyPool.Put(buf)
	}
}

// unmarshalBody decodes a 2xx body into v (see decodeJSON) and checks that
// it holds what the contract requires (validator).
func (c *Client) unmarshalBody(body []byte, cs *callState, v any) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return malformed(cs, "empty response body")
	}
	if err := unmarshalJSON(body, v); err != nil {
		// The decoder's text may quote the body: a number of any length,
		// the names on the way to the fault (an echo of the key, decoded).
		return malformed(cs, "decoding the response: "+inert(redactString(err.Error(), c.apiKey), maxErrorMessage))
	}
	if val, ok := v.(validator); ok {
		if problem := val.validate(); problem != "" {
			return malformed(cs, problem)
		}
	}
	return nil
}

// validator is a decoded answer that can tell whether it holds what the
// contract requires; validate says what is missing ("" when nothing is).
type validator interface{ validate() string }

// malformed is the error of a 2xx answer that is not what the call returns.
func malformed(cs *callState, problem string) error {
	return fmt.Errorf("%w: %s %s: %s", ErrMalformedResponse, cs.method, cs.path, problem)
}

// unmarshalJSON is the one JSON decoder of everything the SDK reads from
// the service: the operations' answers, the bodies Client.Do decodes, error
// documents, and webhook events (ParseEvent), so that all of them accept
// and refuse the same bytes (see responseJSON). Like encoding/json it
// refuses trailing data after the value.
func unmarshalJSON(data []byte, v any) error {
	return jsonv2.Unmarshal(data, v, responseJSON)
}

// responseJSON decodes a response in one pass, as encoding/json would
// (jsonv1.DefaultOptionsV1: names matched without regard to case, unknown
// fields ignored), but for times: every RFC 3339 time is taken, in the
// forms encoding/json refuses too (lenientTime).
var responseJSON = jsonv2.JoinOptions(jsonv1.DefaultOptionsV1(), jsonv2.WithUnmarshalers(jsonv2.UnmarshalFromFunc(lenientTime)))

// lenientTime decodes a time: strictly, as encoding/json does, and
// otherwise as parseLenientRFC3339 takes it (lower-case "t"/"z", a space
// for "T", a leap second). Anything but a string is decoded as
// encoding/json decodes it.
func lenientTime(dec *jsontext.Decoder, t *time.Time) error {
	if dec.PeekKind() != '"' {
		return errors.ErrUnsupported // decoded as encoding/json would
	}
	raw, err := dec.ReadValue()
	if err != nil {
		return err
	}
	if t.UnmarshalJSON(raw) == nil {
		return nil
	}
	s, err := jsontext.AppendUnquote(nil, raw)
	if err != nil {
		return err
	}
	lt, ok := parseLenientRFC3339(string(s))
	if !ok {
		return fmt.Errorf("%s is not an RFC 3339 time", raw)
	}
	*t = lt
	return nil
}

// parseLenientRFC3339 parses every RFC 3339 date-time, including what Go's
// strict parser refuses: lower-case "t" and "z", a space between date and
// time (RFC 3339 section 5.6 allows it), and a leap second (:60, read as the
// last instant of :59, since time.Time has no leap seconds).
func parseLenientRFC3339(s string) (time.Time, bool) {
	if len(s) < len("2006-01-02T15:04:05Z") || s[4] != '-' || s[7] != '-' {
		return time.Time{}, false
	}
	b := []byte(s)
	if b[10] == 't' || b[10] == ' ' {
		b[10] = 'T'
	}
	if b[len(b)-1] == 'z' {
		b[len(b)-1] = 'Z'
	}
	leap := false
	if b[17] == '6' && b[18] == '0' {
		b[17], b[18] = '5', '9'
		leap = true
	}
	t, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return time.Time{}, false
	}
	if leap {
		t = t.Truncate(time.Second).Add(time.Second - time.Nanosecond)
	}
	return t, true
}
