package redisstore_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
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
	"github.com/contextsvc/contextsvc-go/redisstore"
)

// Log lines of a FailOpen limiter: falling back, and back on Redis.
const (
	logFellBack  = "WARN contextsvc rate limiter: Redis unreachable"
	logRecovered = "INFO contextsvc rate limiter: Redis reachable again"
)

// failover kills the master of sen and waits for the sentinels to
// promote the replica. It returns when the master died and when the
// sentinels named the new one.
func failover(t *testing.T, sen *redistest.Sentinel) (killed, promoted time.Time) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	master, err := sen.Master(ctx)
	if err != nil {
		t.Fatal(err)
	}
	killed = time.Now()
	if err := master.Kill(); err != nil {
		t.Fatal(err)
	}
	if _, err := sen.WaitFailover(ctx, master); err != nil {
		t.Fatal(err)
	}
	return killed, time.Now()
}

// TestSentinelFleetFailover: 8 clients, each with its own failover client
// (redis.NewFailoverClient) and limiter for one key, call the mock server
// while the master is killed and Sentinel promotes the replica. Before
// the kill they pace to the plan with no 429. While there is no master, a
// Wait first waits out go-redis's retries (which may last past the
// promotion), then does what its FailureMode documents: FailOpen paces
// locally (calls go on; the service answers the excess 429), FailClosed
// fails the call with ErrUnavailable, unsent. Once every limiter is back
// on Redis, the fleet paces to the plan again: at most one burst answered
// 429 (the service's bucket was spent by the local pacing while the
// shared one refilled; FailClosed sends nothing meanwhile, so none). The
// times to recover are logged.
func TestSentinelFleetFailover(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills a Redis master under a fleet and waits for the failover (about 5 s); skipped with -short")
	}
	for _, tc := range []struct {
		mode redisstore.FailureMode
		name string
		opts *redis.FailoverOptions
	}{
		// go-redis's retries often carry a Wait across a failover of a
		// second or two: the limiter then sees no error at all, and the
		// call waits.
		{redisstore.FailOpen, "go-redis defaults", nil},
		// Without them, every Wait meets the outage.
		{redisstore.FailOpen, "no retries", &redis.FailoverOptions{MaxRetries: -1, DialerRetries: 1}},
		{redisstore.FailClosed, "go-redis defaults", nil},
	} {
		mode := tc.mode
		t.Run(mode.String()+", "+tc.name, func(t *testing.T) {
			t.Parallel()
			sen := redistest.StartSentinel(t)
			plan := plantest.Enterprise(t, 600, 5)
			interval := time.Minute / time.Duration(plan.PerMinute())
			apiKey := testKey(t)
			const clients = 8
			var lims []*redisstore.Limiter
			var logs []*logRecorder
			for range clients {
				rec := &logRecorder{}
				lims = append(lims, newLimiter(t, redistest.FailoverClient(t, sen, tc.opts), apiKey, plan,
					redisstore.WithFailureMode(mode), redisstore.WithLogger(slog.New(rec))))
				logs = append(logs, rec)
			}
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			var requests atomic.Int64
			done := make(chan *fleetResult)
			go func() {
				done <- runFleet(ctx, t, plan, clients, func(i int) contextsvc.Option { return contextsvc.WithLimiter(lims[i]) }, &requests)
			}()
			waitFor(t, "requests before the kill", func() bool { return requests.Load() >= 10 })

			killed, promoted := failover(t, sen)
			atPromotion := requests.Load()
			waitFor(t, "the fleet on Redis again", func() bool {
				for _, l := range lims {
					if l.Degraded() {
						return false
					}
				}
				return requests.Load() >= atPromotion+10
			})
			after := requests.Load()
			waitFor(t, "requests after the recovery", func() bool { return requests.Load() >= after+10 })
			stop()
			res := <-done

			kill, promote := killed.Sub(res.start), promoted.Sub(res.start)
			// recovered: when the fleet paced through Redis alone again.
			var recovered time.Duration
			degraded := 0
			switch mode {
			case redisstore.FailOpen:
				// The last limiter's return to Redis, as logged.
				recovered = promote
				for _, rec := range logs {
					if _, _, fell := rec.last(logFellBack); !fell {
						continue
					}
					degraded++
					_, at, ok := rec.last(logRecovered)
					if _, fellAt, _ := rec.last(logFellBack); !ok || fellAt.After(at) {
						t.Fatalf("a limiter fell back and did not log its return after: %v", rec.lines())
					}
					recovered = max(recovered, at.Sub(res.start))
				}
			case redisstore.FailClosed:
				// The first request sent after the last failed call.
				lastFailure := kill
				for _, f := range res.failed {
					lastFailure = max(lastFailure, f.at)
				}
				if sent := res.sent(lastFailure, res.elapsed); len(sent) > 0 {
					recovered = sent[0]
				}
			}
			t.Logf("the master was killed %v into the run; the sentinels promoted the replica %v later; the fleet paced through Redis again %v after the kill (%d of %d limiters fell back meanwhile)",
				kill.Round(time.Millisecond), (promote - kill).Round(time.Millisecond), (recovered - kill).Round(time.Millisecond), degraded, clients)
			t.Logf("%s; answers 429 by second: %v", res.summary(plan), res.tooManyBySecond())

			// Before the kill: the plan, no 429, nothing failed.
			if n := res.tooMany(0, kill); n != 0 {
				t.Errorf("%d answers 429 before the kill", n)
			}
			for _, f := range res.failed {
				switch {
				case f.at < kill:
					t.Errorf("a call failed %v into the run, before the kill: %v", f.at, f.err)
				case mode == redisstore.FailOpen && !errors.Is(f.err, contextsvc.ErrRateLimited):
					t.Errorf("FailOpen: a call failed other than by running out of retries on 429: %v", f.err)
				case mode == redisstore.FailClosed && !errors.Is(f.err, redisstore.ErrUnavailable):
					t.Errorf("FailClosed: a call failed other than with ErrUnavailable: %v", f.err)
				}
			}
			// While there was no master.
			outage := len(res.sent(kill, recovered))
			switch mode {
			case redisstore.FailOpen:
				if degraded > 0 && outage == 0 {
					t.Errorf("FailOpen: no request was sent between the kill and the recovery")
				}
				if tc.opts != nil && degraded != clients {
					t.Errorf("FailOpen without retries: %d of %d limiters fell back", degraded, clients)
				}
			case redisstore.FailClosed:
				// Calls failed (or waited out go-redis's retries), and sent
				// nothing meanwhile.
				if n := res.tooMany(0, res.elapsed); n != 0 {
					t.Errorf("FailClosed: %d answers 429", n)
				}
			}
			// After the recovery: at most one burst answered 429, and from
			// two intervals on (when every Wait that began before the
			// recovery has returned) the plan's pace.
			if n := res.tooMany(recovered, res.elapsed); n > plan.Burst() {
				t.Errorf("%d answers 429 after the recovery; want at most one burst (%d)", n, plan.Burst())
			}
			from := recovered + 2*interval
			var since []time.Duration
			for _, at := range res.sent(from, res.elapsed) {
				since = append(since, at-from)
			}
			if len(since) == 0 {
				t.Fatal("no request after the recovery")
			}
			checkPaced(t, "after the recovery", since, plan.Burst()-1, interval, time.Millisecond)
		})
	}
}

