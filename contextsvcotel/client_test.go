package contextsvcotel_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/contextsvcotel"
	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/time/rate"
)

const testBase = "https://api.example.test/v1"

// answer is a responder's answer: a status and a JSON body, or a transport
// error.
type answer struct {
	status int
	body   string
	header http.Header
	err    error
}

// service answers each request with the next answer (repeating the last)
// and keeps each request's traceparent header.
type service struct {
	mu           sync.Mutex
	answers      []answer
	traceparents []string
}

func (s *service) respond(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.traceparents = append(s.traceparents, r.Header.Get("Traceparent"))
	a := s.answers[min(len(s.traceparents), len(s.answers))-1]
	if a.err != nil {
		return nil, a.err
	}
	resp := httpmock.NewStringResponse(a.status, a.body)
	resp.Header.Set("Content-Type", "application/json")
	for k, v := range a.header {
		resp.Header[k] = v
	}
	return resp, nil
}

// newServiceClient returns a client of the service through mw, with the
// options given.
func newServiceClient(t *testing.T, svc *service, mw contextsvc.Middleware, opts ...contextsvc.Option) *contextsvc.Client {
	t.Helper()
	mt := httpmock.NewMockTransport()
	mt.RegisterNoResponder(svc.respond)
	client, err := contextsvc.NewClient("sk_test_otel_0123456789", append([]contextsvc.Option{
		contextsvc.WithBaseURL(testBase), contextsvc.WithHTTPClient(&http.Client{Transport: mt}), contextsvc.WithMiddleware(mw),
	}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// failingLimiter refuses every wait, as a shared limiter whose store is
// down would.
type failingLimiter struct{}

func (failingLimiter) Wait(context.Context) error { return errors.New("limiter store unavailable") }

// caller is the span the tests' calls run under.
var caller = trace.NewSpanContext(trace.SpanContextConfig{
	TraceID:    trace.TraceID{0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd, 0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c},
	SpanID:     trace.SpanID{0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31},
	TraceFlags: trace.FlagsSampled,
})

func getContext(ctx context.Context, c *contextsvc.Client) error {
	_, err := c.Contexts.Get(ctx, "ctx_1")
	return err
}

func do(method, path string) func(context.Context, *contextsvc.Client) error {
	return func(ctx context.Context, c *contextsvc.Client) error {
		req, err := c.NewRequest(ctx, method, path, nil)
		if err != nil {
			return err
		}
		_, err = c.Do(ctx, req, nil)
		return err
	}
}

// TestClientTelemetry makes calls on a fake clock through the middleware
// and checks every span (names, kinds, parents, attributes, events with
// their exact times, one trace id), the traceparent each attempt carried,
// and the metrics.
func TestClientTelemetry(t *testing.T) {
	t.Parallel()
	notFound := answer{status: 404, body: `{"error":{"type":"not_found","message":"no such context"}}`}
	ok := answer{status: 200, body: `{"id":"ctx_1","version":1}`}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	// Every attempt's span of a GET of /contexts/{id} has these.
	get := map[string]string{
		"http.request.method": "GET", "server.address": "api.example.test", "server.port": "443",
		"url.template": "/v1/contexts/{id}",
	}
	// The call's span has the service's attributes, none of HTTP's.
	call := map[string]string{"contextsvc.operation": "getContext"}
	const full = "https://api.example.test/v1/contexts/ctx_1"
	metricAttrs := "http.request.method=GET server.address=api.example.test server.port=443 url.template=/v1/contexts/{id}"
	tests := []struct {
		name    string
		opts    []contextsvc.Option
		answers []answer
		timeout time.Duration
		call    func(context.Context, *contextsvc.Client) error
		want    []spanView
		metrics map[string][]point // nil: not checked
	}{
		{
			name: "retried, paced by the limiter",
			// One token a second, none spare: the 0.4 s back-off leaves the
			// second attempt 0.6 s to wait for its token.
			opts:    []contextsvc.Option{contextsvc.WithLimiter(rate.NewLimiter(1, 1)), contextsvc.WithRetryWait(400*time.Millisecond, 400*time.Millisecond)},
			answers: []answer{{status: 503, body: `{}`}, ok},
			want: []spanView{
				{Name: "contextsvc.contexts.get", Kind: trace.SpanKindInternal, Parent: "caller",
					Attrs: with(call, "contextsvc.attempts", "2"),
					Events: []string{
						"contextsvc.retry.backoff +0s contextsvc.attempt=2 contextsvc.wait.duration=0.4",
						"contextsvc.limiter.wait +400ms contextsvc.attempt=2 contextsvc.wait.duration=0.6",
					},
					Status: "Unset"},
				{Name: "GET /v1/contexts/{id}", Kind: trace.SpanKindClient, Parent: "contextsvc.contexts.get",
					Attrs:  with(get, "url.full", full, "http.response.status_code", "503", "error.type", "503"),
					Status: "Error"},
				{Name: "GET /v1/contexts/{id}", Kind: trace.SpanKindClient, Parent: "contextsvc.contexts.get",
					Attrs:  with(get, "url.full", full, "http.response.status_code", "200", "http.request.resend_count", "1"),
					Status: "Unset"},
			},
			metrics: map[string][]point{
				"http.client.request.duration": {
					{Attrs: "error.type=503 http.request.method=GET http.response.status_code=503 server.address=api.example.test server.port=443 url.template=/v1/contexts/{id}", Count: 1},
					{Attrs: "http.request.method=GET http.response.status_code=200 server.address=api.example.test server.port=443 url.template=/v1/contexts/{id}", Count: 1},
				},
				"contextsvc.client.retries":               {{Attrs: metricAttrs, Sum: 1}},
				"contextsvc.client.limiter.wait.duration": {{Attrs: metricAttrs, Count: 2, Sum: 0.6}},
			},
		},
		{
			name:    "not found",
			answers: []answer{notFound},
			want: []spanView{
				{Name: "contextsvc.contexts.get", Kind: trace.SpanKindInternal, Parent: "caller",
					Attrs:  with(call, "contextsvc.attempts", "1", "error.type", "404"),
					Status: "Error: contextsvc: 404 not_found: no such context"},
				{Name: "GET /v1/contexts/{id}", Kind: trace.SpanKindClient, Parent: "contextsvc.contexts.get",
					Attrs:  with(get, "url.full", full, "http.response.status_code", "404", "error.type", "404"),
					Status: "Error"},
			},
		},
		{
			name:    "no connection",
			opts:    []contextsvc.Option{contextsvc.WithMaxRetries(0)},
			answers: []answer{{err: refused}},
			want: []spanView{
				{Name: "contextsvc.contexts.get", Kind: trace.SpanKindInternal, Parent: "caller",
					Attrs:  with(call, "contextsvc.attempts", "1", "error.type", "*net.OpError"),
					Status: "Error: contextsvc: GET /contexts/ctx_1: dial tcp: connection refused"},
				{Name: "GET /v1/contexts/{id}", Kind: trace.SpanKindClient, Parent: "contextsvc.contexts.get",
					Attrs:  with(get, "url.full", full, "error.type", "*net.OpError"),
					Status: "Error: dial tcp: connection refused"},
			},
		},
		{
			// The back-off would outlast the deadline, so the call ends
			// with the answer it got instead of beginning it.
			name:    "a back-off past the deadline",
			opts:    []contextsvc.Option{contextsvc.WithRetryWait(2*time.Second, 2*time.Second)},
			answers: []answer{{status: 503, body: `{}`}},
			timeout: time.Second,
			want: []spanView{
				{Name: "contextsvc.contexts.get", Kind: trace.SpanKindInternal, Parent: "caller",
					Attrs:  with(call, "contextsvc.attempts", "1", "error.type", "503"),
					Status: "Error: contextsvc: 503: {}"},
				{Name: "GET /v1/contexts/{id}", Kind: trace.SpanKindClient, Parent: "contextsvc.contexts.get",
					Attrs:  with(get, "url.full", full, "http.response.status_code", "503", "error.type", "503"),
					Status: "Error"},
			},
		},
		{
			name:    "the limiter refuses",
			opts:    []contextsvc.Option{contextsvc.WithLimiter(failingLimiter{})},
			answers: []answer{ok},
			want: []spanView{
				{Name: "contextsvc.contexts.get", Kind: trace.SpanKindInternal, Parent: "caller",
					Attrs:  with(call, "contextsvc.attempts", "0", "error.type", "rate_limiter"),
					Events: []string{"contextsvc.limiter.wait +0s contextsvc.attempt=1 contextsvc.wait.duration=0 error.type=rate_limiter"},
					Status: "Error: contextsvc: GET /contexts/ctx_1: waiting for the rate limiter: limiter store unavailable"},
			},
			metrics: map[string][]point{
				"http.client.request.duration":            nil,
				"contextsvc.client.limiter.wait.duration": {{Attrs: "error.type=rate_limiter " + metricAttrs, Count: 1}},
			},
		},
		{
			name:    "Do of an endpoint the service does not document",
			answers: []answer{ok},
			call:    do(http.MethodPost, "contexts/ctx_1/publish"),
			want: []spanView{
				{Name: "contextsvc.request", Kind: trace.SpanKindInternal, Parent: "caller",
					Attrs:  map[string]string{"contextsvc.attempts": "1"},
					Status: "Unset"},
				{Name: "POST", Kind: trace.SpanKindClient, Parent: "contextsvc.request",
					Attrs:  map[string]string{"http.request.method": "POST", "server.address": "api.example.test", "server.port": "443", "url.full": full + "/publish", "http.response.status_code": "200"},
					Status: "Unset"},
			},
		},
		{
			name:    "Do with sensitive query values",
			answers: []answer{ok},
			call:    do(http.MethodGet, "contexts?limit=5&sig=s3cr3t&Signature=x"),
			want: []spanView{
				{Name: "contextsvc.contexts.list", Kind: trace.SpanKindInternal, Parent: "caller",
					Attrs:  map[string]string{"contextsvc.operation": "listContexts", "contextsvc.attempts": "1"},
					Status: "Unset"},
				{Name: "GET /v1/contexts", Kind: trace.SpanKindClient, Parent: "contextsvc.contexts.list",
					Attrs: map[string]string{"http.request.method": "GET", "server.address": "api.example.test", "server.port": "443",
						"url.template": "/v1/contexts", "url.full": testBase + "/contexts?limit=5&sig=REDACTED&Signature=REDACTED", "http.response.status_code": "200"},
					Status: "Unset"},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				tel := newTelemetry(t)
				mw, err := contextsvcotel.NewMiddleware(contextsvcotel.WithTracerProvider(tel.tp), contextsvcotel.WithMeterProvider(tel.mp))
				if err != nil {
					t.Fatal(err)
				}
				svc := &service{answers: tt.answers}
				client := newServiceClient(t, svc, mw, tt.opts...)
				ctx := trace.ContextWithRemoteSpanContext(context.Background(), caller)
				if tt.timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.timeout)
					defer cancel()
				}
				call := tt.call
				if call == nil {
					call = getContext
				}
				_ = call(ctx, client)

				got := tel.views(t, map[trace.SpanID]string{caller.SpanID(): "caller"})
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("spans (-want +got):\n%s", diff)
				}
				stubs := tel.spans.GetSpans()
				var attempts []string
				for _, s := range stubs {
					if s.SpanContext.TraceID() != caller.TraceID() {
						t.Errorf("span %q is not in the caller's trace", s.Name)
					}
					if s.Parent.SpanID() != caller.SpanID() {
						attempts = append(attempts, "00-"+s.SpanContext.TraceID().String()+"-"+s.SpanContext.SpanID().String()+"-01")
					}
				}
				if diff := cmp.Diff(attempts, svc.traceparents); diff != "" {
					t.Errorf("traceparent of each attempt (-each attempt's span +sent):\n%s", diff)
				}
				metrics := tel.metrics(t)
				for name, pts := range metrics {
					for _, p := range pts {
						if strings.Contains(p.Attrs, "ctx_") {
							t.Errorf("metric %s has an id in its attributes: %s", name, p.Attrs)
						}
					}
				}
				for name, want := range tt.metrics {
					if diff := cmp.Diff(want, metrics[name]); diff != "" {
						t.Errorf("metric %s (-want +got):\n%s", name, diff)
					}
				}
			})
		})
	}
}

