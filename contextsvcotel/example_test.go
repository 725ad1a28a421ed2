package contextsvcotel_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/contextsvcotel"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// printSpans prints spans as a tree, children under their parent, with a
// few of their attributes.
func printSpans(spans tracetest.SpanStubs) {
	children := map[string][]tracetest.SpanStub{}
	ids := map[string]bool{}
	for _, s := range spans {
		ids[s.SpanContext.SpanID().String()] = true
	}
	var roots []tracetest.SpanStub
	for _, s := range spans {
		if p := s.Parent.SpanID().String(); s.Parent.IsValid() && ids[p] {
			children[p] = append(children[p], s)
		} else {
			roots = append(roots, s)
		}
	}
	var walk func(s tracetest.SpanStub, indent string)
	walk = func(s tracetest.SpanStub, indent string) {
		var attrs []string
		for _, kv := range s.Attributes {
			switch kv.Key {
			case "http.response.status_code", "http.request.resend_count", "contextsvc.operation", "contextsvc.attempts",
				"contextsvc.webhook.outcome", "contextsvc.delivery.attempt":
				attrs = append(attrs, string(kv.Key)+"="+kv.Value.String())
			}
		}
		fmt.Printf("%s%s (%s)%s\n", indent, s.Name, s.SpanKind, strings.Join(append([]string{""}, attrs...), " "))
		for _, e := range s.Events {
			fmt.Printf("%s  event %s\n", indent, e.Name)
		}
		kids := children[s.SpanContext.SpanID().String()]
		slices.SortFunc(kids, func(a, b tracetest.SpanStub) int { return a.StartTime.Compare(b.StartTime) })
		for _, c := range kids {
			walk(c, indent+"  ")
		}
	}
	for _, r := range roots {
		walk(r, "")
	}
}

// Tracing and measuring a client and a receiver: the providers are the
// application's (here SDK ones; in production with an OTLP exporter).
func Example() {
	tp := sdktrace.NewTracerProvider()
	mp := sdkmetric.NewMeterProvider()
	defer tp.Shutdown(context.Background())
	defer mp.Shutdown(context.Background())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"ctx_1","name":"Runbook","version":3}`)
	}))
	defer srv.Close()
	apiKey, baseURL, secret := "sk_test_example", srv.URL+"/v1", "whsec_example"
	handle := func(context.Context, *contextsvc.Event) error { return nil }

	mw, err := contextsvcotel.NewMiddleware(contextsvcotel.WithTracerProvider(tp), contextsvcotel.WithMeterProvider(mp))
	if err != nil {
		log.Fatal(err)
	}
	client, err := contextsvc.NewClient(apiKey, contextsvc.WithBaseURL(baseURL), contextsvc.WithMiddleware(mw))
	if err != nil {
		log.Fatal(err)
	}

	opt, err := contextsvcotel.NewWebhookOption(contextsvcotel.WithTracerProvider(tp), contextsvcotel.WithMeterProvider(mp))
	if err != nil {
		log.Fatal(err)
	}
	receiver, err := contextsvc.NewWebhookHandler(secret, handle, opt)
	if err != nil {
		log.Fatal(err)
	}

	c, err := client.Contexts.Get(context.Background(), "ctx_1")
	fmt.Println(c.Name, err, receiver != nil)
	// Output: Runbook <nil> true
}

// The client's call, retried once after a 503: one span for the call (kind
// internal, named for the operation) and one per attempt (kind client,
// with the HTTP attributes), the back-off an event of the call's span,
// and the attempt's traceparent sent to the service.
func ExampleNewMiddleware() {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			http.Error(w, `{"error":{"type":"unavailable","message":"try again"}}`, http.StatusServiceUnavailable)
			return
		}
		fmt.Println("the service got a traceparent:", r.Header.Get("Traceparent") != "")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"ctx_1","name":"Runbook","version":3}`)
	}))
	defer srv.Close()

	spans := tracetest.NewInMemoryExporter() // in production: an OTLP exporter
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(context.Background())

	mw, err := contextsvcotel.NewMiddleware(contextsvcotel.WithTracerProvider(tp))
	if err != nil {
		log.Fatal(err)
	}
	client, err := contextsvc.NewClient("sk_test_example", contextsvc.WithBaseURL(srv.URL+"/v1"),
		contextsvc.WithMiddleware(mw), contextsvc.WithRetryWait(time.Millisecond, time.Millisecond))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := client.Contexts.Get(context.Background(), "ctx_1"); err != nil {
		log.Fatal(err)
	}
	printSpans(spans.GetSpans())
	// Output:
	// the service got a traceparent: true
	// contextsvc.contexts.get (internal) contextsvc.operation=getContext contextsvc.attempts=2
	//   event contextsvc.retry.backoff
	//   GET /v1/contexts/{id} (client) http.response.status_code=503
	//   GET /v1/contexts/{id} (client) http.request.resend_count=1 http.response.status_code=200
}

