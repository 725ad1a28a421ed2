package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/internal/plantest"
	"github.com/contextsvc/contextsvc-go/internal/redistest"
	"github.com/contextsvc/contextsvc-go/mockserver"
	"github.com/contextsvc/contextsvc-go/redisstore"
)

// BenchmarkLimiterWait measures what the shared limiter costs a request
// when a token is free: one script on Redis. Its baseline, in the same
// run and on the same go-redis client, is a PING, the cheapest round trip
// there is. The plan is so large that no Wait ever waits. The ping and
// limiter sides run separate loops and report where the time goes; the
// paired side interleaves the two and reports their ratio, the figure the
// goal is read from.
//
//	go test -run '^$' -bench 'LimiterWait' ./redisstore
func BenchmarkLimiterWait(b *testing.B) {
	c := redistest.Client(b, redistest.Shared(b))
	ctx := context.Background()
	plan, err := contextsvc.EnterprisePlan(1_000_000_000, 1_000_000)
	if err != nil {
		b.Fatal(err)
	}
	lim, err := redisstore.NewLimiter(c, "sk_bench_"+redistest.Prefix(b), plan)
	if err != nil {
		b.Fatal(err)
	}
	if err := lim.Wait(ctx); err != nil { // load the script
		b.Fatal(err)
	}
	b.Run("ping", func(b *testing.B) {
		c.ConfigResetStat(ctx)
		cpu := processCPU()
		for b.Loop() {
			if err := c.Ping(ctx).Err(); err != nil {
				b.Fatal(err)
			}
		}
		reportClientCPU(b, cpu)
		reportServerTime(b, c, "ping")
	})
	b.Run("limiter", func(b *testing.B) {
		c.ConfigResetStat(ctx)
		cpu := processCPU()
		for b.Loop() {
			if err := lim.Wait(ctx); err != nil {
				b.Fatal(err)
			}
		}
		reportClientCPU(b, cpu)
		reportServerTime(b, c, "evalsha")
	})
	// paired times a PING and a Wait in every iteration, in alternating
	// order, so both sides meet the same machine: on a noisy 2-core host
	// the two separate loops above can land a second apart on different
	// loads, and their ratio then measures the load, not the limiter.
	b.Run("paired", func(b *testing.B) {
		var ping, wait []time.Duration
		i := 0
		for b.Loop() {
			pingFirst := i%2 == 0
			i++
			for side := range 2 {
				t0 := time.Now()
				var err error
				isPing := (side == 0) == pingFirst
				if isPing {
					err = c.Ping(ctx).Err()
				} else {
					err = lim.Wait(ctx)
				}
				d := time.Since(t0)
				if err != nil {
					b.Fatal(err)
				}
				if isPing {
					ping = append(ping, d)
				} else {
					wait = append(wait, d)
				}
			}
		}
		reportPaired(b, ping, wait)
	})
}

// reportPaired reports both sides' median and mean round trips and the
// limiter's cost as a ratio of the two (wait/ping), by median, which a few
// descheduled calls do not move, and by mean.
func reportPaired(b *testing.B, ping, wait []time.Duration) {
	b.Helper()
	if len(ping) == 0 || len(wait) == 0 {
		return
	}
	median := func(ds []time.Duration) float64 {
		slices.Sort(ds)
		return float64(ds[len(ds)/2]) / float64(time.Microsecond)
	}
	mean := func(ds []time.Duration) float64 {
		var sum time.Duration
		for _, d := range ds {
			sum += d
		}
		return float64(sum) / float64(len(ds)) / float64(time.Microsecond)
	}
	pm, wm := mean(ping), mean(wait)
	pmed, wmed := median(ping), median(wait)
	b.ReportMetric(pmed, "ping-µs-median")
	b.ReportMetric(wmed, "wait-µs-median")
	b.ReportMetric(wmed/pmed, "ratio-median")
	b.ReportMetric(wm/pm, "ratio-mean")
}

