// Package contextsvcotel traces and measures the contextsvc client and
// webhook receivers with OpenTelemetry. It sits beside package contextsvc,
// which does not import OpenTelemetry: install it where you export telemetry.
//
// The client: one span per call (kind internal, named for the operation,
// e.g. "contextsvc.contexts.get", with the contextsvc.* attributes), a
// child span per attempt (kind client, following the HTTP client semantic
// conventions: "GET /v1/contexts/{id}" with the HTTP attributes),
// rate-limiter waits and retry back-offs as events on the call's span, the
// W3C traceparent on every attempt, and the metrics
// http.client.request.duration, contextsvc.client.retries and
// contextsvc.client.limiter.wait.duration:
//
//	mw, err := contextsvcotel.NewMiddleware(contextsvcotel.WithTracerProvider(tp), contextsvcotel.WithMeterProvider(mp))
//	if err != nil { … }
//	client, err := contextsvc.NewClient(key, contextsvc.WithMiddleware(mw))
//
// A receiver: one span per delivery (kind consumer, "process
// context.updated"), continuing the trace of the delivery attempt that
// carries a traceparent, with the event, the delivery and the outcome, and
// the metric messaging.process.duration by outcome:
//
//	opt, err := contextsvcotel.NewWebhookOption(contextsvcotel.WithTracerProvider(tp))
//	if err != nil { … }
//	handler, err := contextsvc.NewWebhookHandler(secret, handle, opt)
//
// Tracing and metrics can be turned on separately, as go-redis's redisotel
// does: [NewTracingMiddleware] and [NewMetricsMiddleware] for the client,
// [NewWebhookTracingOption] and [NewWebhookMetricsOption] for a receiver;
// [NewMiddleware] and [NewWebhookOption] do both.
//
// Providers default to the global ones (otel.GetTracerProvider,
// otel.GetMeterProvider, read when the middleware or option is made); the
// propagator defaults to W3C Trace Context. The package sets nothing global.
// docs/observability.md lists every span, event, metric and attribute.
package contextsvcotel

import (
	"fmt"
	"strings"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the package's tracers and
// meters.
const ScopeName = "github.com/contextsvc/contextsvc-go/contextsvcotel"

// version is the SDK's version, for the instrumentation scope.
var version = strings.TrimPrefix(contextsvc.DefaultUserAgent, "contextsvc-go/")

// The attributes of this package's own, beside the semantic conventions'.
const (
	// OperationKey is the service's name for a call's operation
	// (getContext…): on the call's span.
	OperationKey = attribute.Key("contextsvc.operation")
	// AttemptsKey is how many attempts a call sent: on the call's span.
	AttemptsKey = attribute.Key("contextsvc.attempts")
	// AttemptKey is the number of the attempt a wait came before: on wait
	// events.
	AttemptKey = attribute.Key("contextsvc.attempt")
	// WaitDurationKey is how long a wait lasted, in seconds: on wait
	// events.
	WaitDurationKey = attribute.Key("contextsvc.wait.duration")
	// EventTypeKey is a delivered event's type: on the delivery's span and
	// metric.
	EventTypeKey = attribute.Key("contextsvc.event.type")
	// DeliveryIDKey is the delivery's id (X-Service-Delivery): on the
	// delivery's span.
	DeliveryIDKey = attribute.Key("contextsvc.delivery.id")
	// DeliveryAttemptKey is the delivery's attempt number
	// (X-Service-Delivery-Attempt): on the delivery's span.
	DeliveryAttemptKey = attribute.Key("contextsvc.delivery.attempt")
	// OutcomeKey is how the receiver answered a delivery
	// ([contextsvc.DeliveryOutcome]): on the delivery's span and metric.
	OutcomeKey = attribute.Key("contextsvc.webhook.outcome")
)

// Option configures [NewMiddleware] and [NewWebhookOption].
type Option func(*config) error

type config struct {
	tp   trace.TracerProvider
	mp   metric.MeterProvider
	prop propagation.TextMapPropagator
	// What the constructor turns on.
	tracing, metrics bool
}

// WithTracerProvider sets where spans go (default: the global provider).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) error {
		if tp == nil {
			return fmt.Errorf("%w: contextsvcotel.WithTracerProvider(nil)", contextsvc.ErrInvalidArgument)
		}
		c.tp = tp
		return nil
	}
}

// WithMeterProvider sets where metrics go (default: the global provider).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) error {
		if mp == nil {
			return fmt.Errorf("%w: contextsvcotel.WithMeterProvider(nil)", contextsvc.ErrInvalidArgument)
		}
		c.mp = mp
		return nil
	}
}

// WithPropagator sets how the trace context travels: injected into every
// attempt of the client, extracted from every delivery by the receiver. The
// default is W3C Trace Context (traceparent, tracestate), the header the
// service's deliveries carry; pass otel.GetTextMapPropagator() to use the
// application's global one.
func WithPropagator(p propagation.TextMapPropagator) Option {
	return func(c *config) error {
		if p == nil {
			return fmt.Errorf("%w: contextsvcotel.WithPropagator(nil)", contextsvc.ErrInvalidArgument)
		}
		c.prop = p
		return nil
	}
}

// newConfig applies opts to a configuration that traces, measures, or
// both: a half that is off never reads its provider.
func newConfig(tracing, metrics bool, opts []Option) (*config, error) {
	c := &config{prop: propagation.TraceContext{}, tracing: tracing, metrics: metrics}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(c); err != nil {
			return nil, err
		}
	}
	if c.tp == nil && tracing {
		c.tp = otel.GetTracerProvider()
	}
	if c.mp == nil && metrics {
		c.mp = otel.GetMeterProvider()
	}
	return c, nil
}

func (c *config) tracer() trace.Tracer {
	return c.tp.Tracer(ScopeName, trace.WithInstrumentationVersion(version), trace.WithSchemaURL(semconv.SchemaURL))
}

func (c *config) meter() metric.Meter {
	return c.mp.Meter(ScopeName, metric.WithInstrumentationVersion(version), metric.WithSchemaURL(semconv.SchemaURL))
}

// durationBuckets are the semantic conventions' bucket boundaries for
// request and processing durations, in seconds.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}
