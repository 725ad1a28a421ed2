package contextsvc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"
	"golang.org/x/time/rate"
)

// hookLog is a middleware that writes down what it sees, one line per hook
// call, so a test can compare the whole sequence.
type hookLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *hookLog) add(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *hookLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// outcome describes a call's or attempt's result in a log line.
func outcome(resp *http.Response, err error) string {
	if err != nil {
		if e, ok := errors.AsType[*Error](err); ok {
			return fmt.Sprintf("error %d", e.StatusCode)
		}
		return "error " + err.Error()
	}
	return fmt.Sprint(resp.StatusCode)
}

type ctxMark struct{}

// middleware logs under name. Its Call hook puts name into the context, so
// the other hooks can show which context they got.
func (l *hookLog) middleware(name string) Middleware {
	return Middleware{
		Call: func(ctx context.Context, call *Call, next CallNext) (*http.Response, error) {
			l.add("%s call %s %s %s", name, call.Operation, call.Method, call.URLTemplate)
			resp, err := next(context.WithValue(ctx, ctxMark{}, name))
			l.add("%s call end %s after %d", name, outcome(resp, err), call.Attempts)
			return resp, err
		},
		Attempt: func(req *http.Request, a *Attempt, next AttemptNext) (*http.Response, error) {
			l.add("%s attempt %d %s ctx=%v", name, a.Number, a.Call.Operation, req.Context().Value(ctxMark{}))
			resp, err := next(req)
			l.add("%s attempt %d end %s", name, a.Number, outcome(resp, err))
			return resp, err
		},
		Wait: func(ctx context.Context, w *Wait) {
			l.add("%s wait %s before %d %v err=%v ctx=%v", name, w.Reason, w.Attempt, w.Duration, w.Err, ctx.Value(ctxMark{}))
		},
	}
}

// TestMiddlewareSequence runs calls through middleware on a fake clock and
// checks everything each hook saw, in order: the call once around its
// attempts, each attempt, the limiter's waits and the back-offs with their
// exact durations, and the context the Call hooks passed on.
func TestMiddlewareSequence(t *testing.T) {
	t.Parallel()
	unavailable := respond(503, `{}`)
	okBody := respond(200, `{"id":"ctx_1","version":1}`)
	tests := []struct {
		name      string
		opts      []Option
		responder httpmock.Responder
		timeout   time.Duration // of the call's context; 0: none
		call      func(context.Context, *Client, ...RequestOption) error
		want      []string

		// cancelAfter cancels the call's context (which has no deadline)
		// this long after the call starts; 0: never.
		cancelAfter time.Duration
	}{
		{
			name:      "one attempt, no limiter",
			responder: okBody,
			want: []string{
				"m call getContext GET /v1/contexts/{id}",
				"m attempt 1 getContext ctx=m",
				"m attempt 1 end 200",
				"m call end 200 after 1",
			},
		},
		{
			name: "a retry after a back-off, paced by a limiter",
			// One token a second, none spare: the first attempt takes the
			// token, the 0.4 s back-off leaves the second 0.6 s to wait.
			opts:      []Option{WithLimiter(rate.NewLimiter(1, 1)), WithRetryWait(400*time.Millisecond, 400*time.Millisecond)},
			responder: sequence(unavailable, okBody),
			want: []string{
				"m call getContext GET /v1/contexts/{id}",
				"m wait limiter before 1 0s err=<nil> ctx=m",
				"m attempt 1 getContext ctx=m",
				"m attempt 1 end 503",
				"m wait retry before 2 400ms err=<nil> ctx=m",
				"m wait limiter before 2 600ms err=<nil> ctx=m",
				"m attempt 2 getContext ctx=m",
				"m attempt 2 end 200",
				"m call end 200 after 2",
			},
		},
		{
			name:      "the service's Retry-After is the back-off",
			opts:      []Option{WithRetryWait(time.Millisecond, time.Minute)},
			responder: sequence(respond(429, `{}`, "Retry-After", "3"), okBody),
			want: []string{
				"m call getContext GET /v1/contexts/{id}",
				"m attempt 1 getContext ctx=m",
				"m attempt 1 end 429",
				"m wait retry before 2 3s err=<nil> ctx=m",
				"m attempt 2 getContext ctx=m",
				"m attempt 2 end 200",
				"m call end 200 after 2",
			},
		},
		{
			name:        "the context ends during the back-off",
			opts:        []Option{WithRetryWait(2*time.Second, 2*time.Second)},
			responder:   unavailable,
			cancelAfter: time.Second,
			want: []string{
				"m call getContext GET /v1/contexts/{id}",
				"m attempt 1 getContext ctx=m",
				"m attempt 1 end 503",
				"m wait retry before 2 1s err=context canceled ctx=m",
				"m call end error contextsvc: GET /contexts/ctx_1: context canceled after 1",
			},
		},
		{
			// A back-off the deadline would cut short is not begun: the
			// call ends with the answer it got.
			name:      "a back-off past the deadline",
			opts:      []Option{WithRetryWait(2*time.Second, 2*time.Second)},
			responder: unavailable,
			timeout:   time.Second,
			want: []string{
				"m call getContext GET /v1/contexts/{id}",
				"m attempt 1 getContext ctx=m",
				"m attempt 1 end 503",
				"m call end error 503 after 1",
			},
		},
		{
			name:      "retries run out",
			opts:      []Option{WithMaxRetries(1), WithRetryWait(time.Second, time.Second)},
			responder: unavailable,
			want: []string{
				"m call getContext GET /v1/contexts/{id}",
				"m attempt 1 getContext ctx=m",
				"m attempt 1 end 503",
				"m wait retry before 2 1s err=<nil> ctx=m",
				"m attempt 2 getContext ctx=m",
				"m attempt 2 end 503",
				"m call end error 503 after 2",
			},
		},
		{
			name:      "the limiter refuses",
			opts:      []Option{WithLimiter(&failingLimiter{})},
			responder: okBody,
			want: []string{
				"m call getContext GET /v1/contexts/{id}",
				"m wait limiter before 1 0s err=limiter store unavailable ctx=m",
				"m call end error contextsvc: GET /contexts/ctx_1: waiting for the rate limiter: limiter store unavailable after 0",
			},
		},
		{
			name:      "Do of a documented endpoint names its operation",
			responder: okBody,
			call: func(ctx context.Context, c *Client, opts ...RequestOption) error {
				req, err := c.NewRequest(ctx, http.MethodDelete, "contexts/ctx_1", nil)
				if err != nil {
					return err
				}
				_, err = c.Do(ctx, req, nil, opts...)
				return err
			},
			want: []string{
				"m call deleteContext DELETE /v1/contexts/{id}",
				"m attempt 1 deleteContext ctx=m",
				"m attempt 1 end 200",
				"m call end 200 after 1",
			},
		},
		{
			name:      "Do of another endpoint has no template",
			responder: okBody,
			call: func(ctx context.Context, c *Client, opts ...RequestOption) error {
				req, err := c.NewRequest(ctx, http.MethodPost, "contexts/ctx_1/publish", nil)
				if err != nil {
					return err
				}
				_, err = c.Do(ctx, req, nil, opts...)
				return err
			},
			want: []string{
				"m call  POST ",
				"m attempt 1  ctx=m",
				"m attempt 1 end 200",
				"m call end 200 after 1",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var log hookLog
				opts := append([]Option{WithMiddleware(log.middleware("m"))}, tt.opts...)
				c, mt, _ := newTestClient(t, opts...)
				mt.RegisterNoResponder(tt.responder)
				ctx := context.Background()
				if tt.timeout > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(ctx, tt.timeout)
					defer cancel()
				}
				if tt.cancelAfter > 0 {
					var cancel context.CancelFunc
					ctx, cancel = context.WithCancel(ctx)
					defer time.AfterFunc(tt.cancelAfter, cancel).Stop()
				}
				call := tt.call
				if call == nil {
					call = func(ctx context.Context, c *Client, opts ...RequestOption) error {
						_, err := c.Contexts.Get(ctx, "ctx_1", opts...)
						return err
					}
				}
				_ = call(ctx, c)
				if diff := cmp.Diff(tt.want, log.all()); diff != "" {
					t.Errorf("hooks saw (-want +got):\n%s", diff)
				}
			})
		})
	}
}

