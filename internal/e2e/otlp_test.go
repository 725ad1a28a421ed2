package e2e_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/contextsvcotel"
	"github.com/contextsvc/contextsvc-go/mockserver"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// collector is an OTLP/HTTP trace collector: it decodes what an exporter
// sends and keeps the spans.
type collector struct {
	mu    sync.Mutex
	spans []*tracepb.Span
	bad   []string
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	req := &collectortrace.ExportTraceServiceRequest{}
	if err == nil {
		err = proto.Unmarshal(body, req)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil || r.URL.Path != "/v1/traces" {
		c.bad = append(c.bad, r.URL.Path)
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			c.spans = append(c.spans, ss.Spans...)
		}
	}
	b, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(b)
}

// TestExportedOverOTLP: a call, the mock's handling and delivery, and the
// receiver's handling, exported over OTLP/HTTP and decoded as a collector
// sees them. The call's span is internal, never a client span: the client
// spans are the HTTP attempts (the client's, and the mock's deliveries),
// each with url.full and a status; no span of kind client carries the
// operation.
func TestExportedOverOTLP(t *testing.T) {
	t.Parallel()
	col := &collector{}
	cs := httptest.NewServer(col)
	defer cs.Close()
	exp, err := otlptracehttp.New(t.Context(), otlptracehttp.WithEndpointURL(cs.URL+"/v1/traces"))
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))

	opt, err := contextsvcotel.NewWebhookOption(contextsvcotel.WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}
	handled := make(chan struct{}, 8)
	hook, err := contextsvc.NewWebhookHandler("whsec_otlp_test_secret", func(context.Context, *contextsvc.Event) error {
		handled <- struct{}{}
		return nil
	}, opt)
	if err != nil {
		t.Fatal(err)
	}
	receiver := httptest.NewServer(hook)
	defer receiver.Close()
	ts := mockserver.NewTestServer(t, mockserver.WithTracerProvider(tp))

	mw, err := contextsvcotel.NewMiddleware(contextsvcotel.WithTracerProvider(tp))
	if err != nil {
		t.Fatal(err)
	}
	client, err := contextsvc.NewClient(ts.APIKey, contextsvc.WithBaseURL(ts.URL), contextsvc.WithMiddleware(mw))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if _, err := client.Webhooks.Register(ctx, &contextsvc.RegisterWebhookRequest{URL: receiver.URL, Secret: "whsec_otlp_test_secret",
		Events: []contextsvc.EventType{contextsvc.EventContextCreated}}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Exported"}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-handled:
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	}
	if err := ts.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	receiver.Close() // every handler has returned: its span has ended
	shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tp.Shutdown(shutdown); err != nil { // flushes over OTLP
		t.Fatal(err)
	}

	col.mu.Lock()
	defer col.mu.Unlock()
	if len(col.bad) > 0 {
		t.Errorf("the collector refused %q", col.bad)
	}
	kinds := map[string][]tracepb.Span_SpanKind{}
	for _, s := range col.spans {
		kinds[s.Name] = append(kinds[s.Name], s.Kind)
		operation, full := false, false
		for _, kv := range s.Attributes {
			operation = operation || kv.Key == "contextsvc.operation"
			full = full || kv.Key == "url.full"
		}
		if s.Kind == tracepb.Span_SPAN_KIND_CLIENT && (operation || !full) {
			t.Errorf("client span %q: contextsvc.operation %v, url.full %v; a client span is an HTTP attempt", s.Name, operation, full)
		}
	}
	for name, want := range map[string]tracepb.Span_SpanKind{
		"contextsvc.webhooks.register": tracepb.Span_SPAN_KIND_INTERNAL,
		"contextsvc.contexts.create":   tracepb.Span_SPAN_KIND_INTERNAL,
		"POST /v1/contexts":            tracepb.Span_SPAN_KIND_CLIENT, // and the mock's server span
		"create context.created":       tracepb.Span_SPAN_KIND_PRODUCER,
		"POST":                         tracepb.Span_SPAN_KIND_CLIENT, // the delivery attempt
		"process context.created":      tracepb.Span_SPAN_KIND_CONSUMER,
	} {
		if !slices.Contains(kinds[name], want) {
			t.Errorf("span %q: kinds %v, want one %v", name, kinds[name], want)
		}
	}
	if got := kinds["POST /v1/contexts"]; !slices.Contains(got, tracepb.Span_SPAN_KIND_SERVER) {
		t.Errorf("POST /v1/contexts: kinds %v, want the mock's server span too", got)
	}
}
