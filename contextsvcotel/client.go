package contextsvcotel

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"sync/atomic"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/contextsvcotel/internal/otelkit"
	"github.com/contextsvc/contextsvc-go/redact"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/httpconv"
	"go.opentelemetry.io/otel/trace"
)

// Names of the client's span events and metrics of this package's own.
const (
	// LimiterWaitEvent is the call span's event for a wait for the
	// client-side rate limiter.
	LimiterWaitEvent = "contextsvc.limiter.wait"
	// RetryBackoffEvent is the call span's event for the back-off before a
	// retry.
	RetryBackoffEvent = "contextsvc.retry.backoff"
	// RetriesMetric counts the attempts sent again.
	RetriesMetric = "contextsvc.client.retries"
	// LimiterWaitMetric is the distribution of the waits for the
	// client-side rate limiter.
	LimiterWaitMetric = "contextsvc.client.limiter.wait.duration"
)

// minLimiterEvent is the shortest limiter wait recorded as a span event:
// below it a token was free, and an event per attempt would only be noise.
// The metric records every wait.
const minLimiterEvent = time.Millisecond

// limiterWaitBuckets spans a free token (0) to a minute's wait, in seconds.
var limiterWaitBuckets = []float64{0, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// clientTelemetry is what the hooks of a client middleware share.
type clientTelemetry struct {
	tracer      trace.Tracer // nil when the middleware does not trace
	prop        propagation.TextMapPropagator
	propagates  bool // the propagator has fields to inject
	measures    bool // the middleware records the metrics
	duration    httpconv.ClientRequestDuration
	retries     metric.Int64Counter
	limiterWait metric.Float64Histogram
	endpoints   otelkit.Cache[endpointKey, *endpoint]
	// last is the endpoint of the latest call: a client's calls mostly
	// repeat one, which then costs a comparison instead of a look-up.
	last atomic.Pointer[endpoint]
}

// NewMiddleware returns client middleware (see [contextsvc.Middleware]) that
// traces and measures every call; install it with [contextsvc.WithMiddleware]
// or, for one call, [contextsvc.WithRequestMiddleware]. Its spans and
// metrics are listed in the package documentation and docs/observability.md.
// It does what [NewTracingMiddleware] and [NewMetricsMiddleware] do
// together, for less than the two.
func NewMiddleware(opts ...Option) (contextsvc.Middleware, error) {
	return newMiddleware(true, true, opts)
}

// NewTracingMiddleware returns client middleware that only traces: the
// call's span, its attempts' spans and events, and the trace context on
// every attempt. It reads no meter provider and records no metric.
func NewTracingMiddleware(opts ...Option) (contextsvc.Middleware, error) {
	return newMiddleware(true, false, opts)
}

// NewMetricsMiddleware returns client middleware that only measures: the
// metrics http.client.request.duration, contextsvc.client.retries and
// contextsvc.client.limiter.wait.duration. It reads no tracer provider,
// starts no span and sends no trace context.
func NewMetricsMiddleware(opts ...Option) (contextsvc.Middleware, error) {
	return newMiddleware(false, true, opts)
}

func newMiddleware(tracing, metrics bool, opts []Option) (contextsvc.Middleware, error) {
	c, err := newConfig(tracing, metrics, opts)
	if err != nil {
		return contextsvc.Middleware{}, err
	}
	t := &clientTelemetry{}
	mw := contextsvc.Middleware{Attempt: t.attempt, Wait: t.wait}
	if tracing {
		t.tracer, t.prop, t.propagates = c.tracer(), c.prop, len(c.prop.Fields()) > 0
		mw.Call = t.call
	}
	if metrics {
		m := c.meter()
		t.measures = true
		if t.duration, err = httpconv.NewClientRequestDuration(m); err != nil {
			return contextsvc.Middleware{}, err
		}
		if t.retries, err = m.Int64Counter(RetriesMetric, metric.WithUnit("{retry}"),
			metric.WithDescription("Attempts sent again after a failed attempt.")); err != nil {
			return contextsvc.Middleware{}, err
		}
		if t.limiterWait, err = m.Float64Histogram(LimiterWaitMetric, metric.WithUnit("s"),
			metric.WithDescription("Time spent waiting for the client-side rate limiter before an attempt."),
			metric.WithExplicitBucketBoundaries(limiterWaitBuckets...)); err != nil {
			return contextsvc.Middleware{}, err
		}
	}
	return mw, nil
}

// endpointKey identifies an endpoint of a server: what every span and
// metric of its calls has in common.
type endpointKey struct {
	method, template, operation, host string
	port                              int
}

// endpoint is what the spans and metrics of an endpoint's calls share,
// built once: the span names, the HTTP attributes, and the metrics'
// attribute sets by outcome. Caching them keeps their
// allocations and formatting off every call.
type endpoint struct {
	key         endpointKey
	callName    string               // the operation's
	attemptName string               // the HTTP conventions': method and URL template
	operation   attribute.KeyValue   // contextsvc.operation; its Key is empty when the call has none
	attrs       []attribute.KeyValue // every metric's: method, server, template
	retries     []metric.AddOption
	results     otelkit.Cache[resultKey, []metric.RecordOption] // for the request duration
	waits       otelkit.Cache[string, []metric.RecordOption]    // for the limiter wait, by error.type
	// lastResult is the duration's attributes for the outcome recorded
	// last: an endpoint mostly answers one.
	lastResult atomic.Pointer[result]
}

// resultKey is an attempt's outcome, as the duration metric labels it.
type resultKey struct {
	status  int
	errType string
}

// result is an outcome with the duration metric's options for it.
type result struct {
	key  resultKey
	opts []metric.RecordOption
}

func (t *clientTelemetry) endpoint(call *contextsvc.Call) *endpoint {
	host, port := server(call.URL)
	k := endpointKey{method: call.Method, template: call.URLTemplate, operation: call.Operation, host: host, port: port}
	if !knownMethod(k.method) {
		k.method = "_OTHER"
	}
	if e := t.last.Load(); e != nil && e.key == k {
		return e
	}
	e := t.endpoints.Get(k, func() *endpoint { return newEndpoint(k, call) })
	t.last.Store(e)
	return e
}

func newEndpoint(k endpointKey, call *contextsvc.Call) *endpoint {
	e := &endpoint{key: k, callName: operationSpanName(k.operation), attemptName: spanName(call)}
	e.attrs = []attribute.KeyValue{semconv.HTTPRequestMethodKey.String(k.method), semconv.ServerAddress(k.host), semconv.ServerPort(k.port)}
	if k.template != "" {
		e.attrs = append(e.attrs, semconv.URLTemplate(k.template))
	}
	if k.operation != "" {
		e.operation = OperationKey.String(k.operation)
	}
	e.retries = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(e.attrs...))}
	return e
}

