package mockserver

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/contextsvcotel"
)

// otelRig is an SDK tracer provider exporting into memory and a meter
// provider read by hand, shared by the client, the mock and the receiver
// of a test, as one process's would be.
type otelRig struct {
	spans  *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newOtelRig(t *testing.T) *otelRig {
	t.Helper()
	r := &otelRig{spans: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader()}
	r.tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(r.spans))
	r.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r.reader))
	t.Cleanup(func() {
		_ = r.tp.Shutdown(context.Background())
		_ = r.mp.Shutdown(context.Background())
	})
	return r
}

// shownAttrs are the attributes a span tree line shows, with their values;
// ids that change from run to run are shown as "*".
var shownAttrs = []attribute.Key{
	"http.request.method", "http.route", "http.response.status_code", "http.request.resend_count", "error.type",
	"messaging.operation.type", "contextsvc.event.type", "contextsvc.delivery.attempt", "contextsvc.webhook.outcome",
	"contextsvc.event.deliveries", "contextsvc.attempts",
}

// tree renders the spans of one trace as an indented tree, one line per
// span: name, kind and shownAttrs; siblings sorted by their text, so that
// concurrent deliveries render the same each run. It fails the test if a
// span's parent is not in the trace (the root's excepted).
func tree(t *testing.T, spans tracetest.SpanStubs, traceID trace.TraceID) string {
	t.Helper()
	children := map[trace.SpanID][]tracetest.SpanStub{}
	ids := map[trace.SpanID]bool{}
	for _, s := range spans {
		if s.SpanContext.TraceID() == traceID {
			ids[s.SpanContext.SpanID()] = true
		}
	}
	var roots []tracetest.SpanStub
	for _, s := range spans {
		if s.SpanContext.TraceID() != traceID {
			continue
		}
		if p := s.Parent.SpanID(); ids[p] {
			children[p] = append(children[p], s)
		} else {
			roots = append(roots, s)
		}
	}
	if len(roots) != 1 {
		t.Errorf("trace %s has %d roots, want 1", traceID, len(roots))
	}
	line := func(s tracetest.SpanStub) string {
		attrs := map[attribute.Key]string{}
		for _, kv := range s.Attributes {
			attrs[kv.Key] = kv.Value.String()
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s (%s)", s.Name, s.SpanKind)
		for _, k := range shownAttrs {
			if v, ok := attrs[k]; ok {
				fmt.Fprintf(&b, " %s=%s", k, v)
			}
		}
		return b.String()
	}
	var b strings.Builder
	var walk func(ss []tracetest.SpanStub, depth int)
	walk = func(ss []tracetest.SpanStub, depth int) {
		type item struct {
			text string
			id   trace.SpanID
		}
		items := make([]item, len(ss))
		for i, s := range ss {
			items[i] = item{line(s), s.SpanContext.SpanID()}
		}
		slices.SortStableFunc(items, func(a, b item) int { return strings.Compare(a.text, b.text) })
		for _, it := range items {
			b.WriteString(strings.Repeat("  ", depth) + it.text + "\n")
			walk(children[it.id], depth+1)
		}
	}
	walk(roots, 0)
	return b.String()
}

// TestTelemetryEndToEnd: a client, the mock and a verifying receiver, all
// traced into one in-memory exporter, make one trace: the client's call
// and its two attempts (a 503 fault, then the answer), the mock's handling
// of each, the event the second fired, and every delivery attempt under it
// with the receiver's handling: one receiver fails the first attempt and
// takes the retry, another is unreachable and its delivery fails after
// every attempt of the schedule, run on the fake clock.
func TestTelemetryEndToEnd(t *testing.T) {
	t.Parallel()
	rig := newOtelRig(t)
	fc := NewFakeClock(time.Now())
	ts := NewTestServer(t, WithClock(fc), WithRetrySchedule([]time.Duration{time.Minute, 5 * time.Minute}),
		WithTracerProvider(rig.tp), WithMeterProvider(rig.mp))

	// The receiver fails its first delivery and handles the next.
	var calls atomic.Int32
	hookOpt, err := contextsvcotel.NewWebhookOption(contextsvcotel.WithTracerProvider(rig.tp), contextsvcotel.WithMeterProvider(rig.mp))
	if err != nil {
		t.Fatal(err)
	}
	handler, err := contextsvc.NewWebhookHandler("whsec_e2e_secret", func(context.Context, *contextsvc.Event) error {
		if calls.Add(1) == 1 {
			return errors.New("not yet")
		}
		return nil
	}, hookOpt)
	if err != nil {
		t.Fatal(err)
	}
	receiver := httptest.NewServer(handler)
	defer receiver.Close()
	// An address nothing listens on: a listener opened and closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/hook?token=secret-token"
	ln.Close()

	mw, err := contextsvcotel.NewMiddleware(contextsvcotel.WithTracerProvider(rig.tp), contextsvcotel.WithMeterProvider(rig.mp))
	if err != nil {
		t.Fatal(err)
	}
	client, err := contextsvc.NewClient(ts.APIKey, contextsvc.WithBaseURL(ts.URL), contextsvc.WithMiddleware(mw),
		contextsvc.WithRetryWait(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	for _, u := range []string{receiver.URL + "/hook", dead} {
		if _, err := client.Webhooks.Register(ctx, &contextsvc.RegisterWebhookRequest{URL: u, Secret: "whsec_e2e_secret",
			Events: []contextsvc.EventType{contextsvc.EventContextCreated}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := ts.AddFault(Fault{Method: http.MethodPost, Path: "/v1/contexts", Status: http.StatusServiceUnavailable}); err != nil {
		t.Fatal(err)
	}

	ctx, root := rig.tp.Tracer("test").Start(ctx, "test")
	if _, err := client.Contexts.Create(ctx, &contextsvc.CreateContextRequest{Name: "Traced"}); err != nil {
		t.Fatal(err)
	}
	root.End()
	traceID := root.SpanContext().TraceID()

	// The first attempts, then each retry on the fake clock.
	if err := ts.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	fc.Advance(time.Minute)
	fc.Advance(5 * time.Minute)
	// Every handler has returned, and so every span has ended, once the
	// servers are closed.
	ts.HTTP.Close()
	receiver.Close()

	dls := ts.Deliveries(DeliveryFilter{})
	if len(dls) != 2 {
		t.Fatalf("%d deliveries, want 2", len(dls))
	}
	for _, d := range dls {
		for _, a := range d.Attempts {
			if a.TraceID != traceID.String() {
				t.Errorf("delivery to %s, attempt %d: trace id %s, want %s", d.URL, a.Number, a.TraceID, traceID)
			}
		}
	}

	want := `test (internal)
  contextsvc.contexts.create (internal) contextsvc.attempts=2
    POST /v1/contexts (client) http.request.method=POST http.response.status_code=201 http.request.resend_count=1
      POST /v1/contexts (server) http.request.method=POST http.route=/v1/contexts http.response.status_code=201
        create context.created (producer) messaging.operation.type=create contextsvc.event.type=context.created contextsvc.event.deliveries=2
          POST (client) http.request.method=POST error.type=*net.OpError contextsvc.event.type=context.created contextsvc.delivery.attempt=1
          POST (client) http.request.method=POST http.request.resend_count=1 error.type=*net.OpError contextsvc.event.type=context.created contextsvc.delivery.attempt=2
          POST (client) http.request.method=POST http.request.resend_count=2 error.type=*net.OpError contextsvc.event.type=context.created contextsvc.delivery.attempt=3
          POST (client) http.request.method=POST http.response.status_code=200 http.request.resend_count=1 contextsvc.event.type=context.created contextsvc.delivery.attempt=2
            process context.created (consumer) http.response.status_code=200 messaging.operation.type=process contextsvc.event.type=context.created contextsvc.delivery.attempt=2 contextsvc.webhook.outcome=handled
          POST (client) http.request.method=POST http.response.status_code=500 error.type=500 contextsvc.event.type=context.created contextsvc.delivery.attempt=1
            process context.created (consumer) http.response.status_code=500 error.type=handler_error messaging.operation.type=process contextsvc.event.type=context.created contextsvc.delivery.attempt=1 contextsvc.webhook.outcome=handler_error
        create context.version.created (producer) messaging.operation.type=create contextsvc.event.type=context.version.created contextsvc.event.deliveries=0
    POST /v1/contexts (client) http.request.method=POST http.response.status_code=503 error.type=503
      POST /v1/contexts (server) http.request.method=POST http.route=/v1/contexts http.response.status_code=503 error.type=503
`
	spans := rig.spans.GetSpans()
	if diff := cmp.Diff(want, tree(t, spans, traceID)); diff != "" {
		t.Errorf("the trace (-want +got):\n%s", diff)
	}

	// What the tree does not show: the mock's spans' other attributes,
	// and that no secret reaches a span.
	for _, s := range spans {
		for _, kv := range s.Attributes {
			if v := kv.Value.String(); strings.Contains(v, "secret-token") || strings.Contains(v, ts.APIKey) || strings.Contains(v, "whsec_") {
				t.Errorf("span %q: attribute %s holds a secret: %s", s.Name, kv.Key, v)
			}
		}
		if s.InstrumentationScope.Name != "github.com/contextsvc/contextsvc-go/mockserver" {
			continue
		}
		attrs := attribute.NewSet(s.Attributes...)
		switch s.SpanKind {
		case trace.SpanKindServer:
			for _, k := range []attribute.Key{"url.path", "url.scheme", "server.address", "server.port", "client.address", "user_agent.original", "contextsvc.request.id"} {
				if !attrs.HasValue(k) {
					t.Errorf("server span %q has no %s", s.Name, k)
				}
			}
		case trace.SpanKindClient:
			for _, k := range []attribute.Key{"server.address", "server.port", "url.full", "messaging.message.id", "contextsvc.delivery.id", "contextsvc.webhook.id"} {
				if !attrs.HasValue(k) {
					t.Errorf("attempt span %q has no %s", s.Name, k)
				}
			}
			if u, _ := attrs.Value("url.full"); strings.Contains(u.AsString(), "token=") && !strings.Contains(u.AsString(), "token=xxxxx") {
				t.Errorf("attempt span: url.full %s is not redacted", u.AsString())
			}
		}
	}

	// The metrics, by route, status and event type.
	var rm metricdata.ResourceMetrics
	if err := rig.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != "github.com/contextsvc/contextsvc-go/mockserver" {
			continue
		}
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					route, _ := p.Attributes.Value("http.route")
					status, _ := p.Attributes.Value("http.response.status_code")
					errType, _ := p.Attributes.Value("error.type")
					got[fmt.Sprintf("%s route=%s status=%d error=%s", m.Name, route.AsString(), status.AsInt64(), errType.AsString())] += int64(p.Count)
				}
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					typ, _ := p.Attributes.Value("contextsvc.event.type")
					got[fmt.Sprintf("%s type=%s", m.Name, typ.AsString())] += p.Value
				}
			}
		}
	}
	wantMetrics := map[string]int64{
		"http.server.request.duration route=/v1/webhooks status=201 error=":    2,
		"http.server.request.duration route=/v1/contexts status=503 error=503": 1,
		"http.server.request.duration route=/v1/contexts status=201 error=":    1,
		"http.client.request.duration route= status=500 error=500":             1,
		"http.client.request.duration route= status=200 error=":                1,
		"http.client.request.duration route= status=0 error=*net.OpError":      3,
		"contextsvc.mock.events type=context.created":                          1,
		"contextsvc.mock.events type=context.version.created":                  1,
	}
	if diff := cmp.Diff(wantMetrics, got); diff != "" {
		t.Errorf("the mock's metrics (-want +got):\n%s", diff)
	}
}

// TestTelemetryRequests: the server span of a request is named by its
// method and route template (never an id), continues the traceparent the
// request carries, and a request that matches no route is named by its
// method alone.
func TestTelemetryRequests(t *testing.T) {
	t.Parallel()
	rig := newOtelRig(t)
	s := New(WithTracerProvider(rig.tp), WithKey(Key{Token: "sk_test_tel", Plan: PlanUnlimited}))
	ctx := context.Background()
	req := httptest.NewRequest("POST", "/v1/contexts", strings.NewReader(`{"name":"Doc"}`))
	req.Header.Set("Authorization", "Bearer sk_test_tel")
	s.ServeHTTP(httptest.NewRecorder(), req)
	created := s.Contexts(s.DefaultKey().Account)[0]
	rig.spans.Reset()
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	tests := []struct {
		method, path string
		traceparent  bool
		name         string
		status       int
	}{
		{"GET", "/v1/contexts/" + created.ID, true, "GET /v1/contexts/{id}", 200},
		{"GET", "/v1/contexts/" + created.ID + "/versions", false, "GET /v1/contexts/{id}/versions", 200},
		{"GET", "/v1/nowhere", false, "GET", 404},
		{"DELETE", "/v1/webhooks", false, "DELETE /v1/webhooks", 405},
		{"GET", "/_mock/deliveries/dlv_x", false, "GET /_mock/deliveries/{id}", 404},
		{"GET", "/_mock/summary", true, "GET /_mock/summary", 200},
		{"BREW", "/v1/contexts", false, "HTTP /v1/contexts", 405},
	}
	for _, tt := range tests {
		req := httptest.NewRequest(tt.method, tt.path, nil)
		req.Header.Set("Authorization", "Bearer sk_test_tel")
		req.Host = "127.0.0.1" // the admin routes answer loopback hosts
		if tt.traceparent {
			propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(ctx, parent), propagation.HeaderCarrier(req.Header))
		}
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != tt.status {
			t.Errorf("%s %s: status %d, want %d", tt.method, tt.path, rec.Code, tt.status)
		}
		spans := rig.spans.GetSpans()
		rig.spans.Reset()
		if len(spans) != 1 {
			t.Errorf("%s %s: %d spans, want 1", tt.method, tt.path, len(spans))
			continue
		}
		sp := spans[0]
		if sp.Name != tt.name || sp.SpanKind != trace.SpanKindServer {
			t.Errorf("%s %s: span %q (%s), want %q (server)", tt.method, tt.path, sp.Name, sp.SpanKind, tt.name)
		}
		if got := sp.Parent.TraceID() == parent.TraceID() && sp.Parent.SpanID() == parent.SpanID(); got != tt.traceparent {
			t.Errorf("%s %s: continues the traceparent %v, want %v", tt.method, tt.path, got, tt.traceparent)
		}
		if tt.status >= 500 != (sp.Status.Code.String() == "Error") {
			t.Errorf("%s %s: status %v", tt.method, tt.path, sp.Status)
		}
	}
}

