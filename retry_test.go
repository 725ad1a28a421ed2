package contextsvc

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jarcoal/httpmock"
)

func TestRetryPolicy(t *testing.T) {
	t.Parallel()
	errBody := `{"error":{"type":"x","message":"failed"}}`
	connErr := httpmock.NewErrorResponder(errors.New("connection refused"))
	ok := func(status int) httpmock.Responder { return respond(status, `{"id":"ctx_1"}`) }

	type op struct {
		method string
		url    string
		call   func(context.Context, *Client) error
	}
	get := op{"GET", testBase + "/contexts/ctx_1", func(ctx context.Context, c *Client) error {
		_, err := c.Contexts.Get(ctx, "ctx_1")
		return err
	}}
	put := op{"PUT", testBase + "/contexts/ctx_1", func(ctx context.Context, c *Client) error {
		_, err := c.Contexts.Update(ctx, "ctx_1", &UpdateContextRequest{Content: Ptr("x")})
		return err
	}}
	del := op{"DELETE", testBase + "/contexts/ctx_1", func(ctx context.Context, c *Client) error {
		_, err := c.Contexts.Delete(ctx, "ctx_1")
		return err
	}}
	post := op{"POST", testBase + "/contexts", func(ctx context.Context, c *Client) error {
		_, err := c.Contexts.Create(ctx, &CreateContextRequest{Name: "n"})
		return err
	}}
	hook := op{"POST", testBase + "/webhooks", func(ctx context.Context, c *Client) error {
		_, err := c.Webhooks.Register(ctx, &RegisterWebhookRequest{URL: "https://h.test", Events: []EventType{EventContextCreated}, Secret: "s"})
		return err
	}}

	tests := []struct {
		name      string
		op        op
		responses []httpmock.Responder
		wantCalls int
		wantErr   error // nil: success
	}{
		{"429 then success, GET", get, []httpmock.Responder{respond(429, errBody, "Retry-After", "0"), ok(200)}, 2, nil},
		{"429 then success, POST", post, []httpmock.Responder{respond(429, errBody, "Retry-After", "0"), ok(201)}, 2, nil},
		{"429 with a past HTTP date", get, []httpmock.Responder{respond(429, errBody, "Retry-After", "Sun, 06 Nov 1994 08:49:37 GMT"), ok(200)}, 2, nil},
		{"429 without Retry-After, POST webhook", hook, []httpmock.Responder{respond(429, errBody), respond(201, `{"id":"wh_1"}`)}, 2, nil},
		{"500 on GET retried", get, []httpmock.Responder{respond(500, errBody), ok(200)}, 2, nil},
		{"502 on PUT retried", put, []httpmock.Responder{respond(502, ""), ok(200)}, 2, nil},
		{"503 on DELETE retried", del, []httpmock.Responder{respond(503, errBody), respond(204, "")}, 2, nil},
		{"504 on GET retried", get, []httpmock.Responder{respond(504, errBody), respond(504, errBody), ok(200)}, 3, nil},
		{"transport error on GET retried", get, []httpmock.Responder{connErr, ok(200)}, 2, nil},
		{"transport error on PUT retried", put, []httpmock.Responder{connErr, ok(200)}, 2, nil},
		// Every POST carries an idempotency key, so the service answers a
		// repeat of a processed one from its store: retrying is safe.
		{"500 on POST retried", post, []httpmock.Responder{respond(500, errBody), ok(201)}, 2, nil},
		{"503 on POST webhook retried", hook, []httpmock.Responder{respond(503, errBody), respond(201, `{"id":"wh_1"}`)}, 2, nil},
		{"409 on POST retried", post, []httpmock.Responder{respond(409, `{"error":{"type":"conflict","message":"still running"}}`), ok(201)}, 2, nil},
		{"409 on PUT not retried", put, []httpmock.Responder{respond(409, errBody), ok(200)}, 1, errors.New("any")},
		{"500 on POST exhausted", post, []httpmock.Responder{respond(500, errBody)}, 4, ErrServer},
		{"untrusted certificate not retried", get, []httpmock.Responder{httpmock.NewErrorResponder(&tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}}), ok(200)}, 1, errors.New("any")},
		{"transport error on POST retried", post, []httpmock.Responder{connErr, ok(201)}, 2, nil},
		{"501 not retried", get, []httpmock.Responder{respond(501, errBody), ok(200)}, 1, ErrServer},
		{"400 not retried", get, []httpmock.Responder{respond(400, errBody), ok(200)}, 1, ErrBadRequest},
		{"401 not retried", put, []httpmock.Responder{respond(401, errBody), ok(200)}, 1, ErrUnauthorized},
		{"404 not retried", del, []httpmock.Responder{respond(404, errBody), ok(200)}, 1, ErrNotFound},
		{"exhausted", get, []httpmock.Responder{respond(503, errBody)}, 4, ErrServer},
		{"exhausted on 429", post, []httpmock.Responder{respond(429, errBody, "Retry-After", "0")}, 4, ErrRateLimited},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, mt, rec := newTestClient(t, WithMaxRetries(3))
			mt.RegisterResponder(tt.op.method, tt.op.url, rec.wrap(sequence(tt.responses...)))
			err := tt.op.call(context.Background(), c)
			switch {
			case tt.wantErr == nil && err != nil:
				t.Fatalf("err = %v, want success", err)
			case tt.wantErr != nil && err == nil:
				t.Fatalf("succeeded, want %v", tt.wantErr)
			case tt.wantErr != nil && tt.wantErr.Error() != "any" && !errors.Is(err, tt.wantErr):
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if got := rec.count(); got != tt.wantCalls {
				t.Errorf("%d requests, want %d", got, tt.wantCalls)
			}
			var apiErr *Error
			if errors.As(err, &apiErr) && apiErr.Attempts != tt.wantCalls {
				t.Errorf("Attempts = %d, want %d", apiErr.Attempts, tt.wantCalls)
			}
			// Every attempt carries the same body, credentials and
			// idempotency key (a POST's, none for the other methods).
			reqs := rec.all()
			for _, r := range reqs[1:] {
				if r.Body != reqs[0].Body || r.Header.Get("Authorization") != reqs[0].Header.Get("Authorization") ||
					r.Header.Get("Idempotency-Key") != reqs[0].Header.Get("Idempotency-Key") {
					t.Errorf("retry differs: %q %v vs %q %v", r.Body, r.Header, reqs[0].Body, reqs[0].Header)
				}
			}
			if key := reqs[0].Header.Get("Idempotency-Key"); (key != "") != (tt.op.method == "POST") {
				t.Errorf("%s carries Idempotency-Key %q", tt.op.method, key)
			}
		})
	}
}