// TestMiddlewareOrder: the client's middleware wraps the call's own, each
// in the order given; every operation names itself; a hook left nil is
// skipped.
func TestMiddlewareOrder(t *testing.T) {
	t.Parallel()
	var log hookLog
	onlyCall := log.middleware("b")
	onlyCall.Attempt, onlyCall.Wait = nil, nil
	c, mt, _ := newTestClient(t, WithMiddleware(log.middleware("a"), onlyCall))
	mt.RegisterNoResponder(respond(200, `{"id":"x","data":[]}`))
	ctx := context.Background()
	ops := []struct {
		name string
		call func(...RequestOption) error
	}{
		{"listContexts GET /v1/contexts", func(o ...RequestOption) error { _, err := c.Contexts.List(ctx, nil, o...); return err }},
		{"createContext POST /v1/contexts", func(o ...RequestOption) error {
			_, err := c.Contexts.Create(ctx, &CreateContextRequest{Name: "n"}, o...)
			return err
		}},
		{"getContext GET /v1/contexts/{id}", func(o ...RequestOption) error { _, err := c.Contexts.Get(ctx, "x", o...); return err }},
		{"updateContext PUT /v1/contexts/{id}", func(o ...RequestOption) error {
			_, err := c.Contexts.Update(ctx, "x", &UpdateContextRequest{Name: Ptr("m")}, o...)
			return err
		}},
		{"deleteContext DELETE /v1/contexts/{id}", func(o ...RequestOption) error { _, err := c.Contexts.Delete(ctx, "x", o...); return err }},
		{"listVersions GET /v1/contexts/{id}/versions", func(o ...RequestOption) error {
			_, err := c.Contexts.ListVersions(ctx, "x", nil, o...)
			return err
		}},
		{"exportContext GET /v1/contexts/{id}/export", func(o ...RequestOption) error {
			ex, err := c.Contexts.Export(ctx, "x", &ExportOptions{Format: ExportPDF}, o...)
			if err == nil {
				ex.Body.Close()
			}
			return err
		}},
		{"registerWebhook POST /v1/webhooks", func(o ...RequestOption) error {
			_, err := c.Webhooks.Register(ctx, &RegisterWebhookRequest{URL: "https://r.test/h", Events: []EventType{EventContextCreated}, Secret: "s"}, o...)
			return err
		}},
	}
	for _, op := range ops {
		log.mu.Lock()
		log.lines = nil
		log.mu.Unlock()
		if err := op.call(WithRequestMiddleware(log.middleware("c"))); err != nil {
			t.Fatalf("%s: %v", op.name, err)
		}
		opName, _, _ := strings.Cut(op.name, " ")
		want := []string{
			"a call " + op.name,
			"b call " + op.name,
			"c call " + op.name,
			"a attempt 1 " + opName + " ctx=c",
			"c attempt 1 " + opName + " ctx=c",
			"c attempt 1 end 200",
			"a attempt 1 end 200",
			"c call end 200 after 1",
			"b call end 200 after 1",
			"a call end 200 after 1",
		}
		if diff := cmp.Diff(want, log.all()); diff != "" {
			t.Errorf("%s: hooks saw (-want +got):\n%s", op.name, diff)
		}
	}
}