// TestTelemetryOptions: the options refuse nil, and a server given none
// traces nothing, attempts included.
func TestTelemetryOptions(t *testing.T) {
	t.Parallel()
	for name, o := range map[string]Option{
		"WithTracerProvider": WithTracerProvider(nil),
		"WithMeterProvider":  WithMeterProvider(nil),
		"WithPropagator":     WithPropagator(nil),
	} {
		if _, err := Open(o); !errors.Is(err, ErrInvalidOption) || !strings.Contains(err.Error(), name+"(nil)") {
			t.Errorf("%s(nil): %v, want ErrInvalidOption naming it", name, err)
		}
	}
	s := New()
	if s.svc.Tel != nil {
		t.Error("a server without providers has telemetry")
	}
}

// TestTelemetryTraceIDSaved: a pending delivery's attempts keep their trace
// ids through a state document, so the dashboard still finds their trace
// after a restart.
func TestTelemetryTraceIDSaved(t *testing.T) {
	t.Parallel()
	rig := newOtelRig(t)
	ts := NewTestServer(t, WithClock(NewFakeClock(dlvT0)), WithTracerProvider(rig.tp))
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	defer failing.Close()
	registerHook(t, ts, failing.URL, "whsec_saved", contextsvc.EventContextPublished)
	if _, err := ts.EmitEvent(t.Context(), "", contextsvc.EventContextPublished, []byte(`{"contextId":"ctx_1"}`)); err != nil {
		t.Fatal(err)
	}
	dl, err := ts.WaitForDelivery(t.Context(), func(d Delivery) bool { return len(d.Attempts) == 1 })
	if err != nil {
		t.Fatal(err)
	}
	var doc strings.Builder
	if err := ts.SaveState(&doc); err != nil {
		t.Fatal(err)
	}
	restored := New(WithClock(NewFakeClock(dlvT0)), WithKey(ts.DefaultKey()))
	defer restored.Close(context.Background())
	if err := restored.LoadState(strings.NewReader(doc.String())); err != nil {
		t.Fatal(err)
	}
	got, ok := restored.Delivery(dl.ID)
	if !ok || len(got.Attempts) != 1 || got.Attempts[0].TraceID == "" || got.Attempts[0].TraceID != dl.Attempts[0].TraceID {
		t.Errorf("restored %+v, want the attempt's trace id %s", got.Attempts, dl.Attempts[0].TraceID)
	}
}