// durationOptions returns the request duration's attributes for an
// attempt's outcome.
func (e *endpoint) durationOptions(status int, errType string) []metric.RecordOption {
	k := resultKey{status, errType}
	if r := e.lastResult.Load(); r != nil && r.key == k {
		return r.opts
	}
	opts := e.results.Get(k, func() []metric.RecordOption {
		attrs := append([]attribute.KeyValue(nil), e.attrs...)
		if status > 0 {
			attrs = append(attrs, semconv.HTTPResponseStatusCode(status))
		}
		if errType != "" {
			attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
		}
		return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
	})
	e.lastResult.Store(&result{key: k, opts: opts})
	return opts
}

// waitOptions returns the limiter wait's attributes for a wait's outcome.
func (e *endpoint) waitOptions(errType string) []metric.RecordOption {
	return e.waits.Get(errType, func() []metric.RecordOption {
		attrs := append([]attribute.KeyValue(nil), e.attrs...)
		if errType != "" {
			attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
		}
		return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
	})
}

// callStart starts a call's span. Its name tells a sampler the operation;
// its attributes are set as it ends, in one call from a lent buffer
// (otelkit.Attrs), which costs one allocation (the span's copy) rather
// than three (the start configuration's copy, the span's, and its growth
// by the later ones).
var callStart = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}

// clientKind is an attempt span's kind, made once: an option made on each
// start is an allocation.
var clientKind = trace.WithSpanKind(trace.SpanKindClient)

