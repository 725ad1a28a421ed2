// Package telemetry is the mock server's OpenTelemetry: a server span for
// every request (/v1 and admin), a producer span for every event it fires,
// a client span for every webhook delivery attempt with the attempt's
// traceparent, and the metrics of each.
//
// It owns the span names, kinds and attributes, the metrics' instruments
// and how the trace context travels (extracted from requests, injected
// into attempts). It knows nothing of the server's parts: the server
// (serve, emit) and the delivery engine (Engine.attempt) call it with
// what they have. It imports the OpenTelemetry API and contextsvcotel's
// attribute keys, nothing of the mock server. A nil *Telemetry is off:
// callers test for nil and do nothing else, so a server without a
// provider pays one comparison per request, event and attempt.
//
// One trace holds a client's call, the mock's handling of it, the event
// the handling fired and every delivery attempt of that event (retries
// included, hours later on the schedule) and, through the traceparent
// each attempt carries, the receiver's handling: an attempt's span is a
// child of its event's span, not a link, because a webhook delivery is
// the event's consequence and its retries belong to the same story; a
// link would scatter one change over as many traces as attempts.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/contextsvcotel"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/otelkit"
	"github.com/contextsvc/contextsvc-go/redact"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/httpconv"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ScopeName is the instrumentation scope of the mock server's tracer and
// meter.
const ScopeName = "github.com/contextsvc/contextsvc-go/mockserver"

// The attributes of the mock server's own, beside the semantic
// conventions' and contextsvcotel's.
const (
	// RequestIDKey is the request id the mock answered with
	// (X-Request-Id): on the server spans.
	RequestIDKey = attribute.Key("contextsvc.request.id")
	// AccountKey is the account an event belongs to: on the event spans.
	AccountKey = attribute.Key("contextsvc.account")
	// WebhookIDKey is the webhook a delivery goes to: on the attempt
	// spans.
	WebhookIDKey = attribute.Key("contextsvc.webhook.id")
	// DeliveriesKey is how many deliveries an event was given (the
	// account's webhooks subscribed to its type): on the event spans.
	DeliveriesKey = attribute.Key("contextsvc.event.deliveries")
	// ChaosKey is what the server's chaos mode did: "api-error" on a /v1
	// request it failed (its span and http.server.request.duration, so
	// that injected failures are counted apart from real ones), "held" or
	// "duplicate" on a delivery attempt (its span and
	// http.client.request.duration). Absent where chaos did nothing.
	ChaosKey = attribute.Key("contextsvc.mock.chaos")
)

// EventsMetric is the name of the counter of events fired, by type.
const EventsMetric = "contextsvc.mock.events"

// Config says where telemetry goes. A nil provider turns its half off.
type Config struct {
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// Propagator extracts the caller's trace context from requests and
	// injects each attempt's into its headers; nil is W3C Trace Context.
	Propagator propagation.TextMapPropagator
}

// version is the SDK's version, for the instrumentation scope.
var version = strings.TrimPrefix(contextsvc.DefaultUserAgent, "contextsvc-go/")

// Telemetry traces and measures one server. Its methods are safe for
// concurrent use.
type Telemetry struct {
	tracer  trace.Tracer
	prop    propagation.TextMapPropagator
	server  httpconv.ServerRequestDuration
	client  httpconv.ClientRequestDuration
	events  metric.Int64Counter
	metrics bool
	traced  bool // a tracer provider was given: spans start with their attributes
	// Built once and kept, so that a request formats and allocates none
	// of them: span names by method and route, the request metric's
	// attribute sets by outcome, the server's address and port by Host,
	// what an event type's spans and counter share, the attempt metric's
	// attribute sets by receiver and outcome.
	names      otelkit.Cache[nameKey, string]
	results    otelkit.Cache[resultKey, []metric.RecordOption]
	hosts      otelkit.Cache[string, hostAttrs]
	eventTypes otelkit.Cache[contextsvc.EventType, *eventType]
	attempts   otelkit.Cache[attemptKey, []metric.RecordOption]
}

// nameKey is what a request's span is named by.
type nameKey struct{ method, route string }

