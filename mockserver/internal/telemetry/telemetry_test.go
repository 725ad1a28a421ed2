package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func TestNewOff(t *testing.T) {
	t.Parallel()
	tel, err := New(Config{})
	if tel != nil || err != nil {
		t.Errorf("New with no provider: %v, %v; want nil, nil", tel, err)
	}
}

func TestRoute(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ pattern, want string }{
		{"", ""},
		{"/", ""},
		{"/v1/contexts/{id}", "/v1/contexts/{id}"},
		{"GET /_mock/ui/{$}", "/_mock/ui/{$}"},
	} {
		r := httptest.NewRequest("GET", "/x", nil)
		r.Pattern = tt.pattern
		if got := Route(r); got != tt.want {
			t.Errorf("Route(%q) = %q, want %q", tt.pattern, got, tt.want)
		}
	}
}

func TestErrorType(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&url.Error{Op: "Post", URL: "http://x", Err: context.DeadlineExceeded}, "timeout"},
		{&url.Error{Op: "Post", URL: "http://x", Err: context.Canceled}, "canceled"},
		{&url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Err: os.ErrNotExist}}, "*net.OpError"},
		{&url.Error{Op: "Post", URL: "http://x", Err: os.ErrDeadlineExceeded}, "timeout"},
		{fmt.Errorf("wrapped: %w", errors.New("x")), "*fmt.wrapError"},
	} {
		if got := errorType(tt.err); got != tt.want {
			t.Errorf("errorType(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// TestAttemptURLRedacted: url.full never holds a receiver URL's password
// or query values, and the traceparent goes on the request.
func TestAttemptURLRedacted(t *testing.T) {
	t.Parallel()
	exp := tracetest.NewInMemoryExporter()
	tel, err := New(Config{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))})
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("POST", "https://bot:s3cret@hooks.example.com/in?token=abc", nil)
	a, id := tel.StartAttempt(nil, req, AttemptInfo{DeliveryID: "dlv_1", EventID: "evt_1", Number: 2})
	tel.EndAttempt(a, http.StatusOK, nil, "")
	spans := exp.GetSpans()
	if len(spans) != 1 || len(id) != 32 || spans[0].SpanContext.TraceID().String() != id {
		t.Fatalf("spans %d, trace id %q", len(spans), id)
	}
	attrs := attribute.NewSet(spans[0].Attributes...)
	if u, _ := attrs.Value("url.full"); u.AsString() != "https://xxxxx@hooks.example.com/in?token=xxxxx" {
		t.Errorf("url.full %q", u.AsString())
	}
	if req.URL.String() != "https://bot:s3cret@hooks.example.com/in?token=abc" {
		t.Errorf("the request's URL became %s", req.URL)
	}
	if p, _ := attrs.Value("server.port"); p.AsInt64() != 443 {
		t.Errorf("server.port %v", p.AsInt64())
	}
	if r, _ := attrs.Value("http.request.resend_count"); r.AsInt64() != 1 {
		t.Errorf("resend count %v", r.AsInt64())
	}
	want := "00-" + id + "-" + spans[0].SpanContext.SpanID().String() + "-01"
	if got := req.Header.Get("Traceparent"); got != want || spans[0].SpanKind != trace.SpanKindClient {
		t.Errorf("traceparent %q, want %q (kind %v)", got, want, spans[0].SpanKind)
	}
}

// TestAttemptURLFull: url.full masks a receiver URL's user info and every
// query value, whatever the parameter's name and however it is escaped,
// and keeps the rest.
func TestAttemptURLFull(t *testing.T) {
	t.Parallel()
	tests := []struct{ url, want string }{
		{"http://127.0.0.1:9/hook", "http://127.0.0.1:9/hook"},
		{"https://hooks.example.com/in?%53ignature=abc", "https://hooks.example.com/in?%53ignature=xxxxx"},
		{"https://hooks.example.com/in?Signature=abc&code=az-func-key", "https://hooks.example.com/in?Signature=xxxxx&code=xxxxx"},
		{"https://u@hooks.example.com/in", "https://xxxxx@hooks.example.com/in"},
	}
	for _, tt := range tests {
		exp := tracetest.NewInMemoryExporter()
		tel, err := New(Config{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))})
		if err != nil {
			t.Fatal(err)
		}
		a, _ := tel.StartAttempt(nil, httptest.NewRequest("POST", tt.url, nil), AttemptInfo{Number: 1})
		tel.EndAttempt(a, http.StatusOK, nil, "")
		attrs := attribute.NewSet(exp.GetSpans()[0].Attributes...)
		if u, _ := attrs.Value("url.full"); u.AsString() != tt.want {
			t.Errorf("url.full of %s = %q, want %q", tt.url, u.AsString(), tt.want)
		}
	}
}

