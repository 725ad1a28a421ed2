package contextsvc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"

	"github.com/contextsvc/contextsvc-go/internal/syncbuf"
)

const (
	testBase = "https://api.example.test/v1"
	testKey  = "sk_test_0123456789abcdef"
)

// recorded is what a test responder saw of one request.
type recorded struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   string
}

// recorder keeps every request the mock transport received, in order.
type recorder struct {
	mu   sync.Mutex
	reqs []recorded
}

func (r *recorder) wrap(next httpmock.Responder) httpmock.Responder {
	return func(req *http.Request) (*http.Response, error) {
		var body []byte
		if req.Body != nil {
			body, _ = io.ReadAll(req.Body)
		}
		r.mu.Lock()
		r.reqs = append(r.reqs, recorded{
			Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery,
			Header: req.Header.Clone(), Body: string(body),
		})
		r.mu.Unlock()
		return next(req)
	}
}

func (r *recorder) all() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.reqs...)
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.reqs)
}

// respond answers with status, a JSON body and headers given as name,
// value pairs; every answer carries a request id like the service's.
func respond(status int, body string, headers ...string) httpmock.Responder {
	return func(*http.Request) (*http.Response, error) {
		resp := httpmock.NewStringResponse(status, body)
		if body != "" {
			resp.Header.Set("Content-Type", "application/json")
		}
		resp.Header.Set("X-Request-Id", "req_test")
		for i := 0; i+1 < len(headers); i += 2 {
			resp.Header.Set(headers[i], headers[i+1])
		}
		return resp, nil
	}
}

// sequence answers each request with the next responder, repeating the last.
func sequence(rs ...httpmock.Responder) httpmock.Responder {
	var mu sync.Mutex
	i := 0
	return func(req *http.Request) (*http.Response, error) {
		mu.Lock()
		r := rs[min(i, len(rs)-1)]
		i++
		mu.Unlock()
		return r(req)
	}
}

