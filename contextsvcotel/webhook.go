package contextsvcotel

import (
	"context"
	"net/http"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/contextsvcotel/internal/otelkit"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/semconv/v1.43.0/messagingconv"
	"go.opentelemetry.io/otel/trace"
)

// MessagingSystem is messaging.system on the receiver's spans and metric:
// the webhooks of the Context Management Service.
const MessagingSystem = "contextsvc"

// webhookTelemetry is what the receiver's delivery hook uses.
type webhookTelemetry struct {
	tracer   trace.Tracer // nil when the option does not trace
	prop     propagation.TextMapPropagator
	measures bool // the option records the metric
	duration messagingconv.ProcessDuration
	start    []trace.SpanStartOption // every delivery span's
	// results holds the metric's attributes by outcome, built once each.
	results otelkit.Cache[deliveryKey, []metric.RecordOption]
}

// deliveryKey is what the metric labels a delivery by.
type deliveryKey struct {
	outcome contextsvc.DeliveryOutcome
	typ     string // a type the SDK knows, _OTHER, or "" before verification
}

// processAttrs are every delivery span's attributes of the messaging
// conventions, given at its start, where a sampler sees them.
var processAttrs = [...]attribute.KeyValue{
	semconv.MessagingSystemKey.String(MessagingSystem),
	semconv.MessagingOperationName("process"),
	semconv.MessagingOperationTypeProcess,
}

// processNames are the span names of the event types the SDK knows.
var processNames = func() map[contextsvc.EventType]string {
	m := map[contextsvc.EventType]string{}
	for _, t := range contextsvc.AllEventTypes() {
		m[t] = "process " + string(t)
	}
	return m
}()

// NewWebhookOption returns an option for [contextsvc.NewWebhookHandler]
// that traces and measures every request the handler answers: one span per
// delivery, kind consumer, named "process" and the event type ("process
// context.updated"; "process" alone until the signature and envelope are
// verified, since nothing unverified names a span), with the event, the
// delivery and the outcome; the receiver's function runs with the span in
// its context. Its spans and metrics are listed in the package
// documentation and docs/observability.md.
//
// A delivery that carries a traceparent (the service sends the one of the
// delivery attempt) is continued: its span becomes the parent, so the
// service's attempt and the receiver's handling are one trace. The
// messaging conventions advise a link to a message's creation context, for
// consumers that process messages detached from their sending; a webhook
// delivery is not detached: it is one synchronous HTTP request whose answer
// decides the attempt's outcome (2xx or a retry), so the attempt is the
// cause of the handling, as with any HTTP call. When the request's context
// already has a span of another trace (a server middleware that starts its
// own), that span stays the parent and the delivery's context becomes a
// link, so neither is lost.
func NewWebhookOption(opts ...Option) (contextsvc.WebhookOption, error) {
	return newWebhookOption(true, true, opts)
}

// NewWebhookTracingOption is [NewWebhookOption] that only traces: the
// delivery's span, continuing the trace the delivery carries. It reads no
// meter provider and records no metric. A handler has one delivery hook
// (the last [contextsvc.WithDeliveryHook] given wins): for traces and
// metrics, use NewWebhookOption rather than this and
// [NewWebhookMetricsOption] together.
func NewWebhookTracingOption(opts ...Option) (contextsvc.WebhookOption, error) {
	return newWebhookOption(true, false, opts)
}

// NewWebhookMetricsOption is [NewWebhookOption] that only measures: the
// metric messaging.process.duration by outcome and event type. It reads
// no tracer provider, starts no span and reads no trace context. A
// handler has one delivery hook: for both, use NewWebhookOption.
func NewWebhookMetricsOption(opts ...Option) (contextsvc.WebhookOption, error) {
	return newWebhookOption(false, true, opts)
}

func newWebhookOption(tracing, metrics bool, opts []Option) (contextsvc.WebhookOption, error) {
	c, err := newConfig(tracing, metrics, opts)
	if err != nil {
		return nil, err
	}
	// The span starts with the messaging attributes, where a sampler
	// sees them (built once: no allocation per delivery); the rest, known
	// once the delivery is verified, is set as it ends, in one call from
	// a lent buffer.
	t := &webhookTelemetry{prop: c.prop, start: []trace.SpanStartOption{
		trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(processAttrs[:]...),
	}}
	if tracing {
		t.tracer = c.tracer()
	}
	if metrics {
		t.measures = true
		if t.duration, err = messagingconv.NewProcessDuration(c.meter(), metric.WithExplicitBucketBoundaries(durationBuckets...)); err != nil {
			return nil, err
		}
	}
	return contextsvc.WithDeliveryHook(t.hook), nil
}

