package contextsvc

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"
)

func TestRequestOptionsRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	c, mt, _ := newTestClient(t)
	ctx := context.Background()
	get := func(opts ...RequestOption) error { _, err := c.Contexts.Get(ctx, "ctx_1", opts...); return err }
	create := func(opts ...RequestOption) error {
		_, err := c.Contexts.Create(ctx, &CreateContextRequest{Name: "n"}, opts...)
		return err
	}
	secret := "s3cr3t-value"
	tests := []struct {
		name string
		call func() error
		want string // in the error
	}{
		{"Authorization", func() error { return get(WithRequestHeader("Authorization", "Bearer "+secret)) }, "Authorization is the client's API key"},
		{"authorization in lower case", func() error { return get(WithRequestHeader("authorization", secret)) }, "Authorization"},
		{"CR LF injection", func() error { return get(WithRequestHeader("X-Trace", secret+"\r\nX-Evil: 1")) }, "line break"},
		{"LF injection", func() error { return get(WithRequestHeader("X-Trace", secret+"\nX-Evil: 1")) }, "line break"},
		{"NUL", func() error { return get(WithRequestHeader("X-Trace", secret+"\x00")) }, "control character"},
		{"name with a space", func() error { return get(WithRequestHeader("X Trace", secret)) }, "header name"},
		{"name with a colon", func() error { return get(WithRequestHeader("X-Evil:", secret)) }, "header name"},
		{"empty name", func() error { return get(WithRequestHeader("", secret)) }, "header name"},
		{"Idempotency-Key as a header", func() error { return create(WithRequestHeader("Idempotency-Key", secret)) }, "use WithIdempotencyKey"},
		{"Host", func() error { return get(WithRequestHeader("Host", "evil.test")) }, "set by the transport"},
		{"Content-Length", func() error { return create(WithRequestHeader("Content-Length", "1")) }, "set by the transport"},
		{"empty idempotency key", func() error { return create(WithIdempotencyKey("")) }, "need 1 to 255"},
		{"256-character key", func() error { return create(WithIdempotencyKey(strings.Repeat("k", 256))) }, "need 1 to 255"},
		{"key not ASCII", func() error { return create(WithIdempotencyKey(secret + "é")) }, "printable ASCII"},
		{"key with a newline", func() error { return create(WithIdempotencyKey(secret + "\n")) }, "printable ASCII"},
		{"key with an outer space", func() error { return create(WithIdempotencyKey(" " + secret)) }, "space"},
		{"key on a GET", func() error { return get(WithIdempotencyKey(secret)) }, "only a POST"},
		{"key on a DELETE", func() error { _, err := c.Contexts.Delete(ctx, "ctx_1", WithIdempotencyKey(secret)); return err }, "only a POST"},
		{"nil Response", func() error { return get(WithResponseInto(nil)) }, "WithResponseInto(nil)"},
		{"negative retries", func() error { return get(WithRequestMaxRetries(-1)) }, "must not be negative"},
		{"zero attempt time-out", func() error { return get(WithAttemptTimeout(0)) }, "must be positive"},
		{"bad key in Do's request", func() error {
			req, _ := c.NewRequest(ctx, "POST", "/contexts", nil)
			req.Header.Set("Idempotency-Key", strings.Repeat("k", 300))
			_, err := c.Do(ctx, req, nil)
			return err
		}, "Idempotency-Key header"},
	}
	for _, tt := range tests {
		err := tt.call()
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want ErrInvalidArgument saying %q", tt.name, err, tt.want)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error repeats the value: %v", tt.name, err)
		}
	}
	if n := mt.GetTotalCallCount(); n != 0 {
		t.Errorf("%d requests sent, want none", n)
	}
}