// TestClientTelemetryOptions: a nil provider or propagator is refused; a
// propagator without fields injects nothing; the global (no-op) providers
// make a middleware that traces nothing and still lets calls through.
func TestClientTelemetryOptions(t *testing.T) {
	t.Parallel()
	for _, opt := range []contextsvcotel.Option{
		contextsvcotel.WithTracerProvider(nil), contextsvcotel.WithMeterProvider(nil), contextsvcotel.WithPropagator(nil),
	} {
		if _, err := contextsvcotel.NewMiddleware(opt); !errors.Is(err, contextsvc.ErrInvalidArgument) {
			t.Errorf("NewMiddleware: err = %v, want ErrInvalidArgument", err)
		}
		if _, err := contextsvcotel.NewWebhookOption(opt); !errors.Is(err, contextsvc.ErrInvalidArgument) {
			t.Errorf("NewWebhookOption: err = %v, want ErrInvalidArgument", err)
		}
	}
	tel := newTelemetry(t)
	tests := []struct {
		name   string
		opts   []contextsvcotel.Option
		header bool // the attempt carries a traceparent
	}{
		{name: "global providers", opts: nil, header: false}, // no-op: an invalid span context is not sent
		{name: "no fields to inject", opts: []contextsvcotel.Option{contextsvcotel.WithTracerProvider(tel.tp), contextsvcotel.WithPropagator(propagation.NewCompositeTextMapPropagator())}},
		{name: "W3C by default", opts: []contextsvcotel.Option{contextsvcotel.WithTracerProvider(tel.tp)}, header: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			mw, err := contextsvcotel.NewMiddleware(tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			svc := &service{answers: []answer{{status: 200, body: `{"id":"ctx_1"}`}}}
			client := newServiceClient(t, svc, mw)
			if err := getContext(context.Background(), client); err != nil {
				t.Fatal(err)
			}
			if got := svc.traceparents[0] != ""; got != tt.header {
				t.Errorf("traceparent %q, want one: %v", svc.traceparents[0], tt.header)
			}
		})
	}
}