// call is the Call hook: the call's span, kind internal, around all its
// attempts.
func (t *clientTelemetry) call(ctx context.Context, call *contextsvc.Call, next contextsvc.CallNext) (*http.Response, error) {
	e := t.endpoint(call)
	ctx, span := t.tracer.Start(ctx, e.callName, callStart...)
	resp, err := next(ctx)
	if span.IsRecording() {
		buf := otelkit.Attrs()
		attrs := buf[:0]
		if e.operation.Key != "" {
			attrs = append(attrs, e.operation)
		}
		attrs = append(attrs, AttemptsKey.Int(call.Attempts))
		if err != nil {
			attrs = append(attrs, semconv.ErrorTypeKey.String(errorType(err)))
			span.SetStatus(codes.Error, err.Error())
		}
		span.SetAttributes(attrs...)
		otelkit.Release(buf)
	}
	span.End()
	return resp, err
}

// attempt is the Attempt hook: the attempt's span, the trace context in
// its headers, and the request duration metric.
func (t *clientTelemetry) attempt(req *http.Request, a *contextsvc.Attempt, next contextsvc.AttemptNext) (*http.Response, error) {
	e := t.endpoint(a.Call)
	ctx := req.Context()
	var span trace.Span
	r := req
	if t.tracer != nil {
		// What is known before the request is sent is given at the
		// span's start, where a sampler sees it (the HTTP conventions
		// name the method, server.address, server.port and url.full); the
		// outcome is added as it ends.
		start := otelkit.StartAttrs() // at most 6
		start.Add(e.attrs...)
		start.Add(semconv.URLFull(fullURL(req.URL)))
		if a.Number > 1 {
			start.Add(semconv.HTTPRequestResendCount(a.Number - 1))
		}
		ctx, span = t.tracer.Start(ctx, e.attemptName, clientKind, start.Option())
		start.Release()
		r = req.WithContext(ctx)
		if t.propagates && span.SpanContext().IsValid() {
			// The request's own header map is shared with the call's
			// other attempts: inject into a copy (the values are shared,
			// never changed).
			h := make(http.Header, len(req.Header)+2)
			for k, v := range req.Header {
				h[k] = v
			}
			t.prop.Inject(ctx, otelkit.HeaderCarrier(h))
			r.Header = h
		}
	}
	start := time.Now()
	resp, err := next(r)
	elapsed := time.Since(start)

	status := 0
	if err == nil && resp != nil {
		status = resp.StatusCode
	}
	var errType string
	switch {
	case err != nil:
		errType = errorType(err)
	case status >= 400:
		errType = strconv.Itoa(status)
	}
	if span != nil {
		endAttemptSpan(span, status, errType, err)
	}
	if t.measures {
		if t.duration.Enabled(ctx) {
			t.duration.Inst().Record(ctx, elapsed.Seconds(), e.durationOptions(status, errType)...)
		}
		if a.Number > 1 && t.retries.Enabled(ctx) {
			t.retries.Add(ctx, 1, e.retries...)
		}
	}
	return resp, err
}

// endAttemptSpan gives an attempt's span its outcome, in one call, and
// ends it.
func endAttemptSpan(span trace.Span, status int, errType string, err error) {
	if !span.IsRecording() {
		span.End()
		return
	}
	buf := otelkit.Attrs()
	attrs := buf[:0]
	if status > 0 {
		attrs = append(attrs, semconv.HTTPResponseStatusCode(status))
	}
	switch {
	case err != nil:
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
		span.SetStatus(codes.Error, err.Error())
	case errType != "":
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
		span.SetStatus(codes.Error, "")
	}
	span.SetAttributes(attrs...)
	otelkit.Release(buf)
	span.End()
}

// wait is the Wait hook: an event on the call's span, and the limiter's
// wait metric.
func (t *clientTelemetry) wait(ctx context.Context, w *contextsvc.Wait) {
	var errType string
	if w.Err != nil {
		errType = errorType(w.Err)
		if w.Reason == contextsvc.WaitLimiter && errType != "timeout" && errType != "canceled" {
			// The limiter's own failure, whatever its Go type.
			errType = "rate_limiter"
		}
	}
	if t.measures && w.Reason == contextsvc.WaitLimiter && t.limiterWait.Enabled(ctx) {
		t.limiterWait.Record(ctx, w.Duration.Seconds(), t.endpoint(w.Call).waitOptions(errType)...)
	}
	if t.tracer == nil || (w.Reason == contextsvc.WaitLimiter && w.Err == nil && w.Duration < minLimiterEvent) {
		return
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	name := RetryBackoffEvent
	if w.Reason == contextsvc.WaitLimiter {
		name = LimiterWaitEvent
	}
	attrs := make([]attribute.KeyValue, 0, 3)
	attrs = append(attrs, WaitDurationKey.Float64(w.Duration.Seconds()), AttemptKey.Int(w.Attempt))
	if errType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
	}
	span.AddEvent(name, trace.WithTimestamp(w.Start), trace.WithAttributes(attrs...))
}