// TestMiddlewareChangesRequests: an Attempt hook adds a header to its clone
// of each attempt's request, and the service sees it on every attempt; the
// call's Response still counts the attempts.
func TestMiddlewareChangesRequests(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) { // the retry's back-off on the bubble's clock
		c, mt, rec := newTestClient(t, WithMiddleware(Middleware{
			Attempt: func(req *http.Request, a *Attempt, next AttemptNext) (*http.Response, error) {
				r := req.Clone(req.Context())
				r.Header.Set("Traceparent", fmt.Sprintf("attempt-%d", a.Number))
				return next(r)
			},
		}))
		mt.RegisterNoResponder(rec.wrap(sequence(respond(503, `{}`), respond(201, `{"id":"ctx_1"}`))))
		var resp Response
		if _, err := c.Contexts.Create(context.Background(), &CreateContextRequest{Name: "n"}, WithResponseInto(&resp)); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range rec.all() {
			got = append(got, r.Header.Get("Traceparent")+" "+r.Header.Get("Idempotency-Key"))
		}
		want := []string{"attempt-1 " + resp.IdempotencyKey, "attempt-2 " + resp.IdempotencyKey}
		if diff := cmp.Diff(want, got); diff != "" || resp.Attempts != 2 || resp.StatusCode != 201 {
			t.Errorf("the service saw (-want +got):\n%s\nResponse %+v", diff, resp)
		}
	})
}