// resultKey is what the request metric labels a request by.
type resultKey struct {
	method, route, scheme string
	status                int
	chaos                 string
}

// hostAttrs are server.address and server.port of a Host; n of them hold
// (0 when the Host has no host).
type hostAttrs struct {
	kv [2]attribute.KeyValue
	n  int
}

// durationBuckets are the semantic conventions' bucket boundaries for
// request durations, in seconds.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// New returns the telemetry cfg configures, or nil (off) when it has no
// provider.
func New(cfg Config) (*Telemetry, error) {
	if cfg.TracerProvider == nil && cfg.MeterProvider == nil {
		return nil, nil
	}
	t := &Telemetry{prop: cfg.Propagator, metrics: cfg.MeterProvider != nil, traced: cfg.TracerProvider != nil}
	if t.prop == nil {
		t.prop = propagation.TraceContext{}
	}
	tp, mp := cfg.TracerProvider, cfg.MeterProvider
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	if mp == nil {
		mp = metricnoop.NewMeterProvider()
	}
	t.tracer = tp.Tracer(ScopeName, trace.WithInstrumentationVersion(version), trace.WithSchemaURL(semconv.SchemaURL))
	m := mp.Meter(ScopeName, metric.WithInstrumentationVersion(version), metric.WithSchemaURL(semconv.SchemaURL))
	var err error
	if t.server, err = httpconv.NewServerRequestDuration(m, metric.WithExplicitBucketBoundaries(durationBuckets...)); err != nil {
		return nil, err
	}
	if t.client, err = httpconv.NewClientRequestDuration(m, metric.WithExplicitBucketBoundaries(durationBuckets...)); err != nil {
		return nil, err
	}
	if t.events, err = m.Int64Counter(EventsMetric, metric.WithUnit("{event}"),
		metric.WithDescription("Events the mock server fired, by type.")); err != nil {
		return nil, err
	}
	return t, nil
}

// knownMethod reports whether the semantic conventions name a method; any
// other is _OTHER.
func knownMethod(m string) bool {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return true
	}
	return false
}

// Request is a request being traced: its span, when it started, and
// what its duration is labelled by when it ends.
type Request struct {
	span   trace.Span
	start  time.Time
	method string // the conventions' method, or _OTHER
	scheme string
}

// serverKind and clientKind are the spans' kinds, made once: an option
// made on each start is an allocation. The untraced start (a mock
// measured but not traced, on a no-op tracer) passes them as a slice made
// once too.
var (
	serverKind     = trace.WithSpanKind(trace.SpanKindServer)
	clientKind     = trace.WithSpanKind(trace.SpanKindClient)
	untracedServer = []trace.SpanStartOption{serverKind}
	untracedClient = []trace.SpanStartOption{clientKind}
)

// StartRequest starts the server span of r, continuing the trace its
// headers carry, and returns r with the span in its context. The span is
// named when it ends, once the route is known.
func (t *Telemetry) StartRequest(r *http.Request, requestID string) (*http.Request, *Request) {
	q := &Request{start: time.Now(), method: r.Method, scheme: scheme(r)}
	if !knownMethod(q.method) {
		q.method = "_OTHER"
	}
	ctx := t.prop.Extract(r.Context(), otelkit.HeaderCarrier(r.Header))
	if t.traced {
		// What is known of the request is given at the span's start,
		// where a sampler sees it (the HTTP conventions name the method,
		// url.path and url.scheme, the server, the client and the user
		// agent); the outcome is added as it ends.
		start := otelkit.StartAttrs() // at most 10
		start.Add(semconv.HTTPRequestMethodKey.String(q.method))
		if q.method == "_OTHER" {
			start.Add(semconv.HTTPRequestMethodOriginal(r.Method))
		}
		start.Add(semconv.URLPath(r.URL.Path), semconv.URLScheme(q.scheme), RequestIDKey.String(requestID))
		h := t.hostAttrs(r.Host)
		start.Add(h.kv[:h.n]...)
		if ip, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
			start.Add(semconv.ClientAddress(ip))
		}
		if ua := r.UserAgent(); ua != "" {
			start.Add(semconv.UserAgentOriginal(ua))
		}
		start.Add(semconv.NetworkProtocolVersion(protocolVersion(r)))
		ctx, q.span = t.tracer.Start(ctx, q.method, serverKind, start.Option())
		start.Release()
	} else {
		ctx, q.span = t.tracer.Start(ctx, q.method, untracedServer...)
	}
	return r.WithContext(ctx), q
}

