package contextsvcotel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/contextsvcotel"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// benchContext is the root package's benchmark context: a typical one.
const benchContext = `{"id":"ctx_0123456789abcdefghij","name":"Runbook","content":"# Deploy\n\nRun the pipeline, then check the dashboards.\n\n## Rollback\n\nRevert the release tag.","tags":["ops","deploy"],"version":7,"createdAt":"2026-11-21T20:51:00.123Z","updatedAt":"2026-11-21T20:52:00.456Z"}`

// benchProviders is an SDK tracer with a batch span processor in front of
// an exporter that drops the spans (what a service exporting its traces
// pays in-process), and an SDK meter provider with a reader.
func benchProviders(b *testing.B) (*sdktrace.TracerProvider, *sdkmetric.MeterProvider) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	b.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		_ = mp.Shutdown(context.Background())
	})
	return tp, mp
}

func benchTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	return t
}

// BenchmarkClientTelemetry prices the client's instrumentation against
// otelhttp's around plain net/http, against the same local server in the
// same run:
//   - plain: net/http + encoding/json, as in the root package's
//     BenchmarkContextsGet;
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
	body := []byte(benchContext)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		h["X-Request-Id"] = []string{"req_bench"}
		w.Write(body)
	}))
	b.Cleanup(srv.Close)
	ctx := context.Background()
	const id = "ctx_0123456789abcdefghij"

	plain := func(b *testing.B, rt http.RoundTripper) {
		hc := &http.Client{Transport: rt}
		url := srv.URL + "/v1/contexts/" + id
		b.ReportAllocs()
		for b.Loop() {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			if err != nil {
				b.Fatal(err)
			}
			req.Header.Set("Authorization", "Bearer sk_bench")
			req.Header.Set("User-Agent", "bench")
			req.Header.Set("Accept", "application/json")
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			var c contextsvc.Context
			if resp.StatusCode != http.StatusOK {
				b.Fatal(resp.Status)
			}
			if err := json.NewDecoder(resp.Body).Decode(&c); err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if c.Version != 7 {
				b.Fatal("bad decode")
			}
		}
	}
	client := func(b *testing.B, opts ...contextsvc.Option) {
		c, err := contextsvc.NewClient("sk_bench", append([]contextsvc.Option{contextsvc.WithBaseURL(srv.URL + "/v1")}, opts...)...)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			got, err := c.Contexts.Get(ctx, id)
			if err != nil {
				b.Fatal(err)
			}
			if got.Version != 7 {
				b.Fatal("bad decode")
			}
		}
	}

	b.Run("plain", func(b *testing.B) { plain(b, benchTransport()) })
	b.Run("plain-otelhttp", func(b *testing.B) {
		tp, mp := benchProviders(b)
		plain(b, otelhttp.NewTransport(benchTransport(), otelhttp.WithTracerProvider(tp), otelhttp.WithMeterProvider(mp),
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

// discardWriter is a ResponseWriter that keeps nothing, so the benchmark
// measures the handler rather than a recorder.
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(code int)        { w.code = code }

// BenchmarkWebhookTelemetry prices the receiver's instrumentation: the
// handler alone against the same handler with NewWebhookOption on an SDK
// tracer (batch processor, discarding exporter) and meter provider, and on
// the global (no-op) providers. Deduplication is off, since every
// iteration delivers the same event.
func BenchmarkWebhookTelemetry(b *testing.B) {
	const secret = "whsec_benchmark_secret_0123456789"
	body := eventBody("evt_bench", contextsvc.EventContextUpdated)
	run := func(b *testing.B, opts ...contextsvc.WebhookOption) {
		opts = append(opts, contextsvc.WithWebhookClock(func() time.Time { return deliveredAt }), contextsvc.WithDeduper(nil))
		h := contextsvc.NewWebhookHandler(secret, func(context.Context, *contextsvc.Event) error { return nil }, opts...)
		r, err := http.NewRequest(http.MethodPost, "/webhooks", nil)
		if err != nil {
			b.Fatal(err)
		}
		r.Header.Set(contextsvc.DefaultSignatureHeader, contextsvc.Sign(body, secret))
		r.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
		r.Header.Set("X-Service-Delivery", "dlv_bench")
		r.Header.Set("X-Service-Delivery-Attempt", "1")
		r.ContentLength = int64(len(body))
		rd := bytes.NewReader(body)
		w := &discardWriter{h: make(http.Header)}
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for b.Loop() {
			rd.Reset(body)
			r.Body = io.NopCloser(rd)
			clear(w.h)
			w.code = 0
			h.ServeHTTP(w, r)
			if w.code != http.StatusOK {
				b.Fatalf("status %d", w.code)
			}
		}
	}
	b.Run("handler", func(b *testing.B) { run(b) })
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
