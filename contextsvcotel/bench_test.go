package contextsvcotel_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/contextsvcotel"
	"github.com/contextsvc/contextsvc-go/contextsvcotel/internal/benchtest"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// benchProviders is an SDK tracer with a batch span processor in front of
// an exporter that drops the spans (what a service exporting its traces
// pays in-process), and an SDK meter provider with a reader.
func benchProviders(b testing.TB) (*sdktrace.TracerProvider, *sdkmetric.MeterProvider) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	return tp, mp
}

// BenchmarkClientTelemetry prices the client's instrumentation against
// otelhttp's around plain net/http, against the same local server (the
// root package's BenchmarkContextsGet's) in the same run:
//   - plain: net/http + encoding/json, as in BenchmarkContextsGet;
//   - plain-otelhttp: the same through otelhttp.NewTransport (one span and
//     its metrics per request);
//   - client: Contexts.Get, no middleware;
//   - client-otel: Contexts.Get through NewMiddleware (a call span, an
//     attempt span, the metrics, the traceparent);
//   - client-otel-global: NewMiddleware on the global providers, which are
//     no-ops while the application sets none.
//
// The overhead of the client's instrumentation is client-otel minus
// client; otelhttp's is plain-otelhttp minus plain. Both traced sides use
// the same SDK tracer (batch processor, discarding exporter) and meter
// provider.
func BenchmarkClientTelemetry(b *testing.B) {
	srv := benchtest.Server(b)
	url := srv.URL + "/v1/contexts/" + benchtest.ContextID
	ctx := context.Background()
	plain := func(b *testing.B, rt http.RoundTripper) {
		benchtest.Plain(b, rt, url, func(c *contextsvc.Context) bool { return c.Version == 7 })
	}
	client := func(b *testing.B, opts ...contextsvc.Option) {
		c, err := contextsvc.NewClient("sk_bench", append([]contextsvc.Option{contextsvc.WithBaseURL(srv.URL + "/v1")}, opts...)...)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			got, err := c.Contexts.Get(ctx, benchtest.ContextID)
			if err != nil {
				b.Fatal(err)
			}
			if got.Version != 7 {
				b.Fatal("bad decode")
			}
		}
	}

	b.Run("plain", func(b *testing.B) { plain(b, benchtest.Transport()) })
	b.Run("plain-otelhttp", func(b *testing.B) {
		tp, mp := benchProviders(b)
		plain(b, otelhttp.NewTransport(benchtest.Transport(), otelhttp.WithTracerProvider(tp), otelhttp.WithMeterProvider(mp),
			otelhttp.WithPropagators(propagation.TraceContext{})))
	})
	b.Run("client", func(b *testing.B) { client(b) })
	b.Run("client-otel", func(b *testing.B) {
		tp, mp := benchProviders(b)
		mw, err := contextsvcotel.NewMiddleware(contextsvcotel.WithTracerProvider(tp), contextsvcotel.WithMeterProvider(mp))
		if err != nil {
			b.Fatal(err)
		}
		client(b, contextsvc.WithMiddleware(mw))
	})
	b.Run("client-otel-global", func(b *testing.B) {
		mw, err := contextsvcotel.NewMiddleware()
		if err != nil {
			b.Fatal(err)
		}
		client(b, contextsvc.WithMiddleware(mw))
	})
}