// startSampler samples every span and keeps the attributes a sampler is
// shown as each starts, as text.
type startSampler struct {
	mu     sync.Mutex
	starts []map[string]string
}

func (s *startSampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	attrs := map[string]string{}
	for _, kv := range p.Attributes {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	s.mu.Lock()
	s.starts = append(s.starts, attrs)
	s.mu.Unlock()
	return sdktrace.AlwaysSample().ShouldSample(p)
}

func (s *startSampler) Description() string { return "startSampler" }

// TestSpansStartWithWhatIsKnown: a sampler sees, as a request's span
// starts, what the HTTP conventions name for sampling (the method,
// url.path, url.scheme, the server, the client, the user agent) and the
// rest known of the request; as a delivery attempt's starts, its method,
// server, url.full (masked) and the delivery's ids. The outcome (status,
// route, error) comes as each ends.
func TestSpansStartWithWhatIsKnown(t *testing.T) {
	t.Parallel()
	sampler := &startSampler{}
	exp := tracetest.NewInMemoryExporter()
	tel, err := New(Config{TracerProvider: sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp), sdktrace.WithSampler(sampler))})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "http://127.0.0.1:8080/v1/contexts/ctx_1", nil)
	r.Header.Set("User-Agent", "contextsvc-go/1.0")
	r.RemoteAddr = "192.0.2.7:40000"
	r, q := tel.StartRequest(r, "req_1")
	r.Pattern = "GET /v1/contexts/{id}"
	tel.End(q, r, http.StatusOK, "")

	d := httptest.NewRequest("POST", "https://bot:s3cret@hooks.example.com/in?token=abc", nil)
	a, _ := tel.StartAttempt(nil, d, AttemptInfo{DeliveryID: "dlv_1", EventID: "evt_1", EventType: "context.created", WebhookID: "wh_1", Number: 2})
	tel.EndAttempt(a, http.StatusOK, nil, "")

	want := []map[string]string{
		{
			"http.request.method": "GET", "url.path": "/v1/contexts/ctx_1", "url.scheme": "http",
			"server.address": "127.0.0.1", "server.port": "8080", "client.address": "192.0.2.7",
			"user_agent.original": "contextsvc-go/1.0", "network.protocol.version": "1.1", "contextsvc.request.id": "req_1",
		},
		{
			"http.request.method": "POST", "server.address": "hooks.example.com", "server.port": "443",
			"url.full": "https://xxxxx@hooks.example.com/in?token=xxxxx", "http.request.resend_count": "1",
			"messaging.message.id": "evt_1", "contextsvc.event.type": "context.created", "contextsvc.delivery.id": "dlv_1",
			"contextsvc.delivery.attempt": "2", "contextsvc.webhook.id": "wh_1",
		},
	}
	sampler.mu.Lock()
	got := sampler.starts
	sampler.mu.Unlock()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what the sampler saw as each span started (-want +got):\n%s", diff)
	}
	// Both ended with their outcome.
	for _, s := range exp.GetSpans() {
		set := attribute.NewSet(s.Attributes...)
		if v, ok := set.Value("http.response.status_code"); !ok || v.AsInt64() != 200 {
			t.Errorf("span %q ended without its status: %v", s.Name, s.Attributes)
		}
	}
}
