package mockserver

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// discardSpans is a span exporter that drops what it is given.
type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }

// BenchmarkServeGETTraced is BenchmarkServeGET on a traced and measured
// server: an SDK tracer (batch processor, spans dropped by the exporter)
// and SDK meters, what -otel runs. Beside BenchmarkServeGET it is the
// cost of a request's span and metric.
func BenchmarkServeGETTraced(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardSpans{}))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	s := unvalidated(New(WithKey(Key{Token: "bench", Plan: PlanUnlimited}), WithTracerProvider(tp), WithMeterProvider(mp)))
	create := httptest.NewRequest("POST", "/v1/contexts", strings.NewReader(`{"name":"ctx"}`))
	create.Header.Set("Authorization", "Bearer bench")
	s.ServeHTTP(httptest.NewRecorder(), create)
	id := s.Snapshot().Contexts[0].ID
	req := httptest.NewRequest("GET", "/v1/contexts/"+id, nil)
	req.Header.Set("Authorization", "Bearer bench")
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
	}
}

// BenchmarkServeGETOtelhttp is BenchmarkServeGET through otelhttp.NewHandler
// on the same SDK providers as BenchmarkServeGETTraced: the baseline of
// what a server span and its metrics cost, for the mock's own telemetry
// (BenchmarkServeGETTraced) to be priced against.
func BenchmarkServeGETOtelhttp(b *testing.B) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardSpans{}))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	s := benchServer(b, 1)
	h := otelhttp.NewHandler(s, "mock", otelhttp.WithTracerProvider(tp), otelhttp.WithMeterProvider(mp),
		otelhttp.WithPropagators(propagation.TraceContext{}))
	id := s.Snapshot().Contexts[0].ID
	req := httptest.NewRequest("GET", "/v1/contexts/"+id, nil)
	req.Header.Set("Authorization", "Bearer bench")
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
	}
}