// hook is the DeliveryHook: it starts the delivery's span and returns what
// ends it.
func (t *webhookTelemetry) hook(r *http.Request) (context.Context, func(contextsvc.DeliveryResult)) {
	start := time.Now()
	if t.tracer == nil {
		ctx := r.Context()
		return ctx, func(res contextsvc.DeliveryResult) { t.record(ctx, res, time.Since(start)) }
	}
	ctx := r.Context()
	opts := t.start
	sent := trace.SpanContextFromContext(t.prop.Extract(context.Background(), otelkit.HeaderCarrier(r.Header)))
	if sent.IsValid() {
		current := trace.SpanContextFromContext(ctx)
		switch {
		case !current.IsValid():
			ctx = trace.ContextWithRemoteSpanContext(ctx, sent)
		case current.TraceID() != sent.TraceID():
			opts = append(opts[:len(opts):len(opts)], trace.WithLinks(trace.Link{SpanContext: sent}))
		}
	}
	ctx, span := t.tracer.Start(ctx, "process", opts...)
	return ctx, func(res contextsvc.DeliveryResult) {
		elapsed := time.Since(start)
		if span.IsRecording() {
			buf := otelkit.Attrs() // at most 10
			attrs := append(buf[:0], OutcomeKey.String(string(res.Outcome)))
			if res.StatusCode != 0 { // 0: nothing was answered (the function panicked)
				attrs = append(attrs, semconv.HTTPResponseStatusCode(res.StatusCode))
			}
			if res.Event != nil {
				if name, ok := processNames[res.Event.Type]; ok {
					span.SetName(name)
				}
				attrs = append(attrs, semconv.MessagingMessageID(res.Event.ID), EventTypeKey.String(string(res.Event.Type)))
			}
			if res.DeliveryID != "" {
				attrs = append(attrs, DeliveryIDKey.String(res.DeliveryID))
			}
			if res.Attempt > 0 {
				attrs = append(attrs, DeliveryAttemptKey.Int(res.Attempt))
			}
			if deliveryFailed(res.Outcome) {
				attrs = append(attrs, semconv.ErrorTypeKey.String(string(res.Outcome)))
				desc := string(res.Outcome)
				if res.Err != nil {
					desc = res.Err.Error()
				}
				span.SetStatus(codes.Error, desc)
			}
			span.SetAttributes(attrs...)
			otelkit.Release(buf)
		}
		span.End()
		t.record(ctx, res, elapsed)
	}
}

// record records a delivery's processing duration, when the option
// measures.
func (t *webhookTelemetry) record(ctx context.Context, res contextsvc.DeliveryResult, elapsed time.Duration) {
	if !t.measures || !t.duration.Enabled(ctx) {
		return
	}
	var typ string // a type the SDK knows, or _OTHER
	if res.Event != nil {
		typ = string(res.Event.Type)
		if !res.Event.Type.Known() {
			typ = "_OTHER"
		}
	}
	t.duration.Inst().Record(ctx, elapsed.Seconds(), t.resultOptions(res.Outcome, typ, deliveryFailed(res.Outcome))...)
}

// deliveryFailed reports whether an outcome is a failure (the span's status
// is Error, error.type is set): every outcome but handled, duplicate and
// busy (another attempt is handling the event; the sender retries).
func deliveryFailed(o contextsvc.DeliveryOutcome) bool {
	switch o {
	case contextsvc.DeliveryHandled, contextsvc.DeliveryDuplicate, contextsvc.DeliveryBusy:
		return false
	}
	return true
}

// resultOptions returns the metric's attributes for a delivery's outcome
// and event type.
func (t *webhookTelemetry) resultOptions(outcome contextsvc.DeliveryOutcome, typ string, failed bool) []metric.RecordOption {
	return t.results.Get(deliveryKey{outcome, typ}, func() []metric.RecordOption {
		attrs := []attribute.KeyValue{
			semconv.MessagingSystemKey.String(MessagingSystem),
			semconv.MessagingOperationName("process"),
			OutcomeKey.String(string(outcome)),
		}
		if typ != "" {
			attrs = append(attrs, EventTypeKey.String(typ))
		}
		if failed {
			attrs = append(attrs, semconv.ErrorTypeKey.String(string(outcome)))
		}
		return []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(attrs...))}
	})
}