// operationSpanName is the name of a call's span: the service's operation
// as "contextsvc.", the resource and the verb
// ("contextsvc.contexts.get"), or "contextsvc.request" for a Do of an
// endpoint the service does not document.
func operationSpanName(operation string) string {
	if name, ok := operationSpanNames[operation]; ok {
		return name
	}
	if operation == "" {
		return "contextsvc.request"
	}
	return "contextsvc." + operation
}

// operationSpanNames names the calls' spans by the reference's operations.
var operationSpanNames = map[string]string{
	"listContexts":    "contextsvc.contexts.list",
	"getContext":      "contextsvc.contexts.get",
	"createContext":   "contextsvc.contexts.create",
	"updateContext":   "contextsvc.contexts.update",
	"deleteContext":   "contextsvc.contexts.delete",
	"listVersions":    "contextsvc.contexts.versions.list",
	"exportContext":   "contextsvc.contexts.export",
	"registerWebhook": "contextsvc.webhooks.register",
}

// spanName is the semantic conventions' HTTP client span name: the method
// and the URL template, or the method alone (HTTP for a method they do not
// know) when there is no template.
func spanName(call *contextsvc.Call) string {
	m := call.Method
	if !knownMethod(m) {
		m = "HTTP"
	}
	if call.URLTemplate == "" {
		return m
	}
	return m + " " + call.URLTemplate
}

// knownMethod reports whether the semantic conventions know the method.
func knownMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch,
		http.MethodHead, http.MethodOptions, http.MethodConnect, http.MethodTrace, "QUERY":
		return true
	}
	return false
}

// server returns server.address and server.port of a URL, the port being
// the scheme's default when the URL has none.
func server(u *url.URL) (string, int) {
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		port = 443
		if u.Scheme == "http" {
			port = 80
		}
	}
	return u.Hostname(), port
}

// errorType is error.type for a failed call, attempt or wait: the status
// code of an answer; "timeout" when a deadline or time-out ended it;
// "canceled" when its context was canceled; "rate_limiter" when the
// client-side limiter failed; otherwise the Go type of the cause (e.g.
// "*net.OpError"), past the client's own wrappers.
func errorType(err error) string {
	if e, ok := errors.AsType[*contextsvc.Error](err); ok {
		return strconv.Itoa(e.StatusCode)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return "timeout"
	}
	if errors.Is(err, context.Canceled) {
		return "canceled"
	}
	if _, ok := errors.AsType[interface {
		error
		ErrorType() string
	}](err); !ok {
		// Past the wrappers that only add the call's name or the URL.
		for {
			t := reflect.TypeOf(err)
			wrapper := t.Kind() == reflect.Pointer && t.Elem().PkgPath() == rootPkg
			if _, isURL := err.(*url.Error); !wrapper && !isURL {
				break
			}
			inner := errors.Unwrap(err)
			if inner == nil {
				break
			}
			err = inner
		}
	}
	return semconv.ErrorType(err).Value.AsString()
}

// rootPkg is package contextsvc's path, whose error types other than
// *contextsvc.Error only wrap a cause.
var rootPkg = reflect.TypeFor[contextsvc.Error]().PkgPath()

// fullURL is url.full: the URL with its user info replaced by
// REDACTED:REDACTED and the values of the query parameters whose names say
// they are secret replaced by REDACTED: those the semantic conventions
// list (AWSAccessKeyId, Signature, sig, X-Goog-Signature) and any whose
// name, percent-decoded, holds key, token, secret, sig, password, auth or
// credential (package redact decides, as everywhere in the SDK). The
// client's API key travels in a header, never in the URL.
func fullURL(u *url.URL) string {
	if u.User == nil && u.RawQuery == "" {
		return u.String()
	}
	c := *u
	if c.User != nil {
		c.User = url.UserPassword("REDACTED", "REDACTED")
	}
	c.RawQuery = redact.SecretValues(c.RawQuery, "REDACTED")
	return c.String()
}