// newTestClient returns a client on a mock transport with millisecond retry
// waits, and the recorder that every responder registered through it uses.
func newTestClient(t *testing.T, opts ...Option) (*Client, *httpmock.MockTransport, *recorder) {
	t.Helper()
	mt := httpmock.NewMockTransport()
	base := []Option{
		WithBaseURL(testBase),
		WithHTTPClient(&http.Client{Transport: mt}),
		WithRetryWait(time.Millisecond, 5*time.Millisecond),
	}
	c, err := NewClient(testKey, append(base, opts...)...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c, mt, &recorder{}
}

func TestNewClientConfiguration(t *testing.T) {
	// Not parallel: subtests set environment variables.
	tests := []struct {
		name    string
		key     string
		envKey  string
		envBase string
		opts    []Option
		wantErr string // empty: success
		wantURL string
		secret  string // must not appear in the error ("bad key" never may)
	}{
		{name: "explicit", key: "k", opts: []Option{WithBaseURL("https://x.test/v1")}, wantURL: "https://x.test/v1"},
		{name: "trailing slash", key: "k", opts: []Option{WithBaseURL("https://x.test/api/v1/")}, wantURL: "https://x.test/api/v1"},
		{name: "key from env", envKey: "envkey", opts: []Option{WithBaseURL("http://127.0.0.1:8080/v1")}, wantURL: "http://127.0.0.1:8080/v1"},
		{name: "base from env", key: "k", envBase: "https://env.test/v1", wantURL: "https://env.test/v1"},
		{name: "option beats env", key: "k", envBase: "https://env.test/v1", opts: []Option{WithBaseURL("https://opt.test/v1")}, wantURL: "https://opt.test/v1"},
		{name: "no key", opts: []Option{WithBaseURL("https://x.test/v1")}, wantErr: "no API key"},
		{name: "no base", key: "k", wantErr: "no base URL"},
		{name: "missing v1", key: "k", opts: []Option{WithBaseURL("https://x.test/api")}, wantErr: "must end in /v1"},
		{name: "relative", key: "k", opts: []Option{WithBaseURL("/v1")}, wantErr: "absolute http or https"},
		{name: "ftp", key: "k", opts: []Option{WithBaseURL("ftp://x.test/v1")}, wantErr: "absolute http or https"},
		{name: "query", key: "k", opts: []Option{WithBaseURL("https://x.test/v1?a=b")}, wantErr: "query"},
		// Credentials put into the URL by mistake are not repeated.
		{name: "key in query", key: "k", opts: []Option{WithBaseURL("https://x.test/v1?api_key=bad key")}, wantErr: `"https://x.test/v1?api_key=…": must not carry`},
		// Without a scheme url.Parse reads "localhost" as one; the error
		// says what the caller typed and what was probably meant.
		{name: "no scheme, localhost", key: "k", opts: []Option{WithBaseURL("localhost:8080/v1")},
			wantErr: `base URL "localhost:8080/v1" has no scheme: did you mean "http://localhost:8080/v1"?`},
		{name: "no scheme, loopback IP", key: "k", opts: []Option{WithBaseURL("127.0.0.1:8080/v1")}, wantErr: `did you mean "http://127.0.0.1:8080/v1"?`},
		{name: "no scheme, IPv6 loopback", key: "k", opts: []Option{WithBaseURL("[::1]:8080/v1")}, wantErr: `did you mean "http://[::1]:8080/v1"?`},
		{name: "no scheme, public host", key: "k", opts: []Option{WithBaseURL("api.example.com/v1")}, wantErr: `did you mean "https://api.example.com/v1"?`},
		{name: "no scheme, credentials", key: "k", opts: []Option{WithBaseURL("u:sk_hidden@localhost:8080/v1?key=bad key&debug")},
			wantErr: `base URL "localhost:8080/v1?key=…&debug" has no scheme`, secret: "sk_hidden"},
		{name: "scheme typo", key: "k", opts: []Option{WithBaseURL("http:/x.test/v1")}, wantErr: `"http:/x.test/v1": need an absolute http or https URL`},
		// A mistyped "://": the error says what was probably meant.
		{name: "scheme without colon", key: "k", opts: []Option{WithBaseURL("http//x/v1")}, wantErr: `base URL "http//x/v1": need an absolute http or https URL: did you mean "http://x/v1"?`},
		{name: "https without colon", key: "k", opts: []Option{WithBaseURL("https//localhost:8080/v1")}, wantErr: `did you mean "https://localhost:8080/v1"?`},
		{name: "scheme with one slash", key: "k", opts: []Option{WithBaseURL("http:/localhost:8080/v1")}, wantErr: `did you mean "http://localhost:8080/v1"?`},
		{name: "scheme without slashes", key: "k", opts: []Option{WithBaseURL("HTTPS:api.example.com/v1")}, wantErr: `did you mean "https://api.example.com/v1"?`},
		{name: "three slashes", key: "k", opts: []Option{WithBaseURL("http:///x/v1")}, wantErr: `did you mean "http://x/v1"?`},
		{name: "a host starting with http", key: "k", opts: []Option{WithBaseURL("httpbin.example/v1")}, wantErr: `did you mean "https://httpbin.example/v1"?`},
		{name: "trailing newline", key: "k", opts: []Option{WithBaseURL("http://localhost:8080/v1\n")}, wantErr: `base URL "http://localhost:8080/v1\n" starts or ends with white space`},
		{name: "leading space", key: "k", opts: []Option{WithBaseURL(" https://x.test/v1")}, wantErr: "white space"},
		// A mistyped "://" must not expose the user info either.
		{name: "password, scheme without colon", key: "k", opts: []Option{WithBaseURL("http//u:sk_hidden@x.test/v1")}, wantErr: `base URL "http//x.test/v1": need an absolute http or https URL: did you mean "http://x.test/v1"?`, secret: "sk_hidden"},
		{name: "password, scheme with one slash", key: "k", opts: []Option{WithBaseURL("https:/u:sk_hidden@x.test/v1")}, wantErr: `base URL "https:/x.test/v1"`, secret: "sk_hidden"},
		{name: "password with a slash", key: "k", opts: []Option{WithBaseURL("https://u:sk/hidden@x.test/v1?a=1")}, wantErr: "base URL", secret: "hidden"},
		{name: "password", key: "k", opts: []Option{WithBaseURL("https://u:sk_hidden@x.test/v1")}, wantErr: "user info", secret: "sk_hidden"},
		{name: "password, wrong scheme", key: "k", opts: []Option{WithBaseURL("ftp://u:sk_hidden@x.test/v1")}, wantErr: "absolute http or https", secret: "sk_hidden"},
		{name: "password, no v1", key: "k", opts: []Option{WithBaseURL("https://u:sk_hidden@x.test/")}, wantErr: "user info", secret: "sk_hidden"},
		{name: "bad user info", key: "k", opts: []Option{WithBaseURL("https://u:bad key@x.test/v1")}, wantErr: "invalid userinfo"},
		{name: "unparsable", key: "k", opts: []Option{WithBaseURL("https://x.test/v1?bad key=%zz\x7f")}, wantErr: "base URL"},
		{name: "key with space", key: "bad key", opts: []Option{WithBaseURL("https://x.test/v1")}, wantErr: "spaces or control"},
		{name: "negative retries", key: "k", opts: []Option{WithBaseURL("https://x.test/v1"), WithMaxRetries(-1)}, wantErr: "WithMaxRetries"},
		{name: "min over max", key: "k", opts: []Option{WithBaseURL("https://x.test/v1"), WithRetryWait(2*time.Second, time.Second)}, wantErr: "WithRetryWait"},
		{name: "zero plan", key: "k", opts: []Option{WithBaseURL("https://x.test/v1"), WithPlan(Plan{})}, wantErr: "positive rate"},
		{name: "nil http client", key: "k", opts: []Option{WithBaseURL("https://x.test/v1"), WithHTTPClient(nil)}, wantErr: "WithHTTPClient"},
		{name: "user agent newline", key: "k", opts: []Option{WithBaseURL("https://x.test/v1"), WithUserAgent("a\r\nX: y")}, wantErr: "line break"},
		{name: "empty user agent", key: "k", opts: []Option{WithBaseURL("https://x.test/v1"), WithUserAgent(" ")}, wantErr: "empty product token"},
		{name: "empty base URL option", key: "k", opts: []Option{WithBaseURL("")}, wantErr: "WithBaseURL"},
		{name: "zero response bound", key: "k", opts: []Option{WithBaseURL("https://x.test/v1"), WithMaxResponseBytes(0)}, wantErr: "WithMaxResponseBytes"},
		{name: "negative response bound", key: "k", opts: []Option{WithBaseURL("https://x.test/v1"), WithMaxResponseBytes(-1)}, wantErr: "WithMaxResponseBytes"},
		{name: "zero call bound", key: "k", opts: []Option{WithBaseURL("https://x.test/v1"), WithCallTimeout(0)}, wantErr: "WithCallTimeout(0s): must be positive"},
		{name: "negative call bound", key: "k", opts: []Option{WithBaseURL("https://x.test/v1"), WithCallTimeout(-time.Second)}, wantErr: "WithCallTimeout(-1s)"},
		{name: "zero header bound", key: "k", opts: []Option{WithBaseURL("https://x.test/v1"), WithHeaderTimeout(0)}, wantErr: "WithHeaderTimeout(0s): must be positive"},
		{name: "negative header bound", key: "k", opts: []Option{WithBaseURL("https://x.test/v1"), WithHeaderTimeout(-1)}, wantErr: "WithHeaderTimeout(-1ns)"},
		{name: "zero stall bound", key: "k", opts: []Option{WithBaseURL("https://x.test/v1"), WithStallTimeout(0)}, wantErr: "WithStallTimeout(0s): must be positive"},
		{name: "negative stall bound", key: "k", opts: []Option{WithBaseURL("https://x.test/v1"), WithStallTimeout(-time.Minute)}, wantErr: "WithStallTimeout(-1m0s)"},
		{name: "bounds", key: "k", opts: []Option{WithBaseURL("https://x.test/v1"), WithCallTimeout(time.Hour), WithHeaderTimeout(time.Nanosecond), WithStallTimeout(time.Second)},
			wantURL: "https://x.test/v1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvAPIKey, tt.envKey)
			t.Setenv(EnvBaseURL, tt.envBase)
			c, err := NewClient(tt.key, tt.opts...)
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("NewClient succeeded, want error containing %q", tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) || !errors.Is(err, ErrInvalidArgument) {
					t.Fatalf("error %q: want one containing %q that is ErrInvalidArgument", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "bad key") || tt.secret != "" && strings.Contains(err.Error(), tt.secret) {
					t.Fatalf("error %q repeats a credential", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("NewClient: %v", err)
			}
			if got := c.BaseURL(); got != tt.wantURL {
				t.Errorf("BaseURL() = %q, want %q", got, tt.wantURL)
			}
		})
	}
}

func TestClientFormattingRedactsKey(t *testing.T) {
	t.Parallel()
	c, _, _ := newTestClient(t, WithPlan(ProPlan()), WithUserAgent("app/1"))
	outputs := map[string]string{
		"%v ptr":   fmt.Sprintf("%v", c),
		"%+v ptr":  fmt.Sprintf("%+v", c),
		"%#v ptr":  fmt.Sprintf("%#v", c),
		"%s ptr":   fmt.Sprintf("%s", c),
		"%v val":   fmt.Sprintf("%v", *c),
		"%+v val":  fmt.Sprintf("%+v", *c),
		"%#v val":  fmt.Sprintf("%#v", *c),
		"%q val":   fmt.Sprintf("%q", *c),
		"String":   c.String(),
		"GoString": c.GoString(),
		"in slice": fmt.Sprintf("%+v", []*Client{c}),
		"services": fmt.Sprintf("%+v %+v %#v", c.Contexts, c.Webhooks, c.Contexts),
	}
	for name, out := range outputs {
		if strings.Contains(out, testKey) || strings.Contains(out, "Bearer") {
			t.Errorf("%s leaks the key: %s", name, out)
		}
	}
	if !strings.Contains(outputs["%v ptr"], "[REDACTED]") || !strings.Contains(outputs["%v ptr"], testBase) {
		t.Errorf("%%v = %q, want the base URL and [REDACTED]", outputs["%v ptr"])
	}
}

func TestRequestHeaders(t *testing.T) {
	t.Parallel()
	c, mt, rec := newTestClient(t, WithUserAgent("myapp/1.2"))
	mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", rec.wrap(respond(200, `{"id":"ctx_1"}`)))
	mt.RegisterResponder("POST", testBase+"/contexts", rec.wrap(respond(201, `{"id":"ctx_2"}`)))
	ctx := context.Background()
	if _, err := c.Contexts.Get(ctx, "ctx_1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Contexts.Create(ctx, &CreateContextRequest{Name: "n"}); err != nil {
		t.Fatal(err)
	}
	reqs := rec.all()
	if len(reqs) != 2 {
		t.Fatalf("got %d requests, want 2", len(reqs))
	}
	for _, r := range reqs {
		if got, want := r.Header.Get("Authorization"), "Bearer "+testKey; got != want {
			t.Errorf("%s Authorization = %q, want %q", r.Method, got, want)
		}
		if got, want := r.Header.Get("User-Agent"), "myapp/1.2 "+DefaultUserAgent; got != want {
			t.Errorf("%s User-Agent = %q, want %q", r.Method, got, want)
		}
		if got := r.Header.Get("Accept"); got != "application/json" {
			t.Errorf("%s Accept = %q", r.Method, got)
		}
	}
	if got := reqs[0].Header.Get("Content-Type"); got != "" {
		t.Errorf("GET carries Content-Type %q", got)
	}
	if got := reqs[1].Header.Get("Content-Type"); got != "application/json" {
		t.Errorf("POST Content-Type = %q, want application/json", got)
	}
}

func TestDefaultUserAgent(t *testing.T) {
	t.Parallel()
	c, mt, rec := newTestClient(t)
	mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", rec.wrap(respond(200, `{"id":"ctx_1"}`)))
	if _, err := c.Contexts.Get(context.Background(), "ctx_1"); err != nil {
		t.Fatal(err)
	}
	if got := rec.all()[0].Header.Get("User-Agent"); got != DefaultUserAgent {
		t.Errorf("User-Agent = %q, want %q", got, DefaultUserAgent)
	}
}

func TestDo(t *testing.T) {
	t.Parallel()
	c, mt, rec := newTestClient(t)
	mt.RegisterResponder("POST", testBase+"/contexts/ctx_1/publish", rec.wrap(respond(200, `{"ok":true,"n":3}`)))
	mt.RegisterResponder("GET", testBase+"/contexts/ctx_1/raw", rec.wrap(respond(200, "raw text")))
	mt.RegisterResponder("GET", testBase+"/contexts/ctx_404", rec.wrap(respond(404, `{"error":{"type":"not_found","message":"no"}}`)))
	ctx := context.Background()

	t.Run("json", func(t *testing.T) {
		req, err := c.NewRequest(ctx, "POST", "contexts/ctx_1/publish", map[string]string{"note": "x"})
		if err != nil {
			t.Fatal(err)
		}
		if out := fmt.Sprintf("%+v", req); strings.Contains(out, testKey) {
			t.Errorf("the request from NewRequest shows the key: %s", out)
		}
		// The caller owns the request's headers; changing them in place
		// must not reach the client's other requests.
		req.Header["Accept"][0] = "text/x-changed"
		var out struct {
			OK bool `json:"ok"`
			N  int  `json:"n"`
		}
		resp, err := c.Do(ctx, req, &out)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || !out.OK || out.N != 3 {
			t.Errorf("got status %d, %+v", resp.StatusCode, out)
		}
		if headerAcceptJSON[0] != "application/json" {
			t.Errorf("changing a NewRequest header changed the client's own: %q", headerAcceptJSON[0])
		}
	})
	t.Run("writer", func(t *testing.T) {
		req, err := c.NewRequest(ctx, "GET", "/contexts/ctx_1/raw", nil)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if _, err := c.Do(ctx, req, &buf); err != nil {
			t.Fatal(err)
		}
		if buf.String() != "raw text" {
			t.Errorf("body %q", buf.String())
		}
	})
	t.Run("plain request gets auth", func(t *testing.T) {
		req, err := http.NewRequest("GET", testBase+"/contexts/ctx_1/raw", nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Do(ctx, req, nil); err != nil {
			t.Fatal(err)
		}
		if req.Header.Get("Authorization") != "" {
			t.Error("Do changed the caller's request headers")
		}
	})
	t.Run("error", func(t *testing.T) {
		req, _ := c.NewRequest(ctx, "GET", "contexts/ctx_404", nil)
		_, err := c.Do(ctx, req, nil)
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
	})
	t.Run("outside base URL", func(t *testing.T) {
		for _, u := range []string{"https://evil.test/v1/contexts", "http://api.example.test/v1/contexts", "https://api.example.test/v2/contexts", "https://api.example.test/v10"} {
			req, _ := http.NewRequest("GET", u, nil)
			if _, err := c.Do(ctx, req, nil); !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("Do(%s) = %v, want ErrInvalidArgument", u, err)
			}
		}
	})

	want := []recorded{
		{Method: "POST", Path: "/v1/contexts/ctx_1/publish", Body: `{"note":"x"}`},
		{Method: "GET", Path: "/v1/contexts/ctx_1/raw"},
		{Method: "GET", Path: "/v1/contexts/ctx_1/raw"},
		{Method: "GET", Path: "/v1/contexts/ctx_404"},
	}
	got := rec.all()
	for _, r := range got {
		if r.Header.Get("Authorization") != "Bearer "+testKey {
			t.Errorf("%s %s without the key", r.Method, r.Path)
		}
	}
	if diff := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Header" }, cmp.Ignore())); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
}

func TestRateLimitHeadersAreKept(t *testing.T) {
	t.Parallel()
	c, mt, _ := newTestClient(t, WithMaxRetries(0))
	mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", sequence(
		respond(200, `{"id":"ctx_1"}`, "X-RateLimit-Limit", "300", "X-RateLimit-Remaining", "49", "X-RateLimit-Reset", "1"),
		respond(429, `{"error":{"type":"rate_limited","message":"slow down"}}`,
			"X-RateLimit-Limit", "300", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "10", "Retry-After", "1"),
	))
	if got := c.RateLimit(); got != (RateLimit{}) {
		t.Errorf("before any call RateLimit() = %+v, want zero", got)
	}
	before := time.Now()
	if _, err := c.Contexts.Get(context.Background(), "ctx_1"); err != nil {
		t.Fatal(err)
	}
	rl := c.RateLimit()
	if diff := cmp.Diff(RateLimit{Limit: 300, Remaining: 49, Reset: time.Second}, rl, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Observed" }, cmp.Ignore())); diff != "" {
		t.Errorf("RateLimit (-want +got):\n%s", diff)
	}
	if rl.Observed.Before(before) {
		t.Errorf("Observed %v before the call %v", rl.Observed, before)
	}
	_, err := c.Contexts.Get(context.Background(), "ctx_1")
	var apiErr *Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("err = %v, want *Error", err)
	}
	if apiErr.RateLimit.Remaining != 0 || apiErr.RateLimit.Reset != 10*time.Second || apiErr.RetryAfter != time.Second {
		t.Errorf("error rate limit %+v retry after %v", apiErr.RateLimit, apiErr.RetryAfter)
	}
	if got := c.RateLimit(); got.Remaining != 0 || got.Reset != 10*time.Second {
		t.Errorf("after 429 RateLimit() = %+v", got)
	}
}