func TestExhaustionKeepsLastResponse(t *testing.T) {
	t.Parallel()
	c, mt, _ := newTestClient(t, WithMaxRetries(2))
	last := `{"error":{"type":"internal","message":"third","requestId":"req_3"}}`
	mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", sequence(
		respond(500, `{"error":{"type":"internal","message":"first"}}`),
		respond(503, `{"error":{"type":"internal","message":"second"}}`),
		// The last answer's Retry-After is not waited for (no attempt
		// follows) but the caller gets it, with the rate-limit headers.
		respond(502, last, "Retry-After", "1", "X-RateLimit-Limit", "300", "X-RateLimit-Remaining", "7"),
	))
	_, err := c.Contexts.Get(context.Background(), "ctx_1")
	var apiErr *Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %v, want *Error", err)
	}
	if apiErr.StatusCode != 502 || apiErr.Message != "third" || apiErr.RequestID != "req_3" ||
		apiErr.Attempts != 3 || string(apiErr.Body) != last || apiErr.Type != "internal" ||
		apiErr.RetryAfter != time.Second || apiErr.RateLimit.Limit != 300 || apiErr.RateLimit.Remaining != 7 {
		t.Errorf("got %+v", apiErr)
	}
	if want := "contextsvc: 502 internal: third (request req_3, 3 attempts)"; err.Error() != want {
		t.Errorf("Error() = %q, want %q", err.Error(), want)
	}
}

// The tests that wait run in a synctest bubble: the retry layer's timers
// and the client's clock are the bubble's, so a wait takes no real time
// and its length is exact.

func TestRetryAfterOverMaxReturnsAtOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		c, mt, rec := newTestClient(t, WithRetryWait(time.Millisecond, 2*time.Second))
		date := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
		for _, ra := range []string{"120", date} {
			mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", rec.wrap(respond(429,
				`{"error":{"type":"rate_limited","message":"slow down"}}`, "Retry-After", ra)))
			before := rec.count()
			start := time.Now()
			_, err := c.Contexts.Get(context.Background(), "ctx_1")
			var apiErr *Error
			if !errors.As(err, &apiErr) || !errors.Is(err, ErrRateLimited) {
				t.Fatalf("Retry-After %s: err = %v, want a rate-limit *Error", ra, err)
			}
			want := 120 * time.Second
			if ra == date {
				want = time.Hour
			}
			if apiErr.RetryAfter != want {
				t.Errorf("Retry-After %s: RetryAfter = %v, want %v", ra, apiErr.RetryAfter, want)
			}
			if n := rec.count() - before; n != 1 || apiErr.Attempts != 1 {
				t.Errorf("Retry-After %s: %d requests, Attempts %d; want 1", ra, n, apiErr.Attempts)
			}
			if d := time.Since(start); d != 0 {
				t.Errorf("Retry-After %s: took %v, want an immediate return", ra, d)
			}
		}
	})
}

func TestRetryAfterHonoured(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// The server's 1 s must win over the 1 ms back-off.
		c, mt, rec := newTestClient(t, WithRetryWait(time.Millisecond, 5*time.Second))
		mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", rec.wrap(sequence(
			respond(429, `{}`, "Retry-After", "1"),
			respond(200, `{"id":"ctx_1"}`),
		)))
		start := time.Now()
		if _, err := c.Contexts.Get(context.Background(), "ctx_1"); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("retried after %v, want the 1 s Retry-After", d)
		}
		if n := rec.count(); n != 2 {
			t.Errorf("%d requests, want 2", n)
		}
	})
}

func TestCancelDuringRetryWait(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// The back-off is 30 s; cancelling must end the call at once.
		c, mt, _ := newTestClient(t, WithRetryWait(30*time.Second, 30*time.Second))
		answered := make(chan struct{}, 4)
		mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", func(r *http.Request) (*http.Response, error) {
			answered <- struct{}{}
			return respond(503, `{}`)(r)
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			_, err := c.Contexts.Get(ctx, "ctx_1")
			done <- err
		}()
		<-answered
		synctest.Wait() // the call is waiting out its back-off
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("the call returned %v after it started, want at once", d)
		}
		if n := len(answered); n != 0 {
			t.Errorf("%d more attempts after cancel", n)
		}
	})
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	minW, maxW := 100*time.Millisecond, 2*time.Second
	for attempt := range 10 {
		ceiling := min(maxW, minW<<attempt)
		for range 200 {
			d := backoff(minW, maxW, attempt, nil)
			if d < minW || d > ceiling {
				t.Fatalf("attempt %d: wait %v outside [%v, %v]", attempt, d, minW, ceiling)
			}
		}
	}
	// Full jitter: later attempts spread over the whole range.
	var low, high bool
	for range 500 {
		d := backoff(minW, maxW, 8, nil)
		low = low || d < 500*time.Millisecond
		high = high || d > 1500*time.Millisecond
	}
	if !low || !high {
		t.Errorf("waits not spread over [min, max]: low %v high %v", low, high)
	}
	resp := &http.Response{Header: http.Header{"Retry-After": {"1"}}}
	if d := backoff(minW, maxW, 0, resp); d != time.Second {
		t.Errorf("Retry-After 1: wait %v", d)
	}
	if d := backoff(0, 0, 5, nil); d != 0 {
		t.Errorf("zero waits: %v", d)
	}
	if d := backoff(minW, maxW, 200, nil); d < minW || d > maxW {
		t.Errorf("huge attempt: %v", d)
	}
}