// A receiver whose handling of each delivery is a span continuing the
// delivery attempt's trace; the function's context carries it.
func ExampleNewWebhookOption() {
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(context.Background())

	opt, err := contextsvcotel.NewWebhookOption(contextsvcotel.WithTracerProvider(tp))
	if err != nil {
		log.Fatal(err)
	}
	handle := func(ctx context.Context, ev *contextsvc.Event) error {
		// Spans started from ctx are children of the delivery's.
		_, span := tp.Tracer("receiver").Start(ctx, "update search index")
		span.End()
		return nil
	}
	receiver, err := contextsvc.NewWebhookHandler("whsec_example", handle, opt)
	if err != nil {
		log.Fatal(err)
	}

	body := `{"id":"evt_1","type":"context.updated","timestamp":"` + time.Now().UTC().Format(time.RFC3339Nano) +
		`","data":{"contextId":"ctx_1","name":"Plan","version":2,"updatedBy":"user_1","changes":{"sections_modified":[],"word_count_delta":0}}}`
	r := httptest.NewRequest(http.MethodPost, "/webhooks", strings.NewReader(body))
	r.Header.Set(contextsvc.DefaultSignatureHeader, contextsvc.Sign([]byte(body), "whsec_example"))
	r.Header.Set("X-Service-Delivery", "dlv_1")
	r.Header.Set("X-Service-Delivery-Attempt", "2")
	r.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	receiver.ServeHTTP(httptest.NewRecorder(), r)

	printSpans(spans.GetSpans())
	for _, s := range spans.GetSpans() {
		if s.Name == "process context.updated" {
			fmt.Println("trace", s.SpanContext.TraceID(), "parent", s.Parent.SpanID())
		}
	}
	// Output:
	// process context.updated (consumer) contextsvc.webhook.outcome=handled http.response.status_code=200 contextsvc.delivery.attempt=2
	//   update search index (internal)
	// trace 4bf92f3577b34da6a3ce929d0e0e4736 parent 00f067aa0ba902b7
}

// spanNames is a trace exporter that keeps the names of the spans it is
// given, standing in for an OTLP exporter.
type spanNames struct {
	mu    sync.Mutex
	names []string
}

func (e *spanNames) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, s := range spans {
		e.names = append(e.names, s.Name())
	}
	return nil
}

func (e *spanNames) Shutdown(context.Context) error { return nil }

// metricNames is a metric exporter that keeps the names of the metrics it
// is given, standing in for an OTLP exporter.
type metricNames struct {
	mu    sync.Mutex
	names []string
}

func (e *metricNames) Temporality(k sdkmetric.InstrumentKind) metricdata.Temporality {
	return sdkmetric.DefaultTemporalitySelector(k)
}

func (e *metricNames) Aggregation(k sdkmetric.InstrumentKind) sdkmetric.Aggregation {
	return sdkmetric.DefaultAggregationSelector(k)
}

func (e *metricNames) Export(_ context.Context, rm *metricdata.ResourceMetrics) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			e.names = append(e.names, m.Name)
		}
	}
	return nil
}

func (e *metricNames) ForceFlush(context.Context) error { return nil }
func (e *metricNames) Shutdown(context.Context) error   { return nil }