func TestRateLimitConcurrentReads(t *testing.T) {
	t.Parallel()
	c, mt, _ := newTestClient(t)
	mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", respond(200, `{"id":"ctx_1"}`, "X-RateLimit-Limit", "60", "X-RateLimit-Remaining", "5"))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				if _, err := c.Contexts.Get(context.Background(), "ctx_1"); err != nil {
					t.Error(err)
					return
				}
				if rl := c.RateLimit(); rl.Limit != 60 {
					t.Errorf("RateLimit().Limit = %d", rl.Limit)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestLoggingNeverShowsKey(t *testing.T) {
	t.Parallel()
	var buf syncbuf.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c, mt, _ := newTestClient(t, WithLogger(logger), WithMaxRetries(2))
	// A transport error whose text carries the key: the adapter must scrub it.
	mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", sequence(
		httpmock.NewErrorResponder(errors.New("proxy echoed Authorization: Bearer "+testKey)),
		respond(503, `{}`),
		respond(200, `{"id":"ctx_1"}`),
	))
	if _, err := c.Contexts.Get(context.Background(), "ctx_1"); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, "retrying request") {
		t.Errorf("log does not mention the retries:\n%s", out)
	}
	if strings.Contains(out, testKey) {
		t.Errorf("log shows the key:\n%s", out)
	}
}