// commitRecorder is a Deduper that notes when each Commit began and how
// it ended, per event id.
type commitRecorder struct {
	contextsvc.Deduper
	mu      *sync.Mutex
	commits map[string][]commitRecord
}

type commitRecord struct {
	start time.Time
	err   error
}

func (c commitRecorder) Commit(ctx context.Context, id string, token contextsvc.ClaimToken, remember time.Duration) error {
	start := time.Now()
	err := c.Deduper.Commit(ctx, id, token, remember)
	c.mu.Lock()
	c.commits[id] = append(c.commits[id], commitRecord{start, err})
	c.mu.Unlock()
	return err
}

// TestSentinelWebhookFailover: three receiver replicas, each with its own
// failover client and Deduper, get 1,500 events twice each (two
// webhooks) while the master is killed and the replica promoted: with
// go-redis's default retries, which may carry a call across a short
// failover, and with none, so that every call meets the outage. Nothing
// is lost: every event is handled. An event is handled twice only where
// the failure table in docs/fleet.md allows it, which the test checks and counts:
// its first handling's Commit failed (Redis went down while it ran, or
// the claim was lost with the old master and another copy took the event
// over on the new one), or it succeeded on the old master just before the
// kill and did not reach the replica. A claim that reached the replica
// from an attempt whose Commit then failed holds its event (answered 409)
// until its 10-minute lease lapses; the test lapses those leases at once
// and counts them. The time to recover is logged.
func TestSentinelWebhookFailover(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("kills a Redis master under a webhook run and waits for the failover (about 3 s); skipped with -short")
	}
	for _, tc := range []struct {
		name string
		opts *redis.FailoverOptions
	}{
		{"go-redis defaults", nil},
		{"no retries", &redis.FailoverOptions{MaxRetries: -1, DialerRetries: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			webhookFailover(t, tc.opts)
		})
	}
}