// reportClientCPU reports the CPU time this process (the Go client, the
// go-redis connection and the runtime) spent per call since start: the
// round trip's share that is the client's own work. The rest is Redis's
// own (redis-µs/op) and the time both wait on the kernel and the
// scheduler.
func reportClientCPU(b *testing.B, start time.Duration) {
	b.Helper()
	if cpu := processCPU(); cpu > 0 && b.N > 0 {
		b.ReportMetric(float64(cpu-start)/float64(time.Microsecond)/float64(b.N), "client-µs/op")
	}
}

// reportServerTime reports the time Redis spent running cmd, per call,
// from INFO commandstats: the part of a round trip that is Redis's own
// work rather than the network's and the client's.
func reportServerTime(b *testing.B, c *redis.Client, cmd string) {
	b.Helper()
	info := c.Info(context.Background(), "commandstats").Val()
	i := strings.Index(info, "cmdstat_"+cmd+":")
	if i < 0 {
		return
	}
	var calls, usec int64
	var perCall float64
	if _, err := fmt.Sscanf(info[i:], "cmdstat_"+cmd+":calls=%d,usec=%d,usec_per_call=%f", &calls, &usec, &perCall); err == nil {
		b.ReportMetric(perCall, "redis-µs/op")
	}
}

// BenchmarkWebhookHandlerDeduper measures verified deliveries per second
// through NewWebhookHandler served on loopback, each a new event, from 16
// concurrent senders: with the Redis Deduper, with the default
// MemoryDeduper (the baseline), and without deduplication.
//
//	go test -run '^$' -bench 'WebhookHandlerDeduper' ./redisstore
func BenchmarkWebhookHandlerDeduper(b *testing.B) {
	srv := redistest.Shared(b)
	const secret = "whsec_bench"
	fn := func(context.Context, *contextsvc.Event) error { return nil }
	cases := []struct {
		name string
		opt  func(b *testing.B) contextsvc.WebhookOption
	}{
		{"memory", func(b *testing.B) contextsvc.WebhookOption {
			d, err := contextsvc.NewMemoryDeduper(contextsvc.DefaultMemoryDeduperSize)
			if err != nil {
				b.Fatal(err)
			}
			return contextsvc.WithDeduper(d)
		}},
		{"redis", func(b *testing.B) contextsvc.WebhookOption {
			d, err := redisstore.NewDeduper(redistest.Client(b, srv, &redis.Options{PoolSize: 32}), redistest.Prefix(b))
			if err != nil {
				b.Fatal(err)
			}
			return contextsvc.WithDeduper(d)
		}},
		{"none", func(*testing.B) contextsvc.WebhookOption { return contextsvc.WithDeduper(nil) }},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			h, err := contextsvc.NewWebhookHandler(secret, fn, tc.opt(b))
			if err != nil {
				b.Fatal(err)
			}
			hs := httptest.NewServer(h)
			defer hs.Close()
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.MaxIdleConnsPerHost = 64
			hc := &http.Client{Transport: tr}
			defer tr.CloseIdleConnections()
			var seq atomic.Int64
			now := time.Now()
			b.SetParallelism(8) // 16 senders on 2 cores
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					body := eventJSON(fmt.Sprintf("evt_bench_%s_%d", tc.name, seq.Add(1)), now)
					req, _ := http.NewRequest(http.MethodPost, hs.URL, bytes.NewReader(body))
					req.Header.Set(contextsvc.DefaultSignatureHeader, contextsvc.Sign(body, secret))
					resp, err := hc.Do(req)
					if err != nil {
						b.Error(err)
						return
					}
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						b.Errorf("status %d", resp.StatusCode)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "deliveries/s")
		})
	}
}

// fleetDuration is how long BenchmarkFleet runs each side.
var fleetDuration = flag.Duration("fleet-duration", 30*time.Second, "how long BenchmarkFleet runs each of its two sides")

