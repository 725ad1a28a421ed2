package contextsvc

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/contextsvc/contextsvc-go/internal/benchtest"
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
			benchtest.Deliver(b, h, body, http.Header{DefaultSignatureHeader: {Sign(body, secret)}})
		})
	}
}