// TestClientTelemetryAllocs holds the client's instrumentation to its goal
// (BENCHMARKS.md): it adds to a call no more allocations than otelhttp adds
// to plain net/http, counted in the same run, against the same server
// (whose allocations both sides count alike), on the same kind of
// providers. Not parallel: AllocsPerRun counts every goroutine's
// allocations.
func TestClientTelemetryAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops sync.Pool's items at random: the counts would not be the code's")
	}
	srv := benchtest.Server(t)
	url := srv.URL + "/v1/contexts/" + benchtest.ContextID
	plain := func(rt http.RoundTripper) func() {
		hc := &http.Client{Transport: rt}
		return func() {
			resp := benchtest.Get(t, hc, url)
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	client := func(opts ...contextsvc.Option) func() {
		c, err := contextsvc.NewClient("sk_bench", append([]contextsvc.Option{contextsvc.WithBaseURL(srv.URL + "/v1")}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		return func() {
			if _, err := c.Contexts.Get(context.Background(), benchtest.ContextID); err != nil {
				t.Fatal(err)
			}
		}
	}
	allocs := func(call func()) float64 {
		call() // the connection, the caches
		return testing.AllocsPerRun(2000, call)
	}
	tp, mp := benchProviders(t)
	mw, err := contextsvcotel.NewMiddleware(contextsvcotel.WithTracerProvider(tp), contextsvcotel.WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	ours := allocs(client(contextsvc.WithMiddleware(mw))) - allocs(client())
	otp, omp := benchProviders(t)
	theirs := allocs(plain(otelhttp.NewTransport(benchtest.Transport(), otelhttp.WithTracerProvider(otp), otelhttp.WithMeterProvider(omp),
		otelhttp.WithPropagators(propagation.TraceContext{})))) - allocs(plain(benchtest.Transport()))
	t.Logf("allocations a call: contextsvcotel +%.1f, otelhttp +%.1f", ours, theirs)
	if ours > theirs {
		t.Errorf("NewMiddleware adds %.1f allocations to a call, otelhttp %.1f to plain net/http: want no more", ours, theirs)
	}
}

// BenchmarkWebhookTelemetry prices the receiver's instrumentation: the
// handler alone against the same handler with NewWebhookOption on an SDK
// tracer (batch processor, discarding exporter) and meter provider, and on
// the global (no-op) providers; and, as the baseline, otelhttp.NewHandler
// around the bare handler on the same SDK providers (a server span and its
// metrics). Deduplication is off, since every iteration delivers the same
// event.
func BenchmarkWebhookTelemetry(b *testing.B) {
	const secret = "whsec_benchmark_secret_0123456789"
	body := eventBody("evt_bench", contextsvc.EventContextUpdated)
	handler := func(b *testing.B, opts ...contextsvc.WebhookOption) http.Handler {
		opts = append(opts, contextsvc.WithWebhookClock(func() time.Time { return deliveredAt }), contextsvc.WithDeduper(nil))
		h, err := contextsvc.NewWebhookHandler(secret, func(context.Context, *contextsvc.Event) error { return nil }, opts...)
		if err != nil {
			b.Fatal(err)
		}
		return h
	}
	deliver := func(b *testing.B, h http.Handler) {
		benchtest.Deliver(b, h, body, http.Header{
			contextsvc.DefaultSignatureHeader: {contextsvc.Sign(body, secret)},
			"Traceparent":                     {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
			"X-Service-Delivery":              {"dlv_bench"},
			"X-Service-Delivery-Attempt":      {"1"},
		})
	}
	run := func(b *testing.B, opts ...contextsvc.WebhookOption) { deliver(b, handler(b, opts...)) }
	b.Run("handler", func(b *testing.B) { run(b) })
	b.Run("handler-otelhttp", func(b *testing.B) {
		tp, mp := benchProviders(b)
		deliver(b, otelhttp.NewHandler(handler(b), "webhook", otelhttp.WithTracerProvider(tp), otelhttp.WithMeterProvider(mp),
			otelhttp.WithPropagators(propagation.TraceContext{})))
	})
	b.Run("handler-otel", func(b *testing.B) {
		tp, mp := benchProviders(b)
		opt, err := contextsvcotel.NewWebhookOption(contextsvcotel.WithTracerProvider(tp), contextsvcotel.WithMeterProvider(mp))
		if err != nil {
			b.Fatal(err)
		}
		run(b, opt)
	})
	b.Run("handler-otel-global", func(b *testing.B) {
		opt, err := contextsvcotel.NewWebhookOption()
		if err != nil {
			b.Fatal(err)
		}
		run(b, opt)
	})
}