// protocolVersion is network.protocol.version: "1.1", "2"…, without
// formatting the common ones.
func protocolVersion(r *http.Request) string {
	switch {
	case r.ProtoMajor == 1 && r.ProtoMinor == 1:
		return "1.1"
	case r.ProtoMajor == 2 && r.ProtoMinor == 0:
		return "2"
	case r.ProtoMajor == 1 && r.ProtoMinor == 0:
		return "1.0"
	}
	return fmt.Sprintf("%d.%d", r.ProtoMajor, r.ProtoMinor)
}

// End ends the request's span, named by method and route, and records its
// duration. r is the request as routed (its Pattern is the route
// template); status is the answer's; chaos is what the chaos mode did to
// the request ("api-error"), "" when nothing.
func (t *Telemetry) End(q *Request, r *http.Request, status int, chaos string) {
	elapsed := time.Since(q.start)
	route := Route(r)
	if q.span.IsRecording() {
		q.span.SetName(t.spanName(q.method, route))
		buf := otelkit.Attrs() // at most 4
		attrs := append(buf[:0], semconv.HTTPResponseStatusCode(status))
		if route != "" {
			attrs = append(attrs, semconv.HTTPRoute(route))
		}
		if status >= 500 {
			attrs = append(attrs, semconv.ErrorTypeKey.String(strconv.Itoa(status)))
			q.span.SetStatus(codes.Error, http.StatusText(status))
		}
		if chaos != "" {
			attrs = append(attrs, ChaosKey.String(chaos))
		}
		q.span.SetAttributes(attrs...)
		otelkit.Release(buf)
	}
	q.span.End()
	if t.metrics && t.server.Enabled(r.Context()) {
		t.server.Inst().Record(r.Context(), elapsed.Seconds(), t.resultOptions(resultKey{q.method, route, q.scheme, status, chaos})...)
	}
}

// spanName is a request span's name: the method and the route, the
// method alone when no route matched, HTTP for a method the conventions do
// not know.
func (t *Telemetry) spanName(method, route string) string {
	if method == "_OTHER" {
		method = "HTTP"
	}
	if route == "" {
		return method
	}
	return t.names.Get(nameKey{method, route}, func() string { return method + " " + route })
}

// resultOptions returns the request metric's attributes for a request's
// outcome.
func (t *Telemetry) resultOptions(k resultKey) []metric.RecordOption {
	return t.results.Get(k, func() []metric.RecordOption {
		attrs := []attribute.KeyValue{semconv.HTTPRequestMethodKey.String(k.method), semconv.URLScheme(k.scheme),
			semconv.HTTPResponseStatusCode(k.status)}
		if k.route != "" {
			attrs = append(attrs, semconv.HTTPRoute(k.route))
		}
		if k.status >= 500 {
			attrs = append(attrs, semconv.ErrorTypeKey.String(strconv.Itoa(k.status)))
		}
		if k.chaos != "" {
			attrs = append(attrs, ChaosKey.String(k.chaos))
		}
		return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
	})
}

// hostAttrs returns server.address and server.port of a Host header.
func (t *Telemetry) hostAttrs(hostport string) hostAttrs {
	return t.hosts.Get(hostport, func() hostAttrs {
		var h hostAttrs
		if host, port := hostPort(hostport); host != "" {
			h.kv[h.n], h.n = semconv.ServerAddress(host), h.n+1
			if port > 0 {
				h.kv[h.n], h.n = semconv.ServerPort(port), h.n+1
			}
		}
		return h
	})
}