// TestClientTelemetryAroundFaultyMiddleware: an inner middleware that
// answers neither a response nor an error fails the call; the telemetry
// around it records the failure rather than panicking.
func TestClientTelemetryAroundFaultyMiddleware(t *testing.T) {
	t.Parallel()
	tel := newTelemetry(t)
	mw, err := contextsvcotel.NewMiddleware(contextsvcotel.WithTracerProvider(tel.tp), contextsvcotel.WithMeterProvider(tel.mp))
	if err != nil {
		t.Fatal(err)
	}
	client := newServiceClient(t, &service{answers: []answer{{status: 200, body: `{"id":"ctx_1"}`}}}, mw, contextsvc.WithMaxRetries(0))
	faulty := contextsvc.Middleware{
		Call: func(ctx context.Context, _ *contextsvc.Call, next contextsvc.CallNext) (*http.Response, error) {
			if resp, err := next(ctx); err != nil {
				return resp, err
			}
			return nil, nil
		},
		Attempt: func(*http.Request, *contextsvc.Attempt, contextsvc.AttemptNext) (*http.Response, error) {
			return nil, nil
		},
	}
	_, err = client.Contexts.Get(context.Background(), "ctx_1", contextsvc.WithRequestMiddleware(faulty))
	if err == nil || !strings.Contains(err.Error(), "neither a response nor an error") {
		t.Fatalf("err = %v", err)
	}
	if n := len(tel.spans.GetSpans()); n != 2 {
		t.Errorf("%d spans, want the call's and its attempt's", n)
	}
}

