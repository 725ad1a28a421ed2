package proxy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/httpapi"
	"github.com/contextsvc/contextsvc-go/redact"
)

// MaxValidatedBody bounds what the proxy buffers of each body, the
// request's and the answer's, to hold it to the document: the contract's
// largest request (2 MiB) and the exports of its largest context fit. A
// body past it streams on as it is, unvalidated, and its exchange is
// counted so.
const MaxValidatedBody = 8 << 20

// Config is what a Proxy forwards to and reports with.
type Config struct {
	// Upstream is the base URL requests go to, ending in /v1, as
	// ParseUpstream returns it.
	Upstream *url.URL
	// Spec is the document requests and answers are held to.
	Spec *contract.Spec
	// Transport sends the requests; nil is a clone of
	// http.DefaultTransport.
	Transport http.RoundTripper
	// Now is the server's clock, for the findings' times.
	Now func() time.Time
	// Logger logs each mismatch (at Warn) and each upstream failure.
	Logger *slog.Logger
	// Log keeps the findings and the counts.
	Log *Log
	// OnFinding, when set, is told of each finding kept.
	OnFinding func(*Finding)
	// Timeout bounds the time from forwarding a request to the beginning
	// of its answer: its headers and the first bytes of its body (or its
	// end). Past it, the caller gets a 504. Zero is DefaultTimeout.
	Timeout time.Duration
	// IdleTimeout bounds each wait for more of an answer's body once it
	// has begun. Past it, the answer is cut short. Zero is
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
}

// ParseUpstream checks an upstream's base URL: http or https, a host, a
// path ending in /v1 (as CONTEXTSVC_BASE_URL's), no query, fragment or
// credentials (the proxy forwards each caller's own Authorization). Its
// errors never show the URL's credentials.
func ParseUpstream(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("the upstream %s is not a URL", redact.URL(raw))
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("the upstream %s must be an http or https URL", redact.URL(raw))
	case u.Host == "":
		return nil, fmt.Errorf("the upstream %s has no host", redact.URL(raw))
	case u.User != nil:
		return nil, fmt.Errorf("the upstream %s must not carry credentials: the proxy forwards each caller's Authorization", redact.URL(raw))
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, fmt.Errorf("the upstream %s must have no query or fragment", redact.URL(raw))
	case !strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/v1"):
		return nil, fmt.Errorf("the upstream %s must end in /v1, as CONTEXTSVC_BASE_URL does (https://api.example.com/v1)", redact.URL(raw))
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// Proxy forwards /v1 requests to the upstream and holds each exchange to
// the document. It is safe for concurrent use.
type Proxy struct {
	c  Config
	rp *httputil.ReverseProxy

	// running counts the exchanges being forwarded or checked; idle, when
	// set, is closed when none are.
	mu      sync.Mutex
	running int
	idle    chan struct{}
}

// WaitIdle blocks until no exchange is being forwarded or checked, or ctx
// is done (it then returns ctx's error). A caller may have an answer whole
// before the proxy has checked it: the check runs when the upstream's body
// ends, as its last bytes go out.
func (p *Proxy) WaitIdle(ctx context.Context) error {
	for {
		p.mu.Lock()
		if p.running == 0 {
			p.mu.Unlock()
			return nil
		}
		if p.idle == nil {
			p.idle = make(chan struct{})
		}
		ch := p.idle
		p.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (p *Proxy) begin() {
	p.mu.Lock()
	p.running++
	p.mu.Unlock()
}

func (p *Proxy) end() {
	p.mu.Lock()
	p.running--
	if p.running == 0 && p.idle != nil {
		close(p.idle)
		p.idle = nil
	}
	p.mu.Unlock()
}

// New returns a proxy to cfg.Upstream.
func New(cfg Config) *Proxy {
	if cfg.Transport == nil {
		cfg.Transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	p := &Proxy{c: cfg}
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      cfg.Transport,
		FlushInterval:  -1, // an answer streams as it comes
		ModifyResponse: p.answered,
		ErrorHandler:   p.failed,
		ErrorLog:       slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelDebug),
		BufferPool:     buffers{},
	}
	return p
}

// Upstream returns the upstream's base URL.
func (p *Proxy) Upstream() string { return p.c.Upstream.String() }

// Log returns the findings.
func (p *Proxy) Log() *Log { return p.c.Log }

type exchangeKey struct{}

// ServeHTTP forwards r, a request under /v1, to the upstream and streams
// its answer back. The X-Request-Id the server gave the answer is the
// upstream's instead, but on the proxy's own 502 and 504.
//
// The upstream has Config.Timeout to begin its answer, and
// Config.IdleTimeout for each wait for more of its body (timeouts.go).
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.begin()
	defer p.end()
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	ex := &exchange{p: p, method: r.Method, path: r.URL.Path, rawQuery: r.URL.RawQuery, header: r.Header.Clone(),
		requestID: w.Header().Get("X-Request-Id"), caller: r.Context(), ctx: ctx, cancel: cancel}
	delete(w.Header(), "X-Request-Id")
	if r.Body != nil && r.Body != http.NoBody {
		ex.reqBody = &recording{rc: r.Body}
		r.Body = ex.reqBody
	}
	ex.begun = time.AfterFunc(p.c.Timeout, func() { cancel(&limitError{d: p.c.Timeout}) })
	defer ex.begun.Stop()
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(ctx, exchangeKey{}, ex)))
	if ex.reqBody != nil {
		ex.reqBody.detach()
	}
}

