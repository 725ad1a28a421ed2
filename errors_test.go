package contextsvc

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/jarcoal/httpmock"
)

func TestErrorStatuses(t *testing.T) {
	t.Parallel()
	sentinels := []error{ErrBadRequest, ErrUnauthorized, ErrForbidden, ErrNotFound, ErrRateLimited, ErrServer}
	tests := []struct {
		status   int
		typ      string
		sentinel error // nil: none matches
	}{
		{400, "invalid_request", ErrBadRequest},
		{401, "unauthorized", ErrUnauthorized},
		{403, "forbidden", ErrForbidden},
		{404, "not_found", ErrNotFound},
		{405, "method_not_allowed", ErrBadRequest},
		{409, "conflict", nil},
		{413, "payload_too_large", ErrBadRequest},
		{429, "rate_limited", ErrRateLimited},
		{500, "internal", ErrServer},
		{502, "bad_gateway", ErrServer},
		{503, "unavailable", ErrServer},
		{504, "timeout", ErrServer},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			t.Parallel()
			// No retries: this test is about the error, not the policy.
			c, mt, _ := newTestClient(t, WithMaxRetries(0))
			body := `{"error":{"type":"` + tt.typ + `","message":"it failed","param":"name","requestId":"req_body"}}`
			mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", respond(tt.status, body))
			_, err := c.Contexts.Get(context.Background(), "ctx_1")
			var apiErr *Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v (%T), want *Error", err, err)
			}
			want := &Error{StatusCode: tt.status, Type: tt.typ, Message: "it failed", Param: "name",
				RequestID: "req_body", Attempts: 1, Body: []byte(body)}
			if diff := cmp.Diff(want, apiErr); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			for _, s := range sentinels {
				if got := errors.Is(err, s); got != (s == tt.sentinel) {
					t.Errorf("errors.Is(err, %v) = %v", s, got)
				}
			}
		})
	}
}

func TestErrorBodiesOfAnyShape(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 10000)
	tests := []struct {
		name   string
		body   string
		header string // X-Request-Id, if any
		want   Error  // Body and Attempts checked apart
	}{
		{name: "contract", body: `{"error":{"type":"not_found","message":"no such context \"ctx_1\"","requestId":"req_b"}}`, header: "req_h",
			want: Error{StatusCode: 404, Type: "not_found", Message: `no such context "ctx_1"`, RequestID: "req_b"}},
		{name: "flat", body: `{"type":"not_found","message":"gone"}`, header: "req_h",
			want: Error{StatusCode: 404, Type: "not_found", Message: "gone", RequestID: "req_h"}},
		{name: "type without message", body: `{"error":{"type":"not_found","requestId":"req_b"}}`,
			want: Error{StatusCode: 404, Type: "not_found", Message: "not found", RequestID: "req_b"}},
		{name: "error string", body: `{"error":"Not Found"}`,
			want: Error{StatusCode: 404, Message: "Not Found"}},
		{name: "no body", body: "", header: "req_h",
			want: Error{StatusCode: 404, Message: "not found", RequestID: "req_h"}},
		{name: "html", body: "<html>\n<body>Not   here</body>\n</html>",
			want: Error{StatusCode: 404, Message: "<html> <body>Not here</body> </html>"}},
		{name: "json array", body: `[1,2]`,
			want: Error{StatusCode: 404, Message: "[1,2]"}},
		{name: "huge", body: long,
			want: Error{StatusCode: 404, Message: strings.Repeat("x", 200) + "…"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, mt, _ := newTestClient(t)
			mt.RegisterResponder("GET", testBase+"/contexts/ctx_1", func(*http.Request) (*http.Response, error) {
				resp := httpmock.NewStringResponse(404, tt.body)
				if tt.header != "" {
					resp.Header.Set("X-Request-Id", tt.header)
				}
				return resp, nil
			})
			_, err := c.Contexts.Get(context.Background(), "ctx_1")
			var apiErr *Error
			if !errors.As(err, &apiErr) {
				t.Fatalf("err = %v, want *Error", err)
			}
			wantBody := tt.body
			if len(wantBody) > maxErrorBody {
				wantBody = wantBody[:maxErrorBody]
			}
			if string(apiErr.Body) != wantBody {
				t.Errorf("Body has %d bytes, want %d", len(apiErr.Body), len(wantBody))
			}
			if diff := cmp.Diff(tt.want, *apiErr, cmpopts.IgnoreFields(Error{}, "Body", "Attempts")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrorMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{StatusCode: 404, Type: "not_found", Message: `no such context "ctx_x"`, RequestID: "req_y", Attempts: 1},
			`contextsvc: 404 not_found: no such context "ctx_x" (request req_y)`},
		{&Error{StatusCode: 503, Message: "unavailable", RequestID: "req_y", Attempts: 4},
			`contextsvc: 503: unavailable (request req_y, 4 attempts)`},
		{&Error{StatusCode: 429, Type: "rate_limited", Message: "slow down", Attempts: 2},
			`contextsvc: 429 rate_limited: slow down (2 attempts)`},
		{&Error{StatusCode: 500}, `contextsvc: 500`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func FuzzNewError(f *testing.F) {
	for _, s := range []string{
		`{"error":{"type":"not_found","message":"m","param":"p","requestId":"req_1"}}`,
		`{"error":"x"}`, `{"type":1}`, `null`, ``, `<html>`, "\xff\xfe", `{"error":[1]}`,
	} {
		f.Add(s, "5")
	}
	f.Fuzz(func(t *testing.T, body, retryAfter string) {
		resp := &http.Response{StatusCode: 418, Header: http.Header{"Retry-After": {retryAfter}}}
		e := newError(resp, []byte(body), 1, "")
		if e.StatusCode != 418 || e.Message == "" || e.RetryAfter < 0 {
			t.Errorf("newError(%q) = %+v", body, e)
		}
		_ = e.Error()
	})
}

func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"0", "1", "120", "-1", "Wed, 21 Oct 2015 07:28:00 GMT", "Sun, 06 Nov 1994 08:49:37 GMT", "soon", "99999999999999999999", ""} {
		f.Add(s)
	}
	now := time.Date(2026, 11, 21, 20, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := parseRetryAfter(v, now)
		if d < 0 || (!ok && d != 0) {
			t.Errorf("parseRetryAfter(%q) = %v, %v", v, d, ok)
		}
	})
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 21, 20, 0, 0, 0, time.UTC)
	tests := []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"", 0, false},
		{"0", 0, true},
		{"7", 7 * time.Second, true},
		{"-3", 0, false},
		{"soon", 0, false},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"Saturday, 21-Nov-26 20:00:30 GMT", 30 * time.Second, true}, // RFC 850, still valid HTTP-date
	}
	for _, tt := range tests {
		got, ok := parseRetryAfter(tt.in, now)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("parseRetryAfter(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}