// TestInstrumentSeparately: tracing and metrics turn on separately, on the
// client and on a receiver. The tracing half reads no meter provider and
// records nothing; the metrics half starts no span and sends no trace
// context; the client's two halves installed together give what
// NewMiddleware gives.
func TestInstrumentSeparately(t *testing.T) {
	t.Parallel()
	type made struct {
		client   []func(...contextsvcotel.Option) (contextsvc.Middleware, error)
		receiver func(...contextsvcotel.Option) (contextsvc.WebhookOption, error)
	}
	tests := []struct {
		name        string
		made        made
		spans       []string // names, in the order they ended
		metrics     []string // names, sorted
		traceparent bool
	}{
		{
			name:        "tracing",
			made:        made{[]func(...contextsvcotel.Option) (contextsvc.Middleware, error){contextsvcotel.NewTracingMiddleware}, contextsvcotel.NewWebhookTracingOption},
			spans:       []string{"GET /v1/contexts/{id}", "contextsvc.contexts.get", "process context.updated"},
			traceparent: true,
		},
		{
			name:    "metrics",
			made:    made{[]func(...contextsvcotel.Option) (contextsvc.Middleware, error){contextsvcotel.NewMetricsMiddleware}, contextsvcotel.NewWebhookMetricsOption},
			metrics: []string{"http.client.request.duration", "messaging.process.duration"},
		},
		{
			name: "both halves on the client",
			made: made{[]func(...contextsvcotel.Option) (contextsvc.Middleware, error){contextsvcotel.NewTracingMiddleware, contextsvcotel.NewMetricsMiddleware},
				contextsvcotel.NewWebhookOption},
			spans:       []string{"GET /v1/contexts/{id}", "contextsvc.contexts.get", "process context.updated"},
			metrics:     []string{"http.client.request.duration", "messaging.process.duration"},
			traceparent: true,
		},
		{
			name:        "both",
			made:        made{[]func(...contextsvcotel.Option) (contextsvc.Middleware, error){contextsvcotel.NewMiddleware}, contextsvcotel.NewWebhookOption},
			spans:       []string{"GET /v1/contexts/{id}", "contextsvc.contexts.get", "process context.updated"},
			metrics:     []string{"http.client.request.duration", "messaging.process.duration"},
			traceparent: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tel := newTelemetry(t)
			opts := []contextsvcotel.Option{contextsvcotel.WithTracerProvider(tel.tp), contextsvcotel.WithMeterProvider(tel.mp)}
			var mws []contextsvc.Middleware
			for _, m := range tt.made.client {
				mw, err := m(opts...)
				if err != nil {
					t.Fatal(err)
				}
				mws = append(mws, mw)
			}
			svc := &service{answers: []answer{{status: 200, body: `{"id":"ctx_1"}`}}}
			client := newServiceClient(t, svc, contextsvc.Middleware{}, contextsvc.WithMiddleware(mws...))
			if err := getContext(context.Background(), client); err != nil {
				t.Fatal(err)
			}
			opt, err := tt.made.receiver(opts...)
			if err != nil {
				t.Fatal(err)
			}
			h, err := contextsvc.NewWebhookHandler(webhookSecret, func(context.Context, *contextsvc.Event) error { return nil },
				opt, contextsvc.WithWebhookClock(func() time.Time { return deliveredAt }))
			if err != nil {
				t.Fatal(err)
			}
			body := eventBody("evt_1", contextsvc.EventContextUpdated)
			r := httptest.NewRequest(http.MethodPost, "/webhooks", bytes.NewReader(body))
			r.Header.Set(contextsvc.DefaultSignatureHeader, contextsvc.Sign(body, webhookSecret))
			r.Header.Set("Traceparent", traceparent(attemptSpan))
			h.ServeHTTP(httptest.NewRecorder(), r)

			var spans []string
			for _, s := range tel.spans.GetSpans() {
				spans = append(spans, s.Name)
			}
			if diff := cmp.Diff(tt.spans, spans); diff != "" {
				t.Errorf("spans (-want +got):\n%s", diff)
			}
			var metrics []string
			for name := range tel.metrics(t) {
				metrics = append(metrics, name)
			}
			slices.Sort(metrics)
			if diff := cmp.Diff(tt.metrics, metrics); diff != "" {
				t.Errorf("metrics (-want +got):\n%s", diff)
			}
			if got := svc.traceparents[0] != ""; got != tt.traceparent {
				t.Errorf("traceparent %q sent: %v, want %v", svc.traceparents[0], got, tt.traceparent)
			}
		})
	}
}