func TestWithRequestHeader(t *testing.T) {
	t.Parallel()
	c, mt, rec := newTestClient(t)
	mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", rec.wrap(respond(200, ctx1JSON)))
	ctx := context.Background()
	_, err := c.Contexts.Get(ctx, "ctx_1",
		WithRequestHeader("x-trace-id", "t-1\tx"), // a tab is allowed in a value
		WithRequestHeader("X-Trace-Id", "t-2"),    // the later one wins
		WithRequestHeader("Accept", "application/json; charset=utf-8"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Contexts.Get(ctx, "ctx_1"); err != nil {
		t.Fatal(err)
	}
	reqs := rec.all()
	if got := reqs[0].Header.Values("X-Trace-Id"); !cmp.Equal(got, []string{"t-2"}) {
		t.Errorf("X-Trace-Id = %q, want [t-2]", got)
	}
	if got := reqs[0].Header.Get("Accept"); got != "application/json; charset=utf-8" {
		t.Errorf("Accept = %q, want the call's", got)
	}
	if got := reqs[0].Header.Get("Authorization"); got != "Bearer "+testKey {
		t.Errorf("Authorization = %q", got)
	}
	// Options of one call never reach the next, nor the client's shared
	// header values.
	if got := reqs[1].Header.Get("X-Trace-Id"); got != "" {
		t.Errorf("the next call carries X-Trace-Id %q", got)
	}
	if got := reqs[1].Header.Get("Accept"); got != "application/json" || headerAcceptJSON[0] != "application/json" {
		t.Errorf("the next call's Accept = %q", got)
	}
}

func TestWithResponseInto(t *testing.T) {
	t.Parallel()
	rl := []string{"X-RateLimit-Limit", "300", "X-RateLimit-Remaining", "41", "X-RateLimit-Reset", "2"}
	wantRL := RateLimit{Limit: 300, Remaining: 41, Reset: 2 * time.Second}
	ignoreObserved := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Observed" }, cmp.Ignore())
	tests := []struct {
		name      string
		responses []httpmock.Responder
		call      func(context.Context, *Client, ...RequestOption) error
		want      Response // Header and IdempotencyKey checked apart
		wantErr   bool
	}{
		{
			name:      "success after a retry",
			responses: []httpmock.Responder{respond(503, `{}`), respond(200, ctx1JSON, append([]string{"X-Request-Id", "req_ok"}, rl...)...)},
			call: func(ctx context.Context, c *Client, o ...RequestOption) error {
				_, err := c.Contexts.Get(ctx, "ctx_1", o...)
				return err
			},
			want: Response{StatusCode: 200, RequestID: "req_ok", RateLimit: wantRL, Attempts: 2},
		},
		{
			name:      "error",
			responses: []httpmock.Responder{respond(404, `{"error":{"type":"not_found","message":"no","requestId":"req_body"}}`, append([]string{"X-Request-Id", "req_hdr"}, rl...)...)},
			call: func(ctx context.Context, c *Client, o ...RequestOption) error {
				_, err := c.Contexts.Get(ctx, "ctx_1", o...)
				return err
			},
			// The error document's request id wins, as on the *Error.
			want: Response{StatusCode: 404, RequestID: "req_body", RateLimit: wantRL, Attempts: 1}, wantErr: true,
		},
		{
			name:      "transport failure",
			responses: []httpmock.Responder{httpmock.NewErrorResponder(errors.New("connection reset"))},
			call: func(ctx context.Context, c *Client, o ...RequestOption) error {
				_, err := c.Contexts.Get(ctx, "ctx_1", o...)
				return err
			},
			want: Response{Attempts: 4}, wantErr: true,
		},
		{
			name:      "replayed create",
			responses: []httpmock.Responder{respond(201, ctx1JSON, "Idempotent-Replayed", "true")},
			call: func(ctx context.Context, c *Client, o ...RequestOption) error {
				_, err := c.Contexts.Create(ctx, &CreateContextRequest{Name: "n"}, o...)
				return err
			},
			want: Response{StatusCode: 201, RequestID: "req_test", Attempts: 1, Replayed: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, mt, rec := newTestClient(t)
			mt.RegisterNoResponder(rec.wrap(sequence(tt.responses...)))
			resp := Response{StatusCode: 999, RequestID: "stale"} // every field is overwritten
			err := tt.call(context.Background(), c, WithResponseInto(&resp))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v", err)
			}
			got := resp
			got.Header, got.IdempotencyKey = nil, ""
			if diff := cmp.Diff(tt.want, got, ignoreObserved); diff != "" {
				t.Errorf("Response (-want +got):\n%s", diff)
			}
			if tt.want.StatusCode != 0 && resp.Header.Get("X-Request-Id") == "" {
				t.Errorf("Header = %v, want the answer's", resp.Header)
			}
			if want := rec.all()[0].Header.Get("Idempotency-Key"); resp.IdempotencyKey != want {
				t.Errorf("IdempotencyKey = %q, want the one sent, %q", resp.IdempotencyKey, want)
			}
			var apiErr *Error
			if errors.As(err, &apiErr) && (apiErr.StatusCode != resp.StatusCode || apiErr.RequestID != resp.RequestID ||
				apiErr.Attempts != resp.Attempts || apiErr.RateLimit != resp.RateLimit) {
				t.Errorf("the *Error %+v and the Response %+v disagree", apiErr, resp)
			}
		})
	}
}

// failingLimiter lets the first n attempts through, then fails, as a
// shared limiter whose store went down would.
type failingLimiter struct {
	mu sync.Mutex
	n  int
}

func (l *failingLimiter) Wait(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.n == 0 {
		return errors.New("limiter store unavailable")
	}
	l.n--
	return nil
}

// cancelAfterAnswer cancels the call's context once an answer has come
// back through it: the retry layer then ends the call instead of waiting.
// (Canceling inside the responder would race with the answer itself.)
type cancelAfterAnswer struct {
	base   http.RoundTripper
	cancel context.CancelFunc
}

func (c cancelAfterAnswer) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(r)
	c.cancel()
	return resp, err
}

