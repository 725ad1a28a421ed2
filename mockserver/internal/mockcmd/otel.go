package mockcmd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver"
	"github.com/contextsvc/contextsvc-go/redact"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// This file is the command's OpenTelemetry: the exporters -otel (or the
// standard environment) turns on, and their shutdown.

// The environment variables the command reads itself; the exporters and
// the SDK read the others of the specification (OTEL_EXPORTER_OTLP_HEADERS,
// _TIMEOUT, _COMPRESSION, OTEL_RESOURCE_ATTRIBUTES,
// OTEL_METRIC_EXPORT_INTERVAL…) from the process's environment.
const (
	envEndpoint        = "OTEL_EXPORTER_OTLP_ENDPOINT"
	envTracesEndpoint  = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	envMetricsEndpoint = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT"
	envServiceName     = "OTEL_SERVICE_NAME"
)

// defaultServiceName is service.name without OTEL_SERVICE_NAME.
const defaultServiceName = "contextsvc-mock"

// defaultEndpoint is where the exporters send without an endpoint in the
// environment: a collector on this machine, as the specification says.
const defaultEndpoint = "http://localhost:4318"

// otelWanted reports whether to export: -otel when given (either way),
// otherwise whether the environment names an OTLP endpoint.
func otelWanted(st *settings, getenv func(string) string) bool {
	if st.otelSet {
		return st.otel
	}
	return getenv(envEndpoint) != "" || getenv(envTracesEndpoint) != "" || getenv(envMetricsEndpoint) != ""
}

// otelEndpoint is the URL a signal is sent to: its own variable's as it
// is, or the common endpoint's with the signal's path (/v1/traces,
// /v1/metrics), as the specification says.
func otelEndpoint(getenv func(string) string, own, path string) (string, error) {
	raw := getenv(own)
	name := own
	if raw == "" {
		base := getenv(envEndpoint)
		name = envEndpoint
		if base == "" {
			base = defaultEndpoint
		}
		raw = strings.TrimSuffix(base, "/") + path
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("%s: %s is not an http or https URL", name, redact.URL(raw))
	}
	return raw, nil
}

// startOtel makes the tracer and meter providers that export over
// OTLP/HTTP, and returns the server's options for them and what flushes
// and stops them at shutdown. Exporting starts lazily: an unreachable
// collector costs retries in the background, never the start.
func startOtel(ctx context.Context, getenv func(string) string, logger *slog.Logger) ([]mockserver.Option, func(context.Context) error, error) {
	traces, err := otelEndpoint(getenv, envTracesEndpoint, "/v1/traces")
	if err != nil {
		return nil, nil, err
	}
	metrics, err := otelEndpoint(getenv, envMetricsEndpoint, "/v1/metrics")
	if err != nil {
		return nil, nil, err
	}
	name := getenv(envServiceName)
	if name == "" {
		name = defaultServiceName
	}
	// The environment's OTEL_RESOURCE_ATTRIBUTES first, then the name,
	// which OTEL_SERVICE_NAME sets (it wins over the attributes' one).
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK(), resource.WithAttributes(
		semconv.ServiceName(name), semconv.ServiceVersion(strings.TrimPrefix(contextsvc.DefaultUserAgent, "contextsvc-go/"))))
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, nil, fmt.Errorf("OpenTelemetry resource: %w", err)
	}
	te, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(traces))
	if err != nil {
		return nil, nil, fmt.Errorf("OTLP trace exporter: %w", err)
	}
	me, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(metrics))
	if err != nil {
		_ = te.Shutdown(ctx)
		return nil, nil, fmt.Errorf("OTLP metric exporter: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(te), sdktrace.WithResource(res))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(me)), sdkmetric.WithResource(res))
	logger.Info("OpenTelemetry: exporting traces and metrics over OTLP/HTTP", "traces", redact.URL(traces), "metrics", redact.URL(metrics),
		"service", name)
	shutdown := func(ctx context.Context) error {
		// Each flushes what it holds, then stops.
		return errors.Join(tp.Shutdown(ctx), mp.Shutdown(ctx))
	}
	return []mockserver.Option{mockserver.WithTracerProvider(tp), mockserver.WithMeterProvider(mp)}, shutdown, nil
}