// Route is the route template r was served by ("/v1/contexts/{id}"), or
// "" when no route matched (a 404).
func Route(r *http.Request) string {
	p := r.Pattern
	if p == "" || p == "/" {
		return ""
	}
	if _, path, ok := strings.Cut(p, " "); ok { // a pattern with a method
		p = path
	}
	return p
}

func scheme(r *http.Request) string {
	if r.TLS != nil {
		return "https"
	}
	return "http"
}

// hostPort splits a Host header or URL host.
func hostPort(hostport string) (string, int) {
	host, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return hostport, 0
	}
	port, _ := strconv.Atoi(p)
	return host, port
}

// StartEvent starts the producer span of an event being fired, in ctx's
// trace (the request's, or a new one for an event fired from Go), and
// returns ctx with it: the deliveries of the event take their parent from
// that context (Parent). The caller ends it with EndEvent.
func (t *Telemetry) StartEvent(ctx context.Context, id string, typ contextsvc.EventType, account string) (context.Context, trace.Span) {
	e := t.eventType(typ)
	ctx, span := t.tracer.Start(ctx, e.name, e.start...)
	if span.IsRecording() {
		span.SetAttributes(semconv.MessagingMessageID(id), AccountKey.String(account))
	}
	if t.metrics && t.events.Enabled(ctx) {
		t.events.Add(ctx, 1, e.count...)
	}
	return ctx, span
}

// eventType is what the spans and the counter of an event type's events
// share, built once.
type eventType struct {
	name  string
	start []trace.SpanStartOption
	count []metric.AddOption
}

// eventType returns the span name, start options and counter attributes of
// events of a type.
func (t *Telemetry) eventType(typ contextsvc.EventType) *eventType {
	return t.eventTypes.Get(typ, func() *eventType {
		e := &eventType{name: "create " + string(typ)}
		counted := string(typ)
		if !typ.Known() {
			e.name, counted = "create", "_OTHER"
		}
		e.start = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindProducer), trace.WithAttributes(
			semconv.MessagingSystemKey.String(contextsvcotel.MessagingSystem),
			semconv.MessagingOperationName("create"),
			semconv.MessagingOperationTypeCreate,
			contextsvcotel.EventTypeKey.String(string(typ)),
		)}
		e.count = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(contextsvcotel.EventTypeKey.String(counted)))}
		return e
	})
}

// EndEvent ends an event's span, saying how many deliveries it got.
func (t *Telemetry) EndEvent(span trace.Span, deliveries int) {
	if span.IsRecording() {
		span.SetAttributes(DeliveriesKey.Int(deliveries))
	}
	span.End()
}

// Parent returns the span context the deliveries of an event fired with
// ctx continue (the event's span), or nil when there is none.
func Parent(ctx context.Context) *trace.SpanContext {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return nil
	}
	return &sc
}

// AttemptInfo is what an attempt's span says of it.
type AttemptInfo struct {
	DeliveryID string
	EventID    string
	EventType  contextsvc.EventType
	WebhookID  string
	Number     int
	// Chaos is what the chaos mode did to the attempt ("held",
	// "duplicate"), "" when nothing.
	Chaos string
}

// Attempt is a delivery attempt being traced.
type Attempt struct {
	span   trace.Span
	ctx    context.Context
	start  time.Time
	method string
	info   AttemptInfo
	server serverKey
	url    *url.URL
}

// serverKey is a receiver's address, as the attempt metric labels it.
type serverKey struct {
	host string
	port int
}

// attemptKey is what the attempt metric labels an attempt by.
type attemptKey struct {
	method  string
	server  serverKey
	status  int
	errType string
	chaos   string
}

