package redisstore_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/redisstore"
	"github.com/contextsvc/contextsvc-go/redisstore/redistest"
)

// BenchmarkLimiterWait measures what the shared limiter costs a request
// when a token is free: one script on Redis. Its baseline, in the same
// run and on the same go-redis client, is a PING, the cheapest round trip
// there is. The plan is so large that no Wait ever waits. The ping and
// limiter sides run separate loops and report where the time goes; the
// paired side interleaves the two and reports their ratio, the figure the
// goal is read from.
//
//	go test -run '^$' -bench '^BenchmarkLimiterWait$' ./redisstore
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
	// paired interleaves the two (runPaired): the ratio the goal is read
	// from.
	b.Run("paired", func(b *testing.B) {
		runPaired(b, func() error { return c.Ping(ctx).Err() }, func() error { return lim.Wait(ctx) })
	})
}

// BenchmarkClusterLimiterWait is BenchmarkLimiterWait's paired side over
// a three-master Redis Cluster and redis.NewClusterClient: a Wait (its
// script routed by the key's slot) against a PING to the node serving
// that slot, through the same cluster client's connection to it. (The
// cluster client's own Ping goes to every master, as Redis's command
// tips ask, so it is no baseline for a one-key command.)
//
//	go test -run '^$' -bench 'ClusterLimiterWait' ./redisstore
func BenchmarkClusterLimiterWait(b *testing.B) {
	c := redistest.ClusterClient(b, redistest.SharedCluster(b))
	ctx := context.Background()
	lim, err := redisstore.NewLimiter(c, "sk_bench_"+redistest.Prefix(b), enterprisePlan(b, 1_000_000_000, 1_000_000))
	if err != nil {
		b.Fatal(err)
	}
	if err := lim.Wait(ctx); err != nil { // load the script, learn the slots
		b.Fatal(err)
	}
	node, err := c.MasterForKey(ctx, lim.Key())
	if err != nil {
		b.Fatal(err)
	}
	b.Run("paired", func(b *testing.B) {
		runPaired(b, func() error { return node.Ping(ctx).Err() }, func() error { return lim.Wait(ctx) })
	})
}

// runPaired times a ping and a wait in every iteration, in alternating
// order, so both sides meet the same machine: on a noisy 2-core host two
// separate loops can land a second apart on different loads, and their
// ratio then measures the load, not the limiter. It reports as
// reportPaired does.
func runPaired(b *testing.B, ping, wait func() error) {
	var pings, waits []time.Duration
	i := 0
	for b.Loop() {
		pingFirst := i%2 == 0
		i++
		for side := range 2 {
			isPing := (side == 0) == pingFirst
			f := wait
			if isPing {
				f = ping
			}
			t0 := time.Now()
			err := f()
			d := time.Since(t0)
			if err != nil {
				b.Fatal(err)
			}
			if isPing {
				pings = append(pings, d)
			} else {
				waits = append(waits, d)
			}
		}
	}
	reportPaired(b, pings, waits)
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
var fleetDuration = flag.Duration("fleet-duration", 30*time.Second, "how long BenchmarkFleet runs each of its sides")

// BenchmarkFleet: 8 independent clients (each its own Client, transport,
// go-redis client and limiter) share an Enterprise plan of 6,000
// requests a minute, burst 20, against a server on loopback that holds the key to it, for
// 30 s: through redisstore.NewLimiter on one redis-server ("shared") and
// on a three-master Redis Cluster ("cluster"), and, as the baseline, each
// with its own contextsvc.WithPlan bucket ("local"). Goals for shared and
// cluster: no answer 429, and at least 0.9 of the plan's rate. It is a
// benchmark so that `go test ./...` never runs it:
//
//	go test -run '^$' -bench 'Fleet' -benchtime 1x ./redisstore
func BenchmarkFleet(b *testing.B) {
	if testing.Short() {
		b.Skip("a 30 s load run per side; skipped with -short")
	}
	plan := enterprisePlan(b, 6000, 20)
	sides := []struct {
		name string
		pace func(b *testing.B, key string) func(int) contextsvc.Option
	}{
		{"shared", func(b *testing.B, key string) func(int) contextsvc.Option {
			srv := redistest.Shared(b)
			return func(int) contextsvc.Option { return sharedLimiter(b, redistest.Client(b, srv), key, plan) }
		}},
		{"cluster", func(b *testing.B, key string) func(int) contextsvc.Option {
			cl := redistest.SharedCluster(b)
			return func(int) contextsvc.Option { return sharedLimiter(b, redistest.ClusterClient(b, cl), key, plan) }
		}},
		{"local", func(*testing.B, string) func(int) contextsvc.Option {
			return func(int) contextsvc.Option { return contextsvc.WithPlan(plan) }
		}},
	}
	for _, side := range sides {
		b.Run(side.name, func(b *testing.B) {
			pace := side.pace(b, "sk_bench_fleet"+redistest.Prefix(b)) // a fresh shared bucket for every run
			ctx, cancel := context.WithTimeout(context.Background(), *fleetDuration)
			defer cancel()
			res := runFleet(ctx, b, plan, 8, pace, nil)
			rate := float64(res.ok) / res.elapsed.Seconds()
			b.ReportMetric(rate, "req/s")
			b.ReportMetric(rate/(float64(plan.PerMinute())/60), "of-plan")
			b.ReportMetric(float64(res.tooMany(0, res.elapsed+time.Hour)), "429s")
			b.ReportMetric(float64(len(res.failed)), "failed")
			b.ReportMetric(0, "ns/op")
			if when := res.tooManyBySecond(); len(when) > 0 {
				b.Logf("answers 429 by second of the run: %v", when)
			}
		})
	}
}

// sharedLimiter is WithLimiter of a redisstore.Limiter on c for apiKey and
// plan, with opts, failing tb if it cannot be built.
func sharedLimiter(tb testing.TB, c redis.UniversalClient, apiKey string, plan contextsvc.Plan, opts ...redisstore.LimiterOption) contextsvc.Option {
	tb.Helper()
	lim, err := redisstore.NewLimiter(c, apiKey, plan, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return contextsvc.WithLimiter(lim)
}
