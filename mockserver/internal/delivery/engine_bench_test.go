package delivery

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/mockserver/internal/clock"
)

// dlvBenchBody is a context.updated envelope of a typical size (about 330
// bytes).
var dlvBenchBody = []byte(`{"id":"evt_3m2kq7w4x9b5n8c1v6z0a2s4d","type":"context.updated","timestamp":"2026-11-21T20:51:00.123Z","data":{"contextId":"ctx_h7j2k9m4n6p8q1r3s5t7v9w2","name":"Onboarding guide","version":7,"updatedBy":"user_a1b2c3d4e5f6g7h8i9j0k1l2","changes":{"sections_modified":["Getting started","(preamble)"],"word_count_delta":42}}}`)

// dlvBenchReceiver is a healthy receiver: it reads the body and answers 204.
func dlvBenchReceiver(b *testing.B) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.WriteHeader(http.StatusNoContent)
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkDeliveryThroughput measures deliveries per second to a loopback
// receiver, signing and recording included ("engine"), beside the same
// number of plain http.Client POSTs of the same body to the same receiver
// with the same concurrency and connection pool ("baseline").
func BenchmarkDeliveryThroughput(b *testing.B) {
	srv := dlvBenchReceiver(b)
	b.Run("engine", func(b *testing.B) {
		d := New(Config{Clock: clock.Real{}})
		defer d.Close(context.Background())
		// Warm the connection pool as the baseline's is.
		d.enqueue("evt_warm", contextsvc.EventContextUpdated, dlvBenchBody, "wh_1", srv.URL, "whsec_bench")
		if err := d.WaitIdle(context.Background()); err != nil {
			b.Fatal(err)
		}
		ids := make([]string, b.N)
		for i := range ids {
			ids[i] = "evt_" + strconv.Itoa(i)
		}
		b.ReportAllocs()
		b.ResetTimer()
		start := time.Now()
		for _, id := range ids {
			d.enqueue(id, contextsvc.EventContextUpdated, dlvBenchBody, "wh_1", srv.URL, "whsec_bench")
		}
		if err := d.WaitIdle(context.Background()); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "deliveries/s")
		b.StopTimer()
		// The history keeps the last DefaultHistory finished ones.
		if n, want := len(d.List(Filter{State: Succeeded})), min(b.N+1, DefaultHistory); n != want {
			b.Fatalf("%d deliveries succeeded, want %d", n, want)
		}
	})
	sig := contextsvc.Sign(dlvBenchBody, "whsec_bench")
	for _, withHeaders := range []bool{false, true} {
		name := "baseline"
		if withHeaders {
			name = "baseline-same-headers"
		}
		b.Run(name, func(b *testing.B) {
			benchPlainPosts(b, srv.URL, withHeaders, sig)
		})
	}
}

// benchPlainPosts POSTs dlvBenchBody b.N times from as many goroutines as the
// engine has workers: with only Content-Type, or with the contract's
// headers too (a fixed signature, delivery id and attempt) so the extra
// header bytes on the wire are in the baseline and only the engine's own
// work (signing, ids, records, scheduling) is not.
func benchPlainPosts(b *testing.B, url string, withHeaders bool, sig string) {
	client := newDeliveryHTTPClient(defaultDeliveryWorkers, DefaultTimeout)
	defer client.CloseIdleConnections()
	post := func() error {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(dlvBenchBody))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		if withHeaders {
			req.Header.Set("User-Agent", deliveryUserAgent)
			req.Header.Set("X-Service-Signature", sig)
			req.Header.Set("X-Service-Event", string(contextsvc.EventContextUpdated))
			req.Header.Set("X-Service-Delivery", "dlv_abcdefghijklmnopqrstuvwx")
			req.Header.Set("X-Service-Delivery-Attempt", "1")
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			return errors.New(resp.Status)
		}
		return nil
	}
	if err := post(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range defaultDeliveryWorkers {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				if err := post(); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "deliveries/s")
}

// unreachableTransport is a transport that fails at once, like a receiver that
// refuses connections, without using the network.
type unreachableTransport struct{}

func (unreachableTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("dial tcp 192.0.2.1:443: connect: connection refused")
}

// liveHeapAndStacks is the memory in use by live heap objects and goroutine stacks,
// after a full collection.
func liveHeapAndStacks() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc + m.StackInuse
}

// pendingDeliveries is how many pending deliveries the memory benchmark
// holds at once.
const pendingDeliveries = 100_000

// BenchmarkDeliveryPendingMemory measures the memory one pending delivery
// costs with 100,000 pending, in four situations: its first attempt waiting
// (the sender pool stopped by close) or a retry waiting after one failed
// attempt (an unreachable receiver); and one delivery per event (every
// delivery holds its own ~330-byte body) or ten webhooks per event (the
// body is shared). The baseline is the design the engine avoids: a goroutine
// and a timer per pending retry, holding nothing else.
func BenchmarkDeliveryPendingMemory(b *testing.B) {
	cases := []struct {
		name     string
		perEvent int  // deliveries per event
		retry    bool // one failed attempt made, retry waiting
	}{
		{"first-attempt/1-per-event", 1, false},
		{"first-attempt/10-per-event", 10, false},
		{"retry/1-per-event", 1, true},
		{"retry/10-per-event", 10, true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ids := make([]string, pendingDeliveries/c.perEvent)
			for i := range ids {
				ids[i] = "evt_" + strconv.Itoa(i)
			}
			webhooks := make([]string, c.perEvent)
			for i := range webhooks {
				webhooks[i] = "wh_" + strconv.Itoa(i)
			}
			var perDelivery float64
			for range b.N {
				fc := clock.New(t0)
				before := liveHeapAndStacks()
				d := New(Config{Clock: fc, HTTPClient: &http.Client{Transport: unreachableTransport{}}})
				if !c.retry {
					_ = d.Close(context.Background())
				}
				for _, id := range ids {
					for _, wh := range webhooks {
						d.enqueue(id, contextsvc.EventContextUpdated, dlvBenchBody, wh, "https://receiver.example/hook", "whsec_bench")
					}
				}
				if err := d.WaitIdle(context.Background()); err != nil {
					b.Fatal(err)
				}
				after := liveHeapAndStacks()
				if got := len(d.List(Filter{State: Pending})); got != pendingDeliveries {
					b.Fatalf("%d pending, want %d", got, pendingDeliveries)
				}
				if c.retry {
					dl, _ := d.Get(d.order.front().id)
					if len(dl.Attempts) != 1 || dl.NextAttemptAt.IsZero() {
						b.Fatalf("want one failed attempt and a retry waiting: %+v", dl)
					}
				}
				perDelivery += float64(after-before) / pendingDeliveries
				runtime.KeepAlive(d)
				_ = d.Close(context.Background())
			}
			b.ReportMetric(perDelivery/float64(b.N), "B/pending")
		})
	}
	b.Run("baseline-goroutine-per-retry", func(b *testing.B) {
		var perDelivery float64
		for range b.N {
			before := liveHeapAndStacks()
			stop := make(chan struct{})
			var wg, started sync.WaitGroup
			started.Add(pendingDeliveries)
			for range pendingDeliveries {
				wg.Go(func() {
					t := time.NewTimer(time.Hour)
					defer t.Stop()
					started.Done()
					select {
					case <-t.C:
					case <-stop:
					}
				})
			}
			started.Wait()
			after := liveHeapAndStacks()
			perDelivery += float64(after-before) / pendingDeliveries
			close(stop)
			wg.Wait()
		}
		b.ReportMetric(perDelivery/float64(b.N), "B/pending")
	})
}