// TestWithResponseIntoWhenTheWaitEnds: a call that ends while waiting to
// retry (its context done, its limiter failing) still reports the answer
// its last attempt got, and that answer's request id, which is what the
// caller needs to ask the service about it.
func TestWithResponseIntoWhenTheWaitEnds(t *testing.T) {
	t.Parallel()
	unavailable := []string{"X-Request-Id", "req_503", "X-RateLimit-Limit", "300", "X-RateLimit-Remaining", "7"}
	tests := []struct {
		name    string
		opts    []Option
		cancel  bool // the call's context is canceled once the 503 is in
		wantErr func(error) bool
	}{
		{
			name:    "context canceled before the wait",
			opts:    []Option{WithRetryWait(time.Hour, time.Hour)},
			cancel:  true,
			wantErr: func(err error) bool { return errors.Is(err, context.Canceled) },
		},
		{
			name:    "limiter fails before the retry",
			opts:    []Option{WithLimiter(&failingLimiter{n: 1}), WithRetryWait(time.Millisecond, time.Millisecond)},
			wantErr: func(err error) bool { return err != nil && strings.Contains(err.Error(), "limiter store unavailable") },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			mt := httpmock.NewMockTransport()
			rec := &recorder{}
			mt.RegisterNoResponder(rec.wrap(respond(503, `{}`, unavailable...)))
			var rt http.RoundTripper = mt
			if tt.cancel {
				rt = cancelAfterAnswer{base: mt, cancel: cancel}
			}
			c, err := NewClient(testKey, append([]Option{WithBaseURL(testBase), WithHTTPClient(&http.Client{Transport: rt})}, tt.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			resp := Response{StatusCode: 999, RequestID: "stale"}
			_, err = c.Contexts.Create(ctx, &CreateContextRequest{Name: "n"}, WithResponseInto(&resp))
			if !tt.wantErr(err) {
				t.Fatalf("err = %v", err)
			}
			if rec.count() != 1 {
				t.Fatalf("%d attempts sent, want 1", rec.count())
			}
			got := resp
			got.Header, got.IdempotencyKey, got.RateLimit.Observed = nil, "", time.Time{}
			want := Response{StatusCode: 503, RequestID: "req_503", RateLimit: RateLimit{Limit: 300, Remaining: 7}, Attempts: 1}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Response (-want +got):\n%s", diff)
			}
			if resp.Header.Get("X-Request-Id") != "req_503" || resp.IdempotencyKey == "" {
				t.Errorf("Header %v, IdempotencyKey %q: want the 503's headers and the key sent", resp.Header, resp.IdempotencyKey)
			}
		})
	}
}

// base32Key is what the client's own keys look like: rand.Text.
var base32Key = regexp.MustCompile(`^[A-Z2-7]{26}$`)