// rewrite sends the request to the upstream's path for it: the upstream's
// base path and the request's path after /v1. Its headers go as they are,
// Authorization included, but Accept-Encoding: the transport asks for
// gzip itself and decodes it, so that the answer can be read.
func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	up := p.c.Upstream
	in := pr.In.URL
	out := pr.Out.URL
	out.Scheme, out.Host, out.User = up.Scheme, up.Host, nil
	out.Path = up.Path + strings.TrimPrefix(in.Path, "/v1")
	out.RawPath = ""
	if in.RawPath != "" {
		out.RawPath = up.EscapedPath() + strings.TrimPrefix(in.RawPath, "/v1")
	}
	pr.Out.Host = ""
	pr.Out.Header.Del("Accept-Encoding")
}

// answered waits for the answer's body to begin (within the time-out that
// its headers came in: until then the caller can still be told with a
// 504), records the answer's status and headers, and has its body
// recorded as it streams to the caller, each wait for more of it bounded;
// the exchange is checked when the body ends.
func (p *Proxy) answered(resp *http.Response) error {
	ex, _ := resp.Request.Context().Value(exchangeKey{}).(*exchange)
	if ex == nil {
		return nil
	}
	body, err := begin(ex, resp.Body)
	if err != nil {
		return err
	}
	ex.status, ex.respHeader = resp.StatusCode, resp.Header.Clone()
	ex.respBody = &recording{rc: body, done: ex.finish}
	resp.Body = ex.respBody
	return nil
}

// failed answers a request the upstream did not answer: a 502 with the
// contract's error body (type unavailable) and the proxy's request id, or
// a 504 when it did not begin its answer within the time-out. The error
// names what failed, never the request's URL (its query) nor the
// upstream's.
func (p *Proxy) failed(w http.ResponseWriter, r *http.Request, err error) {
	ex, _ := r.Context().Value(exchangeKey{}).(*exchange)
	if ex != nil && ex.requestID != "" {
		w.Header()["X-Request-Id"] = []string{ex.requestID}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	status, msg := http.StatusBadGateway, "the upstream did not answer: "+err.Error()
	if ex != nil && ex.limit() != nil {
		status, msg = http.StatusGatewayTimeout, "the upstream did not answer: "+ex.limit().Error()
	}
	httpapi.WriteError(w, &httpapi.Error{Status: status, Type: httpapi.TypeUnavailable, Message: msg})
	if ex == nil || ex.caller.Err() != nil {
		return // the caller went away: nothing to hold to the document
	}
	ex.upstreamFailed(status, msg)
}

// copyBuffers are the buffers answers are copied through, 32 KiB each as
// ReverseProxy's own, reused rather than made for every answer.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// buffers is copyBuffers as an httputil.BufferPool.
type buffers struct{}

func (buffers) Get() []byte  { return *copyBuffers.Get().(*[]byte) }
func (buffers) Put(b []byte) { copyBuffers.Put(&b) }
