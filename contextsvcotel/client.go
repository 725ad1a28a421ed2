package contextsvcotel

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
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

// clientTelemetry is what NewMiddleware's hooks share.
type clientTelemetry struct {
	tracer      trace.Tracer
	prop        propagation.TextMapPropagator
	propagates  bool // the propagator has fields to inject
	duration    httpconv.ClientRequestDuration
	retries     metric.Int64Counter
	limiterWait metric.Float64Histogram
	endpoints   boundedCache[endpointKey, *endpoint]
}

// NewMiddleware returns client middleware (see [contextsvc.Middleware]) that
// traces and measures every call; install it with [contextsvc.WithMiddleware]
// or, for one call, [contextsvc.WithRequestMiddleware]. Its spans and
// metrics are listed in the package documentation and docs/observability.md.
func NewMiddleware(opts ...Option) (contextsvc.Middleware, error) {
	c, err := newConfig(opts)
	if err != nil {
		return contextsvc.Middleware{}, err
	}
	m := c.meter()
	t := &clientTelemetry{tracer: c.tracer(), prop: c.prop, propagates: len(c.prop.Fields()) > 0}
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
	return contextsvc.Middleware{Call: t.call, Attempt: t.attempt, Wait: t.wait}, nil
}

// endpointKey identifies an endpoint of a server: what every span and
// metric of its calls has in common.
type endpointKey struct {
	method, template, operation, host string
	port                              int
}

// endpoint is what the spans and metrics of an endpoint's calls share,
// built once: the span name, the start options with the attributes known
// before sending (so samplers see them), and the metrics' attribute sets by
// outcome. Caching them keeps their allocations off every call.
type endpoint struct {
	name         string
	callStart    []trace.SpanStartOption
	attemptStart []trace.SpanStartOption
	attrs        []attribute.KeyValue // every metric's: method, server, template
	retries      []metric.AddOption
	results      boundedCache[resultKey, []metric.RecordOption] // for the request duration
	waits        boundedCache[string, []metric.RecordOption]    // for the limiter wait, by error.type
}

// resultKey is an attempt's outcome, as the duration metric labels it.
type resultKey struct {
	status  int
	errType string
}

func (t *clientTelemetry) endpoint(call *contextsvc.Call) *endpoint {
	host, port := server(call.URL)
	k := endpointKey{method: call.Method, template: call.URLTemplate, operation: call.Operation, host: host, port: port}
	if !knownMethod(k.method) {
		k.method = "_OTHER"
	}
	return t.endpoints.get(k, func() *endpoint {
		e := &endpoint{name: spanName(call)}
		e.attrs = []attribute.KeyValue{semconv.HTTPRequestMethodKey.String(k.method), semconv.ServerAddress(host), semconv.ServerPort(port)}
		if k.template != "" {
			e.attrs = append(e.attrs, semconv.URLTemplate(k.template))
		}
		callAttrs := e.attrs
		if k.operation != "" {
			callAttrs = append(callAttrs[:len(callAttrs):len(callAttrs)], OperationKey.String(k.operation))
		}
		e.callStart = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(callAttrs...)}
		e.attemptStart = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(e.attrs...)}
		e.retries = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(e.attrs...))}
		return e
	})
}

// durationOptions returns the request duration's attributes for an
// attempt's outcome.
func (e *endpoint) durationOptions(status int, errType string) []metric.RecordOption {
	return e.results.get(resultKey{status, errType}, func() []metric.RecordOption {
		attrs := append([]attribute.KeyValue(nil), e.attrs...)
		if status > 0 {
			attrs = append(attrs, semconv.HTTPResponseStatusCode(status))
		}
		if errType != "" {
			attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
		}
		return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
	})
}

// waitOptions returns the limiter wait's attributes for a wait's outcome.
func (e *endpoint) waitOptions(errType string) []metric.RecordOption {
	return e.waits.get(errType, func() []metric.RecordOption {
		attrs := append([]attribute.KeyValue(nil), e.attrs...)
		if errType != "" {
			attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
		}
		return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
	})
}

// call is the Call hook: the call's span, around all its attempts.
func (t *clientTelemetry) call(ctx context.Context, call *contextsvc.Call, next contextsvc.CallNext) (*http.Response, error) {
	e := t.endpoint(call)
	ctx, span := t.tracer.Start(ctx, e.name, e.callStart...)
	resp, err := next(ctx)
	if span.IsRecording() {
		var attrs [3]attribute.KeyValue
		n := 0
		attrs[n], n = AttemptsKey.Int(call.Attempts), n+1
		if status := statusCode(resp, err); status > 0 {
			attrs[n], n = semconv.HTTPResponseStatusCode(status), n+1
		}
		if err != nil {
			attrs[n], n = semconv.ErrorTypeKey.String(errorType(err)), n+1
			span.SetStatus(codes.Error, err.Error())
		}
		span.SetAttributes(attrs[:n]...)
	}
	span.End()
	return resp, err
}