func TestIdempotencyKeys(t *testing.T) {
	t.Parallel()
	c, mt, rec := newTestClient(t, WithMaxRetries(2))
	mt.RegisterResponder("POST", testBase+"/contexts", rec.wrap(sequence(
		respond(500, `{}`), httpmock.NewErrorResponder(errors.New("connection reset")), respond(201, ctx1JSON), // call 1
		respond(201, ctx1JSON), // call 2
		respond(201, ctx1JSON), // call 3, the caller's key
	)))
	mt.RegisterResponder("POST", testBase+"/contexts/ctx_1/publish", rec.wrap(respond(200, `{}`)))
	mt.RegisterResponder("PUT", testBase+"/contexts/ctx_1", rec.wrap(respond(200, ctx1JSON)))
	ctx := context.Background()
	for i := range 2 {
		if _, err := c.Contexts.Create(ctx, &CreateContextRequest{Name: "n"}); err != nil {
			t.Fatalf("create %d: %v", i, err)
		}
	}
	if _, err := c.Contexts.Create(ctx, &CreateContextRequest{Name: "n"}, WithIdempotencyKey("order-42: create")); err != nil {
		t.Fatal(err)
	}
	// Do: a POST gets a key; one the request carries is kept.
	req, _ := c.NewRequest(ctx, "POST", "/contexts/ctx_1/publish", nil)
	if _, err := c.Do(ctx, req, nil); err != nil {
		t.Fatal(err)
	}
	req, _ = c.NewRequest(ctx, "POST", "/contexts/ctx_1/publish", nil)
	req.Header.Set("Idempotency-Key", "mine")
	if _, err := c.Do(ctx, req, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Contexts.Update(ctx, "ctx_1", &UpdateContextRequest{Name: Ptr("x")}); err != nil {
		t.Fatal(err)
	}

	var keys []string
	for _, r := range rec.all() {
		keys = append(keys, r.Header.Get("Idempotency-Key"))
	}
	if len(keys) != 8 {
		t.Fatalf("%d requests, want 8: %q", len(keys), keys)
	}
	if keys[0] != keys[1] || keys[1] != keys[2] {
		t.Errorf("the retries of one create carry keys %q, want one key", keys[:3])
	}
	for _, i := range []int{0, 3, 5} {
		if !base32Key.MatchString(keys[i]) {
			t.Errorf("key %q: want 26 base32 characters (130 random bits)", keys[i])
		}
	}
	if keys[3] == keys[0] || keys[5] == keys[0] || keys[5] == keys[3] {
		t.Errorf("two calls share a key: %q", keys)
	}
	if keys[4] != "order-42: create" || keys[6] != "mine" || keys[7] != "" {
		t.Errorf("keys %q: want the caller's, the request's, and none on the PUT", keys[4:])
	}
}

func TestWithRequestMaxRetries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ client, call, want int }{{3, 0, 1}, {1, 4, 5}, {2, 2, 3}} {
		c, mt, rec := newTestClient(t, WithMaxRetries(tc.client))
		mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", rec.wrap(respond(503, `{}`)))
		_, err := c.Contexts.Get(context.Background(), "ctx_1", WithRequestMaxRetries(tc.call))
		var apiErr *Error
		if !errors.As(err, &apiErr) || apiErr.Attempts != tc.want || rec.count() != tc.want {
			t.Errorf("client %d, call %d retries: %d requests, err %v; want %d", tc.client, tc.call, rec.count(), err, tc.want)
		}
		// The client's own setting is untouched.
		if c.rc.RetryMax != tc.client {
			t.Errorf("the client's RetryMax became %d", c.rc.RetryMax)
		}
	}
}