// TestClientSpansStartWithWhatIsKnown: a sampler sees, as each attempt's
// span starts, the attributes known before the request is sent: its
// method, server, URL template, url.full and resend count (the HTTP
// conventions' sampling attributes); the outcome comes as the span ends.
// The call's span is named for its operation, which is what a sampler
// sees of it.
func TestClientSpansStartWithWhatIsKnown(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		sampler := &startSampler{}
		tel := newTelemetry(t, sdktrace.WithSampler(sampler))
		mw, err := contextsvcotel.NewTracingMiddleware(contextsvcotel.WithTracerProvider(tel.tp))
		if err != nil {
			t.Fatal(err)
		}
		svc := &service{answers: []answer{{status: 503, body: `{}`}, {status: 200, body: `{"id":"ctx_1","version":1}`}}}
		client := newServiceClient(t, svc, mw, contextsvc.WithRetryWait(time.Second, time.Second))
		if err := getContext(context.Background(), client); err != nil {
			t.Fatal(err)
		}
		attempt := map[string]string{
			"http.request.method": "GET", "server.address": "api.example.test", "server.port": "443",
			"url.template": "/v1/contexts/{id}", "url.full": "https://api.example.test/v1/contexts/ctx_1",
		}
		want := []spanStart{
			{"contextsvc.contexts.get", map[string]string{}}, // the name says the operation
			{"GET /v1/contexts/{id}", attempt},
			{"GET /v1/contexts/{id}", with(attempt, "http.request.resend_count", "1")},
		}
		if diff := cmp.Diff(want, sampler.seen()); diff != "" {
			t.Errorf("what the sampler saw as each span started (-want +got):\n%s", diff)
		}
	})
}
