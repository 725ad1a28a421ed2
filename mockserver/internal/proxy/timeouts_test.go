package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/contextsvc/contextsvc-go/mockserver/internal/contract"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/model"
)

// loadSpec reads the mock's document (the proxy's tests cannot import
// the mockserver package, which imports this one).
func loadSpec(t *testing.T) *contract.Spec {
	t.Helper()
	doc, err := os.ReadFile("../../openapi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec, err := contract.LoadSpec(doc)
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// lockedBuffer is a log written by the proxy and read by the test.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// roundTripper is a transport made of a function.
type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// wait waits d on the (bubble's) clock, or until ctx ends.
func wait(ctx context.Context, d time.Duration) error {
	select {
	case <-time.After(d):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// slowBody sends its parts, each after its wait, then ends; a wait of -1
// is forever (until the request's context ends).
type slowBody struct {
	ctx   context.Context
	parts []part
}

type part struct {
	after time.Duration
	data  string
}

func (b *slowBody) Read(p []byte) (int, error) {
	if len(b.parts) == 0 {
		return 0, io.EOF
	}
	next := b.parts[0]
	if next.after < 0 {
		<-b.ctx.Done()
		return 0, b.ctx.Err()
	}
	if err := wait(b.ctx, next.after); err != nil {
		return 0, err
	}
	b.parts = b.parts[1:]
	return copy(p, next.data), nil
}

func (b *slowBody) Close() error { return nil }

// upstream answers after headersAfter (-1: never) with a body of parts.
func upstream(headersAfter time.Duration, parts ...part) roundTripper {
	return func(r *http.Request) (*http.Response, error) {
		ctx := r.Context()
		if headersAfter < 0 {
			<-ctx.Done()
			return nil, ctx.Err()
		}
		if err := wait(ctx, headersAfter); err != nil {
			return nil, err
		}
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: &slowBody{ctx: ctx, parts: parts}, Request: r}, nil
	}
}

// TestUpstreamTimeLimits: an upstream that does not begin its answer
// within the time-out (no headers, or headers and no byte of the body)
// gets the caller a 504 with the contract's error body exactly when the
// time-out ends; one whose body pauses past the idle time-out has its
// answer cut short then; one that keeps sending, however slowly, is
// streamed whole. Each limit passed is a finding and a Warn log line
// naming it. (On synctest's clock: no test waits in real time.)
func TestUpstreamTimeLimits(t *testing.T) {
	t.Parallel()
	spec := loadSpec(t)
	const timeout, idle = time.Minute, 30 * time.Second
	tests := []struct {
		name        string
		rt          roundTripper
		wantStatus  int
		wantBody    string // the caller's body, for an answer that began
		wantElapsed time.Duration
		wantLimit   string // in the finding and the log; "" for none
	}{
		{name: "no headers", rt: upstream(-1), wantStatus: http.StatusGatewayTimeout, wantElapsed: timeout,
			wantLimit: "its answer did not begin within the upstream time-out (1m0s)"},
		{name: "headers, then no body", rt: upstream(0, part{-1, ""}), wantStatus: http.StatusGatewayTimeout, wantElapsed: timeout,
			wantLimit: "its answer did not begin within the upstream time-out (1m0s)"},
		{name: "headers late, the body's first bytes past the time-out", rt: upstream(40*time.Second, part{40 * time.Second, "[]"}),
			wantStatus: http.StatusGatewayTimeout, wantElapsed: timeout,
			wantLimit: "its answer did not begin within the upstream time-out (1m0s)"},
		{name: "a body that pauses past the idle time-out", rt: upstream(time.Second, part{time.Second, `{"data":[`}, part{-1, ""}),
			wantStatus: http.StatusOK, wantBody: `{"data":[`, wantElapsed: 2*time.Second + idle,
			wantLimit: "the answer's body paused for longer than the upstream idle time-out (30s)"},
		{name: "a slow body that keeps coming", rt: upstream(59*time.Second, part{0, `{"data":`}, part{29 * time.Second, `[],`}, part{29 * time.Second, `"hasMore":false}`}),
			wantStatus: http.StatusOK, wantBody: `{"data":[],"hasMore":false}`, wantElapsed: 59*time.Second + 58*time.Second},
		{name: "an empty body at the last moment", rt: upstream(timeout - time.Millisecond),
			wantStatus: http.StatusOK, wantBody: "", wantElapsed: timeout - time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				var log lockedBuffer
				up, _ := url.Parse("https://upstream.example/v1")
				p := New(Config{Upstream: up, Spec: spec, Transport: tt.rt, Log: NewLog(100, MaxBytes),
					Logger: slog.New(slog.NewJSONHandler(&log, nil)), Timeout: timeout, IdleTimeout: idle})
				rec := httptest.NewRecorder()
				rec.Header().Set("X-Request-Id", "req_proxy")
				req := httptest.NewRequest(http.MethodGet, "/v1/contexts?limit=3&api_key=QUERYKEYSECRET99", nil)
				start := time.Now()
				p.ServeHTTP(rec, req)
				if elapsed := time.Since(start); elapsed != tt.wantElapsed {
					t.Errorf("answered after %s, want %s", elapsed, tt.wantElapsed)
				}
				if rec.Code != tt.wantStatus {
					t.Fatalf("status %d, want %d: %s", rec.Code, tt.wantStatus, rec.Body)
				}
				if tt.wantStatus == http.StatusGatewayTimeout {
					var e struct {
						Error struct{ Type, Message, RequestID string }
					}
					if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error.Type != "unavailable" || e.Error.RequestID != "req_proxy" ||
						rec.Header().Get("X-Request-Id") != "req_proxy" || !strings.Contains(e.Error.Message, tt.wantLimit) {
						t.Errorf("the 504's body %s (X-Request-Id %q)", rec.Body, rec.Header().Get("X-Request-Id"))
					}
				} else if rec.Body.String() != tt.wantBody {
					t.Errorf("the caller got %q, want %q", rec.Body, tt.wantBody)
				}
				var found *model.ContractFinding
				for _, f := range p.Log().All() {
					if strings.Contains(f.Unvalidated, "time-out") {
						found = &f
					}
				}
				logged := log.String()
				if tt.wantLimit == "" {
					if found != nil || strings.Contains(logged, "time-out") {
						t.Errorf("a limit reported for an upstream within them: %+v\n%s", found, logged)
					}
					return
				}
				if found == nil || !strings.Contains(found.Unvalidated, tt.wantLimit) || found.Target != "/v1/contexts?limit=3&api_key=xxxxx" {
					t.Fatalf("finding %+v, want one saying %q", found, tt.wantLimit)
				}
				if tt.wantStatus == http.StatusGatewayTimeout && found.Status != http.StatusGatewayTimeout {
					t.Errorf("the finding's status %d, want 504", found.Status)
				}
				if !strings.Contains(logged, `"level":"WARN"`) || !strings.Contains(logged, tt.wantLimit) || strings.Contains(logged, "QUERYKEYSECRET99") {
					t.Errorf("the log does not warn of the limit (or shows the query's key):\n%s", logged)
				}
				if c := p.Log().Counts(); tt.wantStatus == http.StatusGatewayTimeout && (len(c) != 1 || c[0].UpstreamFailures != 1) {
					t.Errorf("counts %+v, want one upstream failure", c)
				}
			})
		})
	}
}
