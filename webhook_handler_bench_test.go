package contextsvc

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// benchEvent returns a valid context.updated envelope of exactly n bytes
// (padded with a field the SDK ignores).
func benchEvent(n int) []byte {
	head := `{"id":"evt_bench","type":"context.updated","timestamp":"2026-11-21T12:00:00.000Z","data":{"contextId":"ctx_1","name":"Plan","version":2,"updatedBy":"user_1","changes":{"sections_modified":["Intro"],"word_count_delta":3},"pad":"`
	tail := `"}}`
	pad := n - len(head) - len(tail)
	if pad < 0 {
		panic("benchmark event too small")
	}
	return []byte(head + strings.Repeat("p", pad) + tail)
}

// benchWriter is a ResponseWriter that keeps nothing, so the benchmark
// measures the handler rather than a recorder.
type benchWriter struct {
	h    http.Header
	code int
}

func (w *benchWriter) Header() http.Header         { return w.h }
func (w *benchWriter) Write(p []byte) (int, error) { return len(p), nil }
func (w *benchWriter) WriteHeader(code int)        { w.code = code }

// BenchmarkWebhookHandler measures the whole receiving path for one
// delivery: read the body under the limit, verify, parse the envelope and
// typed data, check the window, call fn. Deduplication is off, since every
// iteration delivers the same event (with it on they would all be
// duplicates).
func BenchmarkWebhookHandler(b *testing.B) {
	const secret = "whsec_benchmark_secret_0123456789"
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			body := benchEvent(sz.n)
			ev, err := ParseEvent(body)
			if err != nil {
				b.Fatal(err)
			}
			clk := newTestClock(ev.Timestamp)
			h := newHandler(b, secret, func(context.Context, *Event) error { return nil },
				WithWebhookClock(clk.Now), WithDeduper(nil), WithMaxBodyBytes(2<<20))
			r, err := http.NewRequest(http.MethodPost, "/webhooks", nil)
			if err != nil {
				b.Fatal(err)
			}
			r.Header.Set(DefaultSignatureHeader, Sign(body, secret))
			r.ContentLength = int64(len(body))
			rd := bytes.NewReader(body)
			w := &benchWriter{h: make(http.Header)}
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
		})
	}
}