// attempt is the Attempt hook: the attempt's span, the trace context in
// its headers, and the request duration metric.
func (t *clientTelemetry) attempt(req *http.Request, a *contextsvc.Attempt, next contextsvc.AttemptNext) (*http.Response, error) {
	e := t.endpoint(a.Call)
	ctx, span := t.tracer.Start(req.Context(), e.name, e.attemptStart...)
	if span.IsRecording() {
		if a.Number > 1 {
			span.SetAttributes(semconv.URLFull(fullURL(req.URL)), semconv.HTTPRequestResendCount(a.Number-1))
		} else {
			span.SetAttributes(semconv.URLFull(fullURL(req.URL)))
		}
	}
	r := req.WithContext(ctx)
	if t.propagates {
		// The request's own header map is shared with the call's other
		// attempts: inject into a copy (the values are shared, never
		// changed).
		h := make(http.Header, len(req.Header)+2)
		for k, v := range req.Header {
			h[k] = v
		}
		t.prop.Inject(ctx, headerCarrier(h))
		r.Header = h
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
	if span.IsRecording() {
		switch {
		case err != nil:
			span.SetAttributes(semconv.ErrorTypeKey.String(errType))
			span.SetStatus(codes.Error, err.Error())
		case status >= 400:
			span.SetAttributes(semconv.HTTPResponseStatusCode(status), semconv.ErrorTypeKey.String(errType))
			span.SetStatus(codes.Error, "")
		default:
			span.SetAttributes(semconv.HTTPResponseStatusCode(status))
		}
	}
	span.End()

	if t.duration.Enabled(ctx) {
		t.duration.Inst().Record(ctx, elapsed.Seconds(), e.durationOptions(status, errType)...)
	}
	if a.Number > 1 && t.retries.Enabled(ctx) {
		t.retries.Add(ctx, 1, e.retries...)
	}
	return resp, err
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
	if w.Reason == contextsvc.WaitLimiter && t.limiterWait.Enabled(ctx) {
		t.limiterWait.Record(ctx, w.Duration.Seconds(), t.endpoint(w.Call).waitOptions(errType)...)
	}
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() || (w.Reason == contextsvc.WaitLimiter && w.Err == nil && w.Duration < minLimiterEvent) {
		return
	}
	name := RetryBackoffEvent
	if w.Reason == contextsvc.WaitLimiter {
		name = LimiterWaitEvent
	}
	attrs := []attribute.KeyValue{WaitDurationKey.Float64(w.Duration.Seconds()), AttemptKey.Int(w.Attempt)}
	if errType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
	}
	span.AddEvent(name, trace.WithTimestamp(w.Start), trace.WithAttributes(attrs...))
}

// headerCarrier is propagation.HeaderCarrier without the allocation of
// canonicalising the W3C header names on every injection.
type headerCarrier http.Header

func (h headerCarrier) Get(key string) string { return http.Header(h).Get(key) }

func (h headerCarrier) Set(key, value string) {
	switch key {
	case "traceparent":
		key = "Traceparent"
	case "tracestate":
		key = "Tracestate"
	case "baggage":
		key = "Baggage"
	default:
		key = textproto.CanonicalMIMEHeaderKey(key)
	}
	h[key] = []string{value}
}

func (h headerCarrier) Keys() []string { return propagation.HeaderCarrier(h).Keys() }

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

// statusCode is the HTTP status a call ended with: its response's, or its
// *contextsvc.Error's; 0 when it got no answer.
func statusCode(resp *http.Response, err error) int {
	if err == nil && resp != nil {
		return resp.StatusCode
	}
	if e, ok := errors.AsType[*contextsvc.Error](err); ok {
		return e.StatusCode
	}
	return 0
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

// fullURL is url.full: the URL with user info and the values of the query
// parameters the semantic conventions call sensitive replaced by REDACTED.
// (The client's API key travels in a header, never in the URL.)
func fullURL(u *url.URL) string {
	if u.User == nil && !strings.ContainsAny(u.RawQuery, "sS") {
		return u.String()
	}
	c := *u
	if c.User != nil {
		c.User = url.UserPassword("REDACTED", "REDACTED")
	}
	if c.RawQuery != "" {
		parts := strings.Split(c.RawQuery, "&")
		for i, kv := range parts {
			name, _, hasValue := strings.Cut(kv, "=")
			if n, err := url.QueryUnescape(name); err == nil && hasValue && sensitiveQuery[n] {
				parts[i] = name + "=REDACTED"
			}
		}
		c.RawQuery = strings.Join(parts, "&")
	}
	return c.String()
}

// sensitiveQuery are the query parameters whose values url.full must not
// show, per the semantic conventions.
var sensitiveQuery = map[string]bool{"AWSAccessKeyId": true, "Signature": true, "sig": true, "X-Goog-Signature": true}