// TestWithAttemptTimeout: an attempt that hangs is cut and retried; the
// next one, answered at once, succeeds. It runs in a synctest bubble over
// net/http's transport and server on an in-memory network, so the
// time-out is exact and no wall-clock time passes.
func TestWithAttemptTimeout(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		calls := 0
		_, hc := servePipe(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			calls++
			n := calls
			mu.Unlock()
			if n == 1 {
				<-r.Context().Done() // hangs until the client gives up
				return
			}
			w.Header().Set("Content-Type", "application/json")
			if r.URL.Path == "/v1/contexts/ctx_1/export" {
				io.WriteString(w, strings.Repeat("x", 100_000))
				return
			}
			io.WriteString(w, ctx1JSON)
		}))
		c, err := NewClient(testKey, WithBaseURL(pipeBase), WithHTTPClient(hc), WithRetryWait(time.Millisecond, time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		var resp Response
		start := time.Now()
		got, err := c.Contexts.Get(context.Background(), "ctx_1", WithAttemptTimeout(200*time.Millisecond), WithResponseInto(&resp))
		if err != nil {
			t.Fatal(err)
		}
		if got.ID != "ctx_1" || resp.Attempts != 2 {
			t.Errorf("got %q after %d attempts, want ctx_1 after 2", got.ID, resp.Attempts)
		}
		// The hanging attempt's 200 ms, then the 1 ms back-off.
		if d := time.Since(start); d != 201*time.Millisecond {
			t.Errorf("the call took %v, want 201ms", d)
		}
		// A streamed export stays readable after the call returns: the
		// time-out ends when its body is closed, not when Export returns.
		exp, err := c.Contexts.Export(context.Background(), "ctx_1", nil, WithAttemptTimeout(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, exp.Body)
		exp.Body.Close()
		if err != nil || n != 100_000 {
			t.Errorf("export body: %d bytes, %v", n, err)
		}
		// Every attempt timing out: a deadline error, not the caller's
		// context.
		mt := httpmock.NewMockTransport()
		mt.RegisterNoResponder(func(r *http.Request) (*http.Response, error) {
			<-r.Context().Done()
			return nil, r.Context().Err()
		})
		c, _ = NewClient(testKey, WithBaseURL(testBase), WithHTTPClient(&http.Client{Transport: mt}), WithRetryWait(time.Millisecond, time.Millisecond), WithMaxRetries(1))
		_, err = c.Contexts.Get(context.Background(), "ctx_1", WithAttemptTimeout(10*time.Millisecond), WithResponseInto(&resp))
		if !errors.Is(err, context.DeadlineExceeded) || resp.Attempts != 2 {
			t.Errorf("err = %v after %d attempts, want DeadlineExceeded after 2", err, resp.Attempts)
		}
	})
}

func TestDeleteAfterLostAnswer(t *testing.T) {
	t.Parallel()
	notFound := respond(404, `{"error":{"type":"not_found","message":"no context"}}`)
	dialErr := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	tests := []struct {
		name      string
		responses []httpmock.Responder
		wantErr   error // nil: success
		attempts  int
	}{
		{"404 at once is not found", []httpmock.Responder{notFound}, ErrNotFound, 1},
		{"500 then 404: deleted by the first", []httpmock.Responder{respond(500, `{}`), notFound}, nil, 2},
		{"502 twice then 404", []httpmock.Responder{respond(502, ``), respond(502, ``), notFound}, nil, 3},
		{"504 then 404", []httpmock.Responder{respond(504, ``), notFound}, nil, 2},
		{"reset after sending then 404", []httpmock.Responder{httpmock.NewErrorResponder(errors.New("connection reset by peer")), notFound}, nil, 2},
		// A 503 says the request was not processed, as a 429 does: a
		// proxy's 503 then the service's 404 is a mistyped id, not a
		// deletion whose answer was lost.
		{"503 then 404 is not found", []httpmock.Responder{respond(503, `{}`), notFound}, ErrNotFound, 2},
		{"503 twice then 404 is not found", []httpmock.Responder{respond(503, `{}`), respond(503, `{}`), notFound}, ErrNotFound, 3},
		{"429 then 404 is not found", []httpmock.Responder{respond(429, `{}`, "Retry-After", "0"), notFound}, ErrNotFound, 2},
		{"503 then 502 then 404", []httpmock.Responder{respond(503, `{}`), respond(502, ``), notFound}, nil, 3},
		{"refused connection then 404 is not found", []httpmock.Responder{httpmock.NewErrorResponder(dialErr), notFound}, ErrNotFound, 2},
		{"500 then 403 stays an error", []httpmock.Responder{respond(500, `{}`), respond(403, `{}`)}, ErrForbidden, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, mt, rec := newTestClient(t)
			mt.RegisterResponder("DELETE", testBase+"/contexts/ctx_1", rec.wrap(sequence(tt.responses...)))
			var resp Response
			res, err := c.Contexts.Delete(context.Background(), "ctx_1", WithResponseInto(&resp))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatalf("err = %v, want success", err)
			} else if diff := cmp.Diff(&DeleteResult{ID: "ctx_1", Deleted: true, Inferred: true}, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if rec.count() != tt.attempts || resp.Attempts != tt.attempts {
				t.Errorf("%d requests, Response.Attempts %d; want %d", rec.count(), resp.Attempts, tt.attempts)
			}
		})
	}
}