// BenchmarkFleet: 8 independent clients (each its own Client, transport,
// go-redis connection and limiter) share an Enterprise plan of 6,000
// requests a minute, burst 20, against the mock server on loopback, for
// 30 s: through redisstore.NewLimiter ("shared"), and, as the baseline,
// each with its own contextsvc.WithPlan bucket ("local"). Goals for
// shared: no answer 429, and at least 0.9 of the plan's rate. It is a
// benchmark so that `go test ./...` never runs it:
//
//	go test -run '^$' -bench 'Fleet' -benchtime 1x ./redisstore
func BenchmarkFleet(b *testing.B) {
	if testing.Short() {
		b.Skip("a 30 s load run; skipped with -short")
	}
	const (
		clients   = 8
		perMinute = 6000
		burst     = 20
		token     = "sk_bench_fleet"
	)
	plan := plantest.Enterprise(b, perMinute, burst)
	srv := redistest.Shared(b)
	for _, side := range []string{"shared", "local"} {
		b.Run(side, func(b *testing.B) {
			ts := mockserver.NewTestServer(b, mockserver.WithKey(mockserver.Key{
				Token: token, Plan: mockserver.PlanEnterprise, PerMinute: perMinute, Burst: burst}))
			limKey := token + redistest.Prefix(b) // a fresh shared bucket for every run
			var ok, failed, tooMany atomic.Int64
			ctx, cancel := context.WithTimeout(context.Background(), *fleetDuration)
			defer cancel()
			var wg sync.WaitGroup
			var whenMu sync.Mutex
			when := map[int]int{}
			t0 := time.Now()
			for range clients {
				ct := &counting429{base: http.DefaultTransport.(*http.Transport).Clone(), n: &tooMany, start: t0, mu: &whenMu, when: when}
				opts := []contextsvc.Option{contextsvc.WithBaseURL(ts.URL), contextsvc.WithHTTPClient(&http.Client{Transport: ct})}
				if side == "shared" {
					lim, err := redisstore.NewLimiter(redistest.Client(b, srv), limKey, plan)
					if err != nil {
						b.Fatal(err)
					}
					opts = append(opts, contextsvc.WithLimiter(lim))
				} else {
					opts = append(opts, contextsvc.WithPlan(plan))
				}
				client, err := contextsvc.NewClient(token, opts...)
				if err != nil {
					b.Fatal(err)
				}
				wg.Go(func() {
					for ctx.Err() == nil {
						_, err := client.Contexts.Get(ctx, "ctx_bench_missing")
						switch {
						case errors.Is(err, contextsvc.ErrNotFound):
							ok.Add(1) // the answer the service gives: a request within the limit
						case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
						default:
							failed.Add(1)
						}
					}
				})
			}
			start := time.Now()
			wg.Wait()
			elapsed := time.Since(start)
			rate := float64(ok.Load()) / elapsed.Seconds()
			b.ReportMetric(rate, "req/s")
			b.ReportMetric(rate/(perMinute/60.0), "of-plan")
			b.ReportMetric(float64(tooMany.Load()), "429s")
			b.ReportMetric(float64(failed.Load()), "failed")
			b.ReportMetric(0, "ns/op")
			if len(when) > 0 {
				b.Logf("answers 429 by second of the run: %v", when)
			}
		})
	}
}

// counting429 counts the answers 429 the server gave, retried or not, and
// notes in which second of the run each came.
type counting429 struct {
	base  http.RoundTripper
	n     *atomic.Int64
	start time.Time
	mu    *sync.Mutex
	when  map[int]int // second of the run → answers 429
}

func (c *counting429) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.base.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusTooManyRequests {
		c.n.Add(1)
		c.mu.Lock()
		c.when[int(time.Since(c.start).Seconds())]++
		c.mu.Unlock()
	}
	return resp, err
}