// TestRetryMatrix checks every (method, failure) pair of the policy: 429 is
// retried for every method; 500, 502, 503, 504 and transport errors for
// GET, HEAD, OPTIONS, PUT, DELETE and POST (which always carries an
// idempotency key), never for PATCH; 409 for POST only.
func TestRetryMatrix(t *testing.T) {
	t.Parallel()
	calls := map[string]func(context.Context, *Client) error{
		"GET": func(ctx context.Context, c *Client) error { _, err := c.Contexts.Get(ctx, "ctx_1"); return err },
		"PUT": func(ctx context.Context, c *Client) error {
			_, err := c.Contexts.Update(ctx, "ctx_1", &UpdateContextRequest{Name: Ptr("n")})
			return err
		},
		"DELETE": func(ctx context.Context, c *Client) error { _, err := c.Contexts.Delete(ctx, "ctx_1"); return err },
		"POST": func(ctx context.Context, c *Client) error {
			_, err := c.Contexts.Create(ctx, &CreateContextRequest{Name: "n"})
			return err
		},
	}
	for _, m := range []string{"HEAD", "OPTIONS", "PATCH"} {
		calls[m] = func(ctx context.Context, c *Client) error {
			req, err := c.NewRequest(ctx, m, "/contexts/ctx_1", nil)
			if err != nil {
				return err
			}
			_, err = c.Do(ctx, req, nil)
			return err
		}
	}
	failures := map[string]httpmock.Responder{
		"429":       respond(429, `{}`, "Retry-After", "0"),
		"500":       respond(500, `{}`),
		"502":       respond(502, `{}`),
		"503":       respond(503, `{}`),
		"504":       respond(504, `{}`),
		"transport": httpmock.NewErrorResponder(errors.New("connection reset by peer")),
		"409":       respond(409, `{}`),
	}
	for method, call := range calls {
		for failure, fail := range failures {
			want := 2 // the failure, then the success
			if method == "PATCH" && failure != "429" || failure == "409" && method != "POST" {
				want = 1
			}
			t.Run(method+" "+failure, func(t *testing.T) {
				t.Parallel()
				c, mt, rec := newTestClient(t, WithMaxRetries(1))
				u := testBase + "/contexts/ctx_1"
				if method == "POST" {
					u = testBase + "/contexts"
				}
				mt.RegisterResponder(method, u, rec.wrap(sequence(fail, respond(200, `{"id":"ctx_1"}`))))
				err := call(context.Background(), c)
				if got := rec.count(); got != want {
					t.Errorf("%d attempts, want %d (err %v)", got, want, err)
				}
				if (err == nil) != (want == 2) {
					t.Errorf("err = %v after %d attempts", err, rec.count())
				}
			})
		}
	}
}

func TestCancelledDuringAttemptIsNotRetried(t *testing.T) {
	t.Parallel()
	// The context ends while the request is in flight and the server then
	// answers 503: a GET that would otherwise be retried must not be.
	c, mt, rec := newTestClient(t, WithMaxRetries(3))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", rec.wrap(func(r *http.Request) (*http.Response, error) {
		cancel()
		return respond(503, `{}`)(r)
	}))
	_, err := c.Contexts.Get(ctx, "ctx_1")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	if n := rec.count(); n != 1 {
		t.Errorf("%d attempts, want 1", n)
	}

	// The policy itself, without retryablehttp's own wait (which also
	// watches the context, but races a zero wait): a cancelled context
	// stops even a 429 with Retry-After: 0, and a transport error.
	cs := &callState{Context: ctx, method: http.MethodGet}
	for _, resp := range []*http.Response{
		{StatusCode: 429, Header: http.Header{"Retry-After": {"0"}}},
		{StatusCode: 503, Header: http.Header{}},
	} {
		if retry, err := c.checkRetry(cs, resp, nil); retry || !errors.Is(err, context.Canceled) {
			t.Errorf("checkRetry(cancelled, %d) = %v, %v; want false, context.Canceled", resp.StatusCode, retry, err)
		}
	}
	if retry, err := c.checkRetry(cs, nil, errors.New("connection reset")); retry || !errors.Is(err, context.Canceled) {
		t.Errorf("checkRetry(cancelled, transport error) = %v, %v; want false, context.Canceled", retry, err)
	}
}

func TestBackoffRetryAfterDate(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		// The bubble's clock starts on a whole second and stands still,
		// so a date 3 s ahead is a wait of exactly 3 s.
		date := time.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat)
		resp := &http.Response{Header: http.Header{"Retry-After": {date}}}
		if d := backoff(time.Millisecond, 10*time.Second, 0, resp); d != 3*time.Second {
			t.Errorf("Retry-After %s: wait %v, want 3 s", date, d)
		}
	})
	// A date in the past means "now", which the minimum wait keeps from
	// being no wait at all.
	past := &http.Response{Header: http.Header{"Retry-After": {"Sun, 06 Nov 1994 08:49:37 GMT"}}}
	if d := backoff(time.Millisecond, 10*time.Second, 0, past); d != time.Millisecond {
		t.Errorf("past date: wait %v, want the 1 ms minimum", d)
	}
}