// TestDeleteAfterResetOverRealHTTP: net/http's own transport reports that
// the request was written before the connection broke; a connection
// refused before anything was sent is no reason to believe it deleted.
func TestDeleteAfterResetOverRealHTTP(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	deleted := map[string]bool{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/v1/contexts/")
		mu.Lock()
		already := deleted[id]
		deleted[id] = true
		mu.Unlock()
		if already || id == "ctx_missing" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		// Deleted, then the connection breaks before the answer.
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			t.Error(err)
			return
		}
		conn.Close()
	}))
	defer srv.Close()
	c, err := NewClient(testKey, WithBaseURL(srv.URL+"/v1"), WithRetryWait(time.Millisecond, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	var resp Response
	res, err := c.Contexts.Delete(context.Background(), "ctx_1", WithResponseInto(&resp))
	if err != nil || !res.Deleted || !res.Inferred || resp.StatusCode != 404 || resp.Attempts != 2 {
		t.Errorf("Delete after a broken connection: %+v, %v, Response %+v; want success seen through a 404 on attempt 2", res, err, resp)
	}
	if _, err := c.Contexts.Delete(context.Background(), "ctx_missing"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Delete of a missing context: %v, want ErrNotFound", err)
	}
}

// TestDeleteAfterAttemptTimeoutWhileConnecting: an attempt that
// WithAttemptTimeout ends while net/http's transport is still connecting
// sent nothing, so a 404 on the next attempt is the context's own answer:
// ErrNotFound, not a success made up from a lost answer. The transport is
// net/http's, on an in-memory network in a synctest bubble: the time-out
// is exact, and no wall-clock time passes.
func TestDeleteAfterAttemptTimeoutWhileConnecting(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		pn, hc := servePipe(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusNotFound) // no such context, ever
		}))
		var dials atomic.Int32
		pn.dial = func(ctx context.Context, connect func() (net.Conn, error)) (net.Conn, error) {
			if dials.Add(1) == 1 {
				// A connection that never completes, until the attempt's
				// time-out ends the wait.
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return connect()
		}
		c, err := NewClient(testKey, WithBaseURL(pipeBase), WithHTTPClient(hc), WithRetryWait(time.Millisecond, time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		var resp Response
		res, err := c.Contexts.Delete(context.Background(), "ctx_missing", WithAttemptTimeout(250*time.Millisecond), WithResponseInto(&resp))
		if !errors.Is(err, ErrNotFound) || resp.Attempts != 2 {
			t.Errorf("Delete: %+v, %v after %d attempts; want ErrNotFound after 2 (the first never connected)", res, err, resp.Attempts)
		}
	})
}

// unreadable is a request body whose reading fails.
type unreadable struct{}

func (unreadable) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

// TestDoResponseWhenTheBodyCannotBeRead: Do fails before sending because
// the caller's body cannot be read. That is no ErrInvalidArgument, so the
// Response is filled (nothing sent, no answer), not left as an earlier call
// left it.
func TestDoResponseWhenTheBodyCannotBeRead(t *testing.T) {
	t.Parallel()
	c, mt, _ := newTestClient(t)
	ctx := context.Background()
	req, err := c.NewRequest(ctx, "POST", "/contexts", unreadable{})
	if err != nil {
		t.Fatal(err)
	}
	resp := Response{StatusCode: 200, RequestID: "req_earlier", Attempts: 1}
	if _, err := c.Do(ctx, req, nil, WithResponseInto(&resp)); err == nil || errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("err = %v, want a body read error", err)
	}
	if resp.StatusCode != 0 || resp.RequestID != "" || resp.Attempts != 0 || resp.IdempotencyKey == "" {
		t.Errorf("Response %+v: want no answer, no attempt, and the key the request would have carried", resp)
	}
	if n := mt.GetTotalCallCount(); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}