func webhookFailover(t *testing.T, opts *redis.FailoverOptions) {
	sen := redistest.StartSentinel(t)
	const prefix = "app:webhooks:"
	var mu sync.Mutex
	commits := map[string][]commitRecord{}
	var ds []contextsvc.Deduper
	for range 3 {
		ds = append(ds, commitRecorder{Deduper: newDeduper(t, redistest.FailoverClient(t, sen, opts), prefix), mu: &mu, commits: commits})
	}
	r := newReceivers(t, ds...)
	const n = 1500
	ts := time.Now()
	busyc := make(chan []string)
	go func() { busyc <- r.deliver(eventIDs("failover", n), 2, 8, ts) }()
	waitFor(t, "a third of the events handled", func() bool { return r.handledCount() >= n/3 })
	handledBefore := r.handledCount()
	killed, promoted := failover(t, sen)
	busy := <-busyc

	// Copies answered 409: another copy held the event, or a claim
	// stranded by the failover still does. The latter are found on the new
	// master, their leases lapsed, and the copies delivered again.
	ctx := context.Background()
	c := redistest.FailoverClient(t, sen)
	stranded := 0
	for _, id := range busy {
		v, err := c.Get(ctx, prefix+id).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatal(err)
		}
		if strings.HasPrefix(v, "c:") {
			if ttl := c.PTTL(ctx, prefix+id).Val(); ttl <= 0 || ttl > 10*time.Minute {
				t.Errorf("event %s: a stranded claim with PTTL %v, want within the 10-minute lease", id, ttl)
			}
			stranded++
			if err := c.Del(ctx, prefix+id).Err(); err != nil { // the lease lapsing, early
				t.Fatal(err)
			}
		}
	}
	// Each event once: both copies of an event whose claim was stranded
	// were set aside, and sent together they would hold it from each other.
	if again := r.deliver(slices.Values(slices.Compact(slices.Sorted(slices.Values(busy)))), 1, 4, ts); len(again) != 0 {
		t.Errorf("%d copies answered 409 after the stranded claims' leases lapsed", len(again))
	}

	counts := r.counts()
	r.mu.Lock()
	defer r.mu.Unlock()
	mu.Lock()
	defer mu.Unlock()
	// Nothing lost.
	if len(r.handled) != n {
		t.Errorf("%d events handled, want all %d", len(r.handled), n)
	}
	// Nothing failed before the kill.
	var outage500s int
	recovery := time.Duration(-1)
	for _, a := range r.attempts {
		switch {
		case a.end.Before(killed) && a.status != http.StatusOK && a.status != http.StatusConflict:
			t.Errorf("event %s answered %d before the kill", a.id, a.status)
		case a.status == http.StatusInternalServerError:
			outage500s++
		}
		if a.handled && a.start.After(killed) && (recovery < 0 || a.end.Sub(killed) < recovery) {
			recovery = a.end.Sub(killed)
		}
	}
	// Handled twice only as documented, and only after the kill.
	lastHandled := map[string]time.Time{}
	for _, a := range r.attempts {
		if a.handled && a.start.After(lastHandled[a.id]) {
			lastHandled[a.id] = a.start
		}
	}
	var commitFailed, lostWithMaster int
	for id, times := range r.handled {
		if times == 1 {
			continue
		}
		cs := commits[id]
		switch {
		case lastHandled[id].Before(killed):
			t.Errorf("event %s handled %d times before the kill", id, times)
		case len(cs) > 0 && cs[0].err != nil:
			commitFailed++
		case len(cs) > 0 && cs[0].start.Before(killed):
			lostWithMaster++
		default:
			t.Errorf("event %s handled %d times; its first Commit succeeded on the new master (%d Commits, the first %v after the kill)",
				id, times, len(cs), cs[0].start.Sub(killed))
		}
	}
	t.Logf("the master was killed with %d of %d events handled; the sentinels promoted the replica %v later; the first event handled afterwards was %v after the kill",
		handledBefore, n, promoted.Sub(killed).Round(time.Millisecond), recovery.Round(time.Millisecond))
	t.Logf("%d attempts answered 500 meanwhile (retried); handled twice: %d after a failed Commit, %d whose Commit was lost with the old master; %d stranded claims (409 until their lease lapsed); answers %v",
		outage500s, commitFailed, lostWithMaster, stranded, counts)
}