func TestSilentByDefault(t *testing.T) {
	t.Parallel()
	c, _, _ := newTestClient(t)
	if c.rc.Logger != nil {
		t.Fatalf("retryablehttp logger = %#v, want none", c.rc.Logger)
	}
}

func TestTransportErrors(t *testing.T) {
	t.Parallel()
	c, mt, rec := newTestClient(t, WithMaxRetries(1))
	boom := errors.New("connection reset")
	mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", rec.wrap(httpmock.NewErrorResponder(boom)))
	_, err := c.Contexts.Get(context.Background(), "ctx_1")
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v, want it to wrap %v", err, boom)
	}
	if !strings.Contains(err.Error(), "GET /contexts/ctx_1 (after 2 attempts)") {
		t.Errorf("err = %q, want the call and the attempts named", err)
	}
	if strings.Contains(err.Error(), testKey) {
		t.Errorf("err shows the key: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Contexts.Get(ctx, "ctx_1")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err = %v, want context.Canceled", err)
	}
}

func TestWithHTTPClientLeavesCallersClientAlone(t *testing.T) {
	t.Parallel()
	mt := httpmock.NewMockTransport()
	mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", respond(200, `{"id":"ctx_1"}`))
	hc := &http.Client{Transport: mt, Timeout: 7 * time.Second}
	c, err := NewClient(testKey, WithBaseURL(testBase), WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Contexts.Get(context.Background(), "ctx_1"); err != nil {
		t.Fatal(err)
	}
	if hc.Transport != mt {
		t.Error("NewClient replaced the caller's transport")
	}
	if c.rc.HTTPClient.Timeout != 7*time.Second {
		t.Errorf("Timeout = %v, want the caller's 7s", c.rc.HTTPClient.Timeout)
	}
	if mt.GetTotalCallCount() != 1 {
		t.Errorf("the caller's transport saw %d calls, want 1", mt.GetTotalCallCount())
	}
	if _, err := c.Do(context.Background(), nil, nil); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Do(nil) = %v, want ErrInvalidArgument", err)
	}
}

