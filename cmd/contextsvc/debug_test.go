package main

import (
	"bytes"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
)

// TestDebug: --debug (or CONTEXTSVC_DEBUG=1) writes each attempt on
// stderr, its method, URL, headers, status and time, and each wait before
// a retry with its reason (a 429's Retry-After, a 5xx's back-off); the
// key never shows. The waits run on synctest's clock.
func TestDebug(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		args    []string
		env     map[string]string
		answers []func(w http.ResponseWriter)
		want    []string
	}{
		{
			name: "a 429 with Retry-After, then the answer",
			args: []string{"--debug", "contexts", "list", "--limit", "5"},
			answers: []func(w http.ResponseWriter){
				func(w http.ResponseWriter) {
					w.Header().Set("Retry-After", "2")
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusTooManyRequests)
					w.Write([]byte(`{"error":{"type":"rate_limited","message":"slow down","requestId":"req_a"}}`))
				},
				listAnswer,
			},
			want: []string{
				`(?m)^\* GET http://api\.test/v1/contexts\?limit=5 \(attempt 1\)$`,
				`(?m)^> Authorization: Bearer \[redacted\]$`,
				`(?m)^> User-Agent: contextsvc-cli/`,
				`(?m)^< 429 Too Many Requests in \S+$`,
				`(?m)^< Retry-After: 2$`,
				`(?m)^\* waited 2s before attempt 2: a retry after 429 Too Many Requests, as its Retry-After \(2\) asked$`,
				`(?m)^\* GET http://api\.test/v1/contexts\?limit=5 \(attempt 2\)$`,
				`(?m)^< 200 OK in \S+$`,
			},
		},
		{
			name: "a 503 without Retry-After, by the environment",
			args: []string{"contexts", "get", "ctx_1"},
			env:  map[string]string{"CONTEXTSVC_DEBUG": "1"},
			answers: []func(w http.ResponseWriter){
				func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) },
				func(w http.ResponseWriter) {
					w.Header().Set("Content-Type", "application/json")
					w.Write([]byte(`{"id":"ctx_1","name":"A","content":"","tags":[],"version":1,"createdAt":"2026-01-01T00:00:00Z","updatedAt":"2026-01-01T00:00:00Z"}`))
				},
			},
			want: []string{
				`(?m)^< 503 Service Unavailable in \S+$`,
				`(?m)^\* waited \S+ before attempt 2: a retry after 503 Service Unavailable \(exponential back-off\)$`,
				`(?m)^< 200 OK in \S+$`,
			},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var n atomic.Int32
				api := handlerTransport{http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if strings.HasPrefix(r.URL.Path, "/_mock/") {
						http.NotFound(w, r)
						return
					}
					tt.answers[min(int(n.Add(1))-1, len(tt.answers)-1)](w)
				})}
				env := map[string]string{"CONTEXTSVC_BASE_URL": "http://api.test/v1", "CONTEXTSVC_API_KEY": testKey}
				for k, v := range tt.env {
					env[k] = v
				}
				var out, errOut bytes.Buffer
				s := &streams{in: strings.NewReader(""), out: &out, err: &errOut, getenv: envMap(env).get, transport: api}
				if code := run(t.Context(), tt.args, s); code != exitOK {
					t.Fatalf("exit %d\n%s", code, errOut.String())
				}
				for _, w := range tt.want {
					if !regexp.MustCompile(w).MatchString(errOut.String()) {
						t.Errorf("stderr lacks %s:\n%s", w, errOut.String())
					}
				}
				if strings.Contains(errOut.String()+out.String(), testKey) || strings.Contains(errOut.String(), strings.TrimPrefix(testKey, "sk_")) {
					t.Errorf("the key shows:\n%s", errOut.String())
				}
			})
		})
	}
}

// listAnswer answers a list of no contexts.
func listAnswer(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Write([]byte(`{"data":[],"hasMore":false,"nextCursor":null}`))
}

// TestDebugAdmin: --debug shows the mock's admin requests too, the
// credentials masked, and nothing without it.
func TestDebugAdmin(t *testing.T) {
	t.Parallel()
	c, _ := newCLI(t)
	r := c.run("--debug", "events", "list")
	if r.code != exitOK || !regexp.MustCompile(`(?m)^\* GET http://127\.0\.0\.1:\d+/_mock/contract$`).MatchString(r.errOut) ||
		!regexp.MustCompile(`(?m)^\* GET http://127\.0\.0\.1:\d+/_mock/events\?account=acme&limit=20&order=desc$`).MatchString(r.errOut) ||
		!strings.Contains(r.errOut, "< 200 OK in ") {
		t.Errorf("--debug events list: exit %d\n%s", r.code, r.errOut)
	}
	if r := c.run("events", "list"); r.errOut != "" {
		t.Errorf("without --debug: %q", r.errOut)
	}
	u, _ := url.Parse("https://bot:pa55@api.test/v1/contexts?limit=5&api_key=s3cret&cursor=c1")
	if got := debugURL(u); got != "https://xxxxx@api.test/v1/contexts?limit=5&api_key=xxxxx&cursor=c1" {
		t.Errorf("debugURL: %s", got)
	}
	var b strings.Builder
	headerLines(&b, "> ", http.Header{"Authorization": {"Basic YWRtaW46cGFzcw=="}, "X-Api-Key": {"k"}, "Cookie": {"a=b"}, "Idempotency-Key": {"i"}, "Accept": {"application/json"}})
	if got := b.String(); got != "> Accept: application/json\n> Authorization: Basic [redacted]\n> Cookie: [redacted]\n> Idempotency-Key: [redacted]\n> X-Api-Key: [redacted]\n" {
		t.Errorf("the headers:\n%s", got)
	}
}