// StartAttempt starts the client span of a delivery attempt, a child of
// parent (its event's span; a new trace when nil: an event fired before
// the server was traced, or a delivery loaded from a state file), and
// puts the span's traceparent in req's headers. It returns the attempt's
// trace id in hex ("" when the span is not sampled), which the delivery
// keeps.
func (t *Telemetry) StartAttempt(parent *trace.SpanContext, req *http.Request, info AttemptInfo) (*Attempt, string) {
	ctx := req.Context()
	if parent != nil {
		ctx = trace.ContextWithSpanContext(ctx, *parent)
	}
	a := &Attempt{start: time.Now(), method: req.Method, info: info, url: req.URL}
	a.server.host, a.server.port = hostPort(req.URL.Host)
	if a.server.port == 0 {
		a.server.port = 80
		if req.URL.Scheme == "https" {
			a.server.port = 443
		}
	}
	if t.traced {
		// What is known before the delivery is sent is given at the
		// span's start, where a sampler sees it (the HTTP conventions
		// name the method, the server and url.full); the outcome is
		// added as it ends.
		start := otelkit.StartAttrs() // at most 10
		start.Add(
			semconv.HTTPRequestMethodKey.String(a.method),
			semconv.ServerAddress(a.server.host),
			semconv.ServerPort(a.server.port),
			semconv.URLFull(redact.Parsed(a.url)),
			semconv.MessagingMessageID(info.EventID),
			contextsvcotel.EventTypeKey.String(string(info.EventType)),
			contextsvcotel.DeliveryIDKey.String(info.DeliveryID),
			contextsvcotel.DeliveryAttemptKey.Int(info.Number),
			WebhookIDKey.String(info.WebhookID),
		)
		if info.Number > 1 {
			start.Add(semconv.HTTPRequestResendCount(info.Number - 1))
		}
		ctx, a.span = t.tracer.Start(ctx, req.Method, clientKind, start.Option())
		start.Release()
	} else {
		ctx, a.span = t.tracer.Start(ctx, req.Method, untracedClient...)
	}
	a.ctx = ctx
	t.prop.Inject(ctx, otelkit.HeaderCarrier(req.Header))
	var id string
	if sc := a.span.SpanContext(); sc.IsValid() && sc.IsSampled() {
		id = sc.TraceID().String()
	}
	return a, id
}

// EndAttempt ends an attempt's span: status is the receiver's answer (0
// when none came), err why none came, and failure what the delivery
// records as the attempt's error ("" when it succeeded).
func (t *Telemetry) EndAttempt(a *Attempt, status int, err error, failure string) {
	elapsed := time.Since(a.start)
	var errType string
	switch {
	case err != nil:
		errType = errorType(err)
	case status < 200 || status > 299:
		errType = strconv.Itoa(status)
	}
	if a.span.IsRecording() {
		buf := otelkit.Attrs() // at most 3
		attrs := buf[:0]
		if status > 0 {
			attrs = append(attrs, semconv.HTTPResponseStatusCode(status))
		}
		if errType != "" {
			attrs = append(attrs, semconv.ErrorTypeKey.String(errType))
			a.span.SetStatus(codes.Error, failure)
		}
		if a.info.Chaos != "" {
			attrs = append(attrs, ChaosKey.String(a.info.Chaos))
		}
		a.span.SetAttributes(attrs...)
		otelkit.Release(buf)
	}
	a.span.End()
	if t.metrics && t.client.Enabled(a.ctx) {
		k := attemptKey{method: a.method, server: a.server, status: status, errType: errType, chaos: a.info.Chaos}
		t.client.Inst().Record(a.ctx, elapsed.Seconds(), t.attempts.Get(k, func() []metric.RecordOption {
			attrs := []attribute.KeyValue{semconv.HTTPRequestMethodKey.String(k.method), semconv.ServerAddress(k.server.host),
				semconv.ServerPort(k.server.port)}
			if k.status > 0 {
				attrs = append(attrs, semconv.HTTPResponseStatusCode(k.status))
			}
			if k.errType != "" {
				attrs = append(attrs, semconv.ErrorTypeKey.String(k.errType))
			}
			if k.chaos != "" {
				attrs = append(attrs, ChaosKey.String(k.chaos))
			}
			return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
		})...)
	}
}

// errorType is error.type of an attempt that got no answer: timeout,
// canceled, or the Go type of the error under the url.Error.
func errorType(err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "timeout"
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return "timeout"
	}
	if errors.Is(err, context.Canceled) {
		return "canceled"
	}
	if ue, ok := err.(*url.Error); ok && ue.Err != nil {
		err = ue.Err
	}
	return fmt.Sprintf("%T", err)
}
