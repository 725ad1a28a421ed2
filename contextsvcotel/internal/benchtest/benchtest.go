// Package benchtest holds what the benchmarks of the client and of the
// webhook handler share across packages: the server a call is measured
// against, the plain net/http baseline it is measured beside, and the
// delivery loop. It is test support, for _test.go files only.
//
// Each module that uses this package keeps a copy of it (modules version
// apart, so none imports another's internal packages); the repository's
// module checks (internal/tools/modules) hold the copies identical.
package benchtest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Context is what Server answers: a context of typical size (275 bytes).
const Context = `{"id":"ctx_0123456789abcdefghij","name":"Runbook","content":"# Deploy\n\nRun the pipeline, then check the dashboards.\n\n## Rollback\n\nRevert the release tag.","tags":["ops","deploy"],"version":7,"createdAt":"2026-11-21T20:51:00.123Z","updatedAt":"2026-11-21T20:52:00.456Z"}`

// ContextID is Context's id.
const ContextID = "ctx_0123456789abcdefghij"

// Server starts a local server that answers every request with Context and
// the headers the service sends with it (a request id and the rate limit);
// it is closed when tb ends.
func Server(tb testing.TB) *httptest.Server {
	body := []byte(Context)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Content-Type"] = []string{"application/json"}
		h["X-Request-Id"] = []string{"req_bench"}
		h["X-Ratelimit-Limit"] = []string{"1000"}
		h["X-Ratelimit-Remaining"] = []string{"99"}
		h["X-Ratelimit-Reset"] = []string{"0"}
		w.Write(body)
	}))
	tb.Cleanup(srv.Close)
	return srv
}

// Transport returns a clone of the default transport keeping 64 idle
// connections per host, as the client's does.
func Transport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	return t
}

// Plain is the baseline of a client call, run until b.Loop ends: a Get of
// url through rt, the body decoded into a new T with a json.Decoder,
// drained and closed; ok checks each decoded value.
func Plain[T any](b *testing.B, rt http.RoundTripper, url string, ok func(*T) bool) {
	hc := &http.Client{Transport: rt}
	b.ReportAllocs()
	for b.Loop() {
		resp := Get(b, hc, url)
		v := new(T)
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if !ok(v) {
			b.Fatal("bad decode")
		}
	}
}

// Get is a GET of url with plain net/http, as the client would send it:
// http.NewRequestWithContext, three Header.Set (Authorization, User-Agent,
// Accept), http.Client.Do. It fails b unless the answer is a 200, whose
// body the caller reads and closes.
func Get(b testing.TB, hc *http.Client, url string) *http.Response {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer sk_bench")
	req.Header.Set("User-Agent", "bench")
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		b.Fatal(resp.Status)
	}
	return resp
}

// Deliver delivers body to h with the given headers until b.Loop ends, as
// the service would (a POST with its Content-Length), failing b unless
// every answer is a 200. The response writer keeps nothing but the status,
// so the benchmark measures the handler rather than a recorder.
func Deliver(b *testing.B, h http.Handler, body []byte, header http.Header) {
	r, err := http.NewRequest(http.MethodPost, "/webhooks", nil)
	if err != nil {
		b.Fatal(err)
	}
	r.Header = header
	r.ContentLength = int64(len(body))
	rd := bytes.NewReader(body)
	w := &discardWriter{h: make(http.Header)}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		rd.Reset(body)
		r.Body = io.NopCloser(rd)
		clear(w.h)
		w.code = 0
		h.ServeHTTP(w, r)
		if w.code != http.StatusOK {
			b.Fatalf("status %d", w.code)
		}
	}
}

// discardWriter is an http.ResponseWriter that keeps nothing but the
// status.
type discardWriter struct {
	h    http.Header
	code int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *discardWriter) WriteHeader(code int)        { w.code = code }