func TestOverRealHTTP(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+testKey {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch {
		case r.URL.Path == "/v1/contexts/ctx_1/export":
			w.Header().Set("Content-Type", "text/markdown; charset=utf-8")
			w.Header().Set("Content-Disposition", `attachment; filename="notes-v2.md"`)
			w.Header().Set("Content-Length", "50000")
			io.WriteString(w, strings.Repeat("line\n", 10000))
		case n == 1:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":{"type":"internal","message":"busy"}}`)
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"ctx_1","version":2}`)
		}
	}))
	defer srv.Close()
	c, err := NewClient(testKey, WithBaseURL(srv.URL+"/v1/"), WithRetryWait(time.Millisecond, 5*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Contexts.Get(context.Background(), "ctx_1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 2 || calls != 2 {
		t.Errorf("version %d after %d calls", got.Version, calls)
	}
	exp, err := c.Contexts.Export(context.Background(), "ctx_1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer exp.Body.Close()
	n, err := io.Copy(io.Discard, exp.Body)
	if err != nil || n != 50000 || exp.Filename != "notes-v2.md" || exp.ContentLength != 50000 {
		t.Errorf("export: %d bytes (%v), name %q, length %d", n, err, exp.Filename, exp.ContentLength)
	}
}

func TestErrorsNeverShowKey(t *testing.T) {
	t.Parallel()
	fullURL := testBase + "/contexts/ctx_1"
	tests := []struct {
		name    string
		respond httpmock.Responder
		wantIs  error
	}{
		// A proxy's or custom transport's error text that quotes the URL
		// and the request's headers.
		{"transport error", httpmock.NewErrorResponder(fmt.Errorf("proxy refused Get %s with Authorization: Bearer %s", fullURL, testKey)), nil},
		// An endpoint that echoes the request into its error body.
		{"error body", respond(400, `{"error":{"type":"invalid_request","message":"bad header Authorization: Bearer `+testKey+`"}}`), ErrBadRequest},
		{"error body not JSON", respond(502, "upstream saw Bearer "+testKey), ErrServer},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, mt, _ := newTestClient(t, WithMaxRetries(0))
			mt.RegisterResponder("GET", fullURL, tt.respond)
			_, err := c.Contexts.Get(context.Background(), "ctx_1")
			if err == nil {
				t.Fatal("Get succeeded, want an error")
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("err = %v, want %v", err, tt.wantIs)
			}
			outs := []string{err.Error(), fmt.Sprintf("%v", err), fmt.Sprintf("%+v", err), fmt.Sprintf("%#v", err)}
			var apiErr *Error
			if errors.As(err, &apiErr) {
				outs = append(outs, string(apiErr.Body), apiErr.Message, fmt.Sprintf("%+v", *apiErr))
			}
			for _, out := range outs {
				if strings.Contains(out, testKey) {
					t.Errorf("error output shows the key: %s", out)
				}
			}
			if !strings.Contains(err.Error(), "[REDACTED]") {
				t.Errorf("err = %q, want the key's place marked [REDACTED]", err)
			}
		})
	}
}

func TestErrorsKeepConnections(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	conns := 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/contexts/ctx_busy":
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":{"type":"internal","message":"busy"}}`)
		default:
			io.WriteString(w, `{"id":"ctx_1"}`)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	srv.Start()
	defer srv.Close()
	c, err := NewClient(testKey, WithBaseURL(srv.URL+"/v1"), WithRetryWait(time.Millisecond, 5*time.Millisecond), WithMaxRetries(1))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Contexts.Get(ctx, "ctx_1"); err != nil {
		t.Fatal(err)
	}
	// Retries that run out end the call in retryablehttp's error path,
	// which closes the client's idle connections if it can.
	if _, err := c.Contexts.Get(ctx, "ctx_busy"); !errors.Is(err, ErrServer) {
		t.Fatalf("Get: err = %v, want ErrServer", err)
	}
	if _, err := c.Contexts.Get(ctx, "ctx_1"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if conns != 1 {
		t.Errorf("%d connections for sequential calls, want 1 (kept alive through the error)", conns)
	}
}

// TestGetAllocations guards the allocation goal: Contexts.Get costs
// at most 15 allocations more than the same request made with plain
// net/http and encoding/json (BenchmarkContextsGet has the figures), with
// and without per-call options. Both
// sides of the loopback run in this process, so the server's allocations
// count in both and cancel out.
func TestGetAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	// Not parallel: AllocsPerRun counts every goroutine's allocations.
	body := []byte(`{"id":"ctx_1","name":"Runbook","content":"# Deploy","tags":["ops"],"version":7,"createdAt":"2026-11-21T20:51:00.123Z","updatedAt":"2026-11-21T20:52:00.456Z"}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-RateLimit-Limit", "1000")
		w.Write(body)
	}))
	defer srv.Close()
	ctx := context.Background()

	tr := http.DefaultTransport.(*http.Transport).Clone()
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	plain := func() {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/v1/contexts/ctx_1", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+testKey)
		req.Header.Set("User-Agent", "test")
		req.Header.Set("Accept", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var c Context
		err = json.NewDecoder(resp.Body).Decode(&c)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || c.Version != 7 {
			t.Fatalf("plain: %v, version %d", err, c.Version)
		}
	}
	client, err := NewClient(testKey, WithBaseURL(srv.URL+"/v1"))
	if err != nil {
		t.Fatal(err)
	}
	viaClient := func() {
		c, err := client.Contexts.Get(ctx, "ctx_1")
		if err != nil || c.Version != 7 {
			t.Fatalf("client: %v", err)
		}
	}
	// The same call with the per-call options a caller typically gives,
	// built per call as callers write them.
	var resp Response
	viaClientOpts := func() {
		c, err := client.Contexts.Get(ctx, "ctx_1", WithResponseInto(&resp), WithRequestHeader("X-Trace-Id", "trace-1"))
		if err != nil || c.Version != 7 || resp.StatusCode != 200 || resp.RateLimit.Limit != 1000 {
			t.Fatalf("client with options: %v, %+v", err, resp)
		}
	}
	plain() // open the connections before counting
	viaClient()
	viaClientOpts()
	p := testing.AllocsPerRun(100, plain)
	c := testing.AllocsPerRun(100, viaClient)
	o := testing.AllocsPerRun(100, viaClientOpts)
	t.Logf("allocations per Get: plain %.1f, client %.1f, client with options %.1f", p, c, o)
	if c > p+15 {
		t.Errorf("Contexts.Get allocates %.1f times per call, plain net/http %.1f: more than plain + 15", c, p)
	}
	if o > p+15 {
		t.Errorf("Contexts.Get with WithResponseInto and WithRequestHeader allocates %.1f times per call, plain net/http %.1f: more than plain + 15", o, p)
	}
}