// TestMiddlewareAnswers: a Call hook may answer a call itself (a cache, a
// test double): its response is treated as the service's. Misuse is an
// error, not a panic.
func TestMiddlewareAnswers(t *testing.T) {
	t.Parallel()
	answer := func(status int, body string) Middleware {
		return Middleware{Call: func(context.Context, *Call, CallNext) (*http.Response, error) {
			return &http.Response{StatusCode: status, Header: http.Header{}, Body: io.NopCloser(strings.NewReader(body))}, nil
		}}
	}
	tests := []struct {
		name    string
		mw      Middleware
		wantErr string // "" for success
		sent    int    // requests that reach the service
	}{
		{name: "a 200 of its own", mw: answer(200, `{"id":"ctx_cached","version":3}`)},
		{name: "a 404 of its own", mw: answer(404, `{"error":{"type":"not_found","message":"gone"}}`), wantErr: "gone"},
		{name: "an error of its own", mw: Middleware{Call: func(context.Context, *Call, CallNext) (*http.Response, error) {
			return nil, errors.New("circuit open")
		}}, wantErr: "contextsvc: GET /contexts/ctx_1: circuit open"},
		{name: "nothing at all", mw: Middleware{Call: func(context.Context, *Call, CallNext) (*http.Response, error) {
			return nil, nil
		}}, wantErr: "neither a response nor an error"},
		{name: "next twice", mw: Middleware{Call: func(ctx context.Context, _ *Call, next CallNext) (*http.Response, error) {
			if resp, err := next(ctx); err == nil {
				resp.Body.Close()
			}
			return next(ctx)
		}}, wantErr: "called next more than once", sent: 1},
		{name: "an attempt calling next twice", mw: Middleware{Attempt: func(r *http.Request, _ *Attempt, next AttemptNext) (*http.Response, error) {
			if resp, err := next(r); err == nil {
				resp.Body.Close()
			}
			return next(r)
		}}, wantErr: "called next more than once", sent: 1},
		{name: "an attempt answering nothing", mw: Middleware{Attempt: func(*http.Request, *Attempt, AttemptNext) (*http.Response, error) {
			return nil, nil
		}}, wantErr: "neither a response nor an error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, mt, rec := newTestClient(t, WithMaxRetries(0))
			mt.RegisterNoResponder(rec.wrap(respond(200, `{"id":"ctx_1","version":1}`)))
			got, err := c.Contexts.Get(context.Background(), "ctx_1", WithRequestMiddleware(tt.mw))
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("err = %v", err)
			case tt.wantErr == "" && got.ID != "ctx_cached":
				t.Errorf("got %+v, want the middleware's context", got)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("err = %v, want one saying %q", err, tt.wantErr)
			}
			if rec.count() != tt.sent {
				t.Errorf("%d requests reached the service, want %d", rec.count(), tt.sent)
			}
		})
	}
}

func TestRoute(t *testing.T) {
	t.Parallel()
	tests := []struct {
		base, method, path string
		template, op       string
	}{
		{"https://api.test/v1", "GET", "/v1/contexts", "/v1/contexts", "listContexts"},
		{"https://api.test/v1", "POST", "/v1/contexts", "/v1/contexts", "createContext"},
		{"https://api.test/v1", "GET", "/v1/contexts/ctx_1", "/v1/contexts/{id}", "getContext"},
		{"https://api.test/v1", "PUT", "/v1/contexts/ctx_1", "/v1/contexts/{id}", "updateContext"},
		{"https://api.test/v1", "DELETE", "/v1/contexts/ctx_1", "/v1/contexts/{id}", "deleteContext"},
		{"https://api.test/v1", "PATCH", "/v1/contexts/ctx_1", "/v1/contexts/{id}", ""},
		{"https://api.test/v1", "GET", "/v1/contexts/a%2Fb/versions", "/v1/contexts/{id}/versions", "listVersions"},
		{"https://api.test/v1", "GET", "/v1/contexts/ctx_1/export", "/v1/contexts/{id}/export", "exportContext"},
		{"https://api.test/v1", "POST", "/v1/webhooks", "/v1/webhooks", "registerWebhook"},
		{"https://api.test/api/v1", "GET", "/api/v1/contexts/x", "/api/v1/contexts/{id}", "getContext"},
		{"https://api.test/v1", "GET", "/v1/contexts//versions", "", ""},
		{"https://api.test/v1", "GET", "/v1/contexts/", "", ""},
		{"https://api.test/v1", "GET", "/v1/contexts/x/versions/2", "", ""},
		{"https://api.test/v1", "GET", "/v1", "", ""},
		{"https://api.test/v1", "GET", "/v1/webhooks/wh_1", "", ""},
		{"https://api.test/v1", "GET", "/v2/contexts", "", ""},
	}
	for _, tt := range tests {
		c, err := NewClient(testKey, WithBaseURL(tt.base))
		if err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse("https://api.test" + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		template, op := c.route(tt.method, u)
		if template != tt.template || op != tt.op {
			t.Errorf("%s %s (base %s): %q %q, want %q %q", tt.method, tt.path, tt.base, template, op, tt.template, tt.op)
		}
	}
}