// Exporting to a collector over OTLP/HTTP: the exporters read the standard
// variables (OTEL_EXPORTER_OTLP_ENDPOINT, default http://localhost:4318;
// OTEL_SERVICE_NAME for the SDK's resource), the tracer provider batches
// the spans, the meter provider reads the metrics every minute, and
// shutting them down flushes what is still queued. (Not run here: it needs
// a collector.)
func ExampleNewMiddleware_otlp() {
	ctx := context.Background()
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		log.Fatal(err)
	}
	mexp, err := otlpmetrichttp.New(ctx)
	if err != nil {
		log.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	defer tp.Shutdown(ctx) // flushes what is still queued
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(mexp)))
	defer mp.Shutdown(ctx)

	mw, err := contextsvcotel.NewMiddleware(contextsvcotel.WithTracerProvider(tp), contextsvcotel.WithMeterProvider(mp))
	if err != nil {
		log.Fatal(err)
	}
	// The key and the base URL from CONTEXTSVC_API_KEY and CONTEXTSVC_BASE_URL.
	client, err := contextsvc.NewClient("", contextsvc.WithMiddleware(mw))
	if err != nil {
		log.Fatal(err)
	}
	if _, err := client.Contexts.List(ctx, nil); err != nil {
		log.Fatal(err)
	}
}

// Exporting: the application's providers batch the spans and read the
// metrics periodically, each into an exporter (in production OTLP's,
// otlptracehttp.New(ctx) and otlpmetrichttp.New(ctx); here two that keep
// names), and shutting them down flushes what is still queued.
func Example_export() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"ctx_1","name":"Runbook","version":3}`)
	}))
	defer srv.Close()
	ctx := context.Background()
	exp, mexp := &spanNames{}, &metricNames{}

	func() {
		tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
		defer tp.Shutdown(ctx) // flushes what is still queued
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(mexp)))
		defer mp.Shutdown(ctx)

		mw, err := contextsvcotel.NewMiddleware(contextsvcotel.WithTracerProvider(tp), contextsvcotel.WithMeterProvider(mp))
		if err != nil {
			log.Fatal(err)
		}
		client, err := contextsvc.NewClient("sk_test_example", contextsvc.WithBaseURL(srv.URL+"/v1"), contextsvc.WithMiddleware(mw))
		if err != nil {
			log.Fatal(err)
		}
		if _, err := client.Contexts.Get(ctx, "ctx_1"); err != nil {
			log.Fatal(err)
		}
	}()
	fmt.Println(exp.names)
	fmt.Println(mexp.names)
	// Output:
	// [GET /v1/contexts/{id} contextsvc.contexts.get]
	// [http.client.request.duration]
}

// Tracing and metrics turned on separately: a client that only traces
// (no meter provider is read, no metric recorded) and one that only
// measures (no span, no traceparent sent).
func ExampleNewTracingMiddleware() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println("traceparent sent:", r.Header.Get("Traceparent") != "")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id":"ctx_1","name":"Runbook","version":3}`)
	}))
	defer srv.Close()
	ctx := context.Background()
	spans := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(spans))
	defer tp.Shutdown(ctx)
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(ctx)

	tracing, err := contextsvcotel.NewTracingMiddleware(contextsvcotel.WithTracerProvider(tp))
	if err != nil {
		log.Fatal(err)
	}
	metrics, err := contextsvcotel.NewMetricsMiddleware(contextsvcotel.WithMeterProvider(mp))
	if err != nil {
		log.Fatal(err)
	}
	for _, mw := range []contextsvc.Middleware{tracing, metrics} {
		client, err := contextsvc.NewClient("sk_test_example", contextsvc.WithBaseURL(srv.URL+"/v1"), contextsvc.WithMiddleware(mw))
		if err != nil {
			log.Fatal(err)
		}
		if _, err := client.Contexts.Get(ctx, "ctx_1"); err != nil {
			log.Fatal(err)
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		log.Fatal(err)
	}
	fmt.Println("spans:", len(spans.GetSpans()), "metrics:", len(rm.ScopeMetrics[0].Metrics))
	// Output:
	// traceparent sent: true
	// traceparent sent: false
	// spans: 2 metrics: 1
}
