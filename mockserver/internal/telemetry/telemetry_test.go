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
	"testing"

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
