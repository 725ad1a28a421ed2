package mockcmd

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/syncbuf"
	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	collectormetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP/HTTP collector: it decodes the protobuf
// requests the exporters send and keeps them.
type otlpReceiver struct {
	mu      sync.Mutex
	traces  []*collectortrace.ExportTraceServiceRequest
	metrics []*collectormetrics.ExportMetricsServiceRequest
	bad     []string
}

func (o *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	o.mu.Lock()
	defer o.mu.Unlock()
	if err != nil || r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/x-protobuf" {
		o.bad = append(o.bad, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var resp proto.Message
	switch r.URL.Path {
	case "/v1/traces":
		req := &collectortrace.ExportTraceServiceRequest{}
		if err := proto.Unmarshal(body, req); err != nil {
			o.bad = append(o.bad, "traces: "+err.Error())
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		o.traces = append(o.traces, req)
		resp = &collectortrace.ExportTraceServiceResponse{}
	case "/v1/metrics":
		req := &collectormetrics.ExportMetricsServiceRequest{}
		if err := proto.Unmarshal(body, req); err != nil {
			o.bad = append(o.bad, "metrics: "+err.Error())
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		o.metrics = append(o.metrics, req)
		resp = &collectormetrics.ExportMetricsServiceResponse{}
	default:
		o.bad = append(o.bad, "path "+r.URL.Path)
		w.WriteHeader(http.StatusNotFound)
		return
	}
	b, _ := proto.Marshal(resp)
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

func attrString(attrs []*commonpb.KeyValue, key string) string {
	for _, kv := range attrs {
		if kv.Key == key {
			return kv.Value.GetStringValue()
		}
	}
	return ""
}

// TestRunExportsOTLP runs the command with OTEL_EXPORTER_OTLP_ENDPOINT
// and OTEL_SERVICE_NAME set (no -otel: the environment turns it on)
// against a collector in the test, makes a call that fires an event
// delivered to a receiver, stops the command, and checks what the
// collector decoded: the service's name, the request's server span
// continuing the caller's trace, the event's span, the delivery attempt's
// span whose traceparent the receiver got, and the request metric.
func TestRunExportsOTLP(t *testing.T) {
	t.Parallel()
	collector := &otlpReceiver{}
	cs := httptest.NewServer(collector)
	defer cs.Close()
	traceparents := make(chan string, 1)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case traceparents <- r.Header.Get("Traceparent"):
		default:
		}
	}))
	defer receiver.Close()

	env := map[string]string{envEndpoint: cs.URL, envServiceName: "mock-under-test"}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr syncbuf.Buffer
	done := make(chan int, 1)
	go func() {
		done <- runEnv(ctx, []string{"-addr", "127.0.0.1:0"}, func(k string) string { return env[k] }, strings.NewReader(""), pw, &stderr)
		pw.Close()
	}()
	base, key := readReady(t, pr)
	go io.Copy(io.Discard, pr)
	client, err := contextsvc.NewClient(key, contextsvc.WithBaseURL(base))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Webhooks.Register(ctx, &contextsvc.RegisterWebhookRequest{URL: receiver.URL, Secret: "whsec_otlp_test",
		Events: []contextsvc.EventType{contextsvc.EventContextCreated}}); err != nil {
		t.Fatal(err)
	}
	caller := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{0xca, 0x11}, SpanID: trace.SpanID{0xe4}, TraceFlags: trace.FlagsSampled})
	// A caller's request carrying its traceparent (as a client with
	// contextsvcotel's middleware sends it).
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/contexts", strings.NewReader(`{"name":"Traced"}`))
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(ctx, caller), propagation.HeaderCarrier(req.Header))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	tp := <-traceparents
	cancel()
	if code := <-done; code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "OpenTelemetry: exporting traces and metrics over OTLP/HTTP") {
		t.Errorf("the log does not say where telemetry goes:\n%s", stderr.String())
	}

	collector.mu.Lock()
	defer collector.mu.Unlock()
	if len(collector.bad) > 0 {
		t.Errorf("the collector refused: %q", collector.bad)
	}
	spans := map[string][]*tracepb.Span{}
	for _, req := range collector.traces {
		for _, rs := range req.ResourceSpans {
			if got := attrString(rs.Resource.GetAttributes(), "service.name"); got != "mock-under-test" {
				t.Errorf("service.name %q, want mock-under-test", got)
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					spans[s.Name] = append(spans[s.Name], s)
				}
			}
		}
	}
	var continued, attempt *tracepb.Span
	for _, s := range spans["POST /v1/contexts"] {
		if s.Kind != tracepb.Span_SPAN_KIND_SERVER || attrString(s.Attributes, "http.route") != "/v1/contexts" {
			t.Errorf("span %q: kind %v, route %q", s.Name, s.Kind, attrString(s.Attributes, "http.route"))
		}
		if trace.TraceID(s.TraceId) == caller.TraceID() {
			continued = s
		}
	}
	if continued == nil || trace.SpanID(continued.ParentSpanId) != caller.SpanID() {
		t.Fatalf("no server span continues the caller's trace; spans: %v", keys(spans))
	}
	for _, s := range spans["POST"] {
		if trace.TraceID(s.TraceId) == caller.TraceID() {
			attempt = s
		}
	}
	if attempt == nil || attempt.Kind != tracepb.Span_SPAN_KIND_CLIENT {
		t.Fatalf("no delivery attempt span in the caller's trace; spans: %v", keys(spans))
	}
	wantTP := "00-" + trace.TraceID(attempt.TraceId).String() + "-" + trace.SpanID(attempt.SpanId).String() + "-01"
	if tp != wantTP {
		t.Errorf("the receiver got traceparent %q, want the attempt's %q", tp, wantTP)
	}
	if ev := spans["create context.created"]; len(ev) != 1 || trace.TraceID(ev[0].TraceId) != caller.TraceID() ||
		!slices.Equal(ev[0].SpanId, attempt.ParentSpanId) || !slices.Equal(ev[0].ParentSpanId, continued.SpanId) {
		t.Errorf("the event's span is not between the request's and the attempt's: %v", ev)
	}
	var metricNames []string
	for _, req := range collector.metrics {
		for _, rm := range req.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					metricNames = append(metricNames, m.Name)
				}
			}
		}
	}
	for _, want := range []string{"http.server.request.duration", "http.client.request.duration", "contextsvc.mock.events"} {
		if !strings.Contains(strings.Join(metricNames, " "), want) {
			t.Errorf("metric %s not exported; got %v", want, metricNames)
		}
	}
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestOtelWanted: -otel decides when given; otherwise any OTLP endpoint
// in the environment turns exporting on. A bad endpoint is an error
// naming the variable, its secrets hidden.
func TestOtelWanted(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		env  map[string]string
		want bool
	}{
		{nil, nil, false},
		{[]string{"-otel"}, nil, true},
		{nil, map[string]string{envEndpoint: "http://collector:4318"}, true},
		{nil, map[string]string{envTracesEndpoint: "http://collector:4318/v1/traces"}, true},
		{[]string{"-otel=false"}, map[string]string{envEndpoint: "http://collector:4318"}, false},
	}
	for _, tt := range tests {
		st, err := parseFlags(tt.args, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		if got := otelWanted(st, func(k string) string { return tt.env[k] }); got != tt.want {
			t.Errorf("%q %v: %v, want %v", tt.args, tt.env, got, tt.want)
		}
	}
	endpoints := []struct {
		env           map[string]string
		traces, error string
	}{
		{nil, "http://localhost:4318/v1/traces", ""},
		{map[string]string{envEndpoint: "https://c.example:4318/"}, "https://c.example:4318/v1/traces", ""},
		{map[string]string{envEndpoint: "https://c.example", envTracesEndpoint: "https://t.example/in"}, "https://t.example/in", ""},
		{map[string]string{envEndpoint: "collector:4318?token=hunter2"}, "", "OTEL_EXPORTER_OTLP_ENDPOINT: collector:4318?token=xxxxx is not an http or https URL"},
	}
	for _, e := range endpoints {
		got, err := otelEndpoint(func(k string) string { return e.env[k] }, envTracesEndpoint, "/v1/traces")
		var msg string
		if err != nil {
			msg = err.Error()
		}
		if diff := cmp.Diff([]string{e.traces, e.error}, []string{got, msg}); diff != "" {
			t.Errorf("%v (-want +got):\n%s", e.env, diff)
		}
	}
}
