package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	contextsvc "github.com/contextsvc/contextsvc-go"
	"github.com/contextsvc/contextsvc-go/redisstore"
	"github.com/contextsvc/contextsvc-go/redisstore/redistest"
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
// (redis.NewFailoverClient) and limiter for one key, call a plan's server
// while the master is killed and Sentinel promotes the replica. Before
// the kill they pace to the plan with no 429. While there is no master, a
// Wait first waits out go-redis's retries (which may last past the
// promotion), then does what its FailureMode documents: FailOpen paces to
// the process's share of the plan (calls go on), FailClosed fails the
// call with ErrUnavailable, unsent. Once every limiter is back on Redis,
// the fleet paces to the plan again. The whole failover costs at most one
// burst of 429s (see checkOneBurst; FailClosed sends nothing meanwhile, so
// none). The times to recover are logged. TestSentinelFailoverRuns
// measures the same over longer runs, when asked.
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
		t.Run(tc.mode.String()+", "+tc.name, func(t *testing.T) {
			t.Parallel()
			// 600 a minute, burst 5: a burst is half a second of the
			// plan, as on the Enterprise plan of 1,200 a minute, burst 10.
			plan := enterprisePlan(t, 600, 5)
			run := fleetFailover(t, plan, tc.mode, tc.opts, nil)
			run.log(t, plan)
			run.check(t, plan, tc.mode)
			if tc.mode == redisstore.FailOpen && tc.opts != nil && run.degraded != len(run.logs) {
				t.Errorf("FailOpen without retries: %d of %d limiters fell back", run.degraded, len(run.logs))
			}
		})
	}
}

// TestSentinelFailoverRuns measures what a fleet meets through a Sentinel
// failover over longer runs, as docs/fleet.md states it: 8 clients, each
// with its own failover client (go-redis's defaults) and limiter for an
// Enterprise key of 1,200 a minute, burst 10, call a plan's server for
// 20 s, and the master is killed with SIGKILL 6 s in. It runs only with
// CONTEXTSVC_FAILOVER_RUNS set to the number of runs (about 25 s each):
//
//	CONTEXTSVC_FAILOVER_RUNS=3 go test -v -run TestSentinelFailoverRuns ./redisstore
//
// Each run asserts what TestSentinelFleetFailover does (at most one burst
// of 429s, the plan's pace again after), and logs the share of the plan
// the fleet kept and how soon after the kill requests were answered again.
func TestSentinelFailoverRuns(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("CONTEXTSVC_FAILOVER_RUNS"))
	if n <= 0 {
		t.Skip("a measurement of 20-s runs: set CONTEXTSVC_FAILOVER_RUNS to the number of runs")
	}
	plan := enterprisePlan(t, 1200, 10)
	var summary []string
	for i := range n {
		t.Run(fmt.Sprint("run ", i+1), func(t *testing.T) {
			run := fleetFailover(t, plan, redisstore.FailOpen, nil, &fixedSchedule{kill: 6 * time.Second, end: 20 * time.Second})
			run.log(t, plan)
			run.check(t, plan, redisstore.FailOpen)
			summary = append(summary, fmt.Sprintf("run %d: %d answers 429, %.3f of the plan, answered again %v after the kill, back on Redis %v after it (%d of 8 fell back)",
				i+1, run.res.tooMany(0, run.res.elapsed+time.Hour), run.planShare(plan), (run.resumed-run.kill).Round(time.Millisecond),
				(run.recovered-run.kill).Round(time.Millisecond), run.degraded))
		})
	}
	for _, s := range summary {
		t.Log(s)
	}
}

// fixedSchedule kills the master and ends the run at fixed times from the
// run's start; without one, fleetFailover goes by what the fleet did.
type fixedSchedule struct{ kill, end time.Duration }

// failoverRun is what a fleet saw through a failover; times count from the
// run's start.
type failoverRun struct {
	res       *fleetResult
	kill      time.Duration // the master killed
	promote   time.Duration // the sentinels named the replica master
	recovered time.Duration // every limiter paced through Redis again
	resumed   time.Duration // the first request after the kill that got an answer other than 429
	degraded  int           // limiters that fell back to their local bucket
	logs      []*logRecorder
	mode      redisstore.FailureMode
}

// fleetFailover runs 8 clients, each with its own failover client (opts)
// and limiter in mode, through a failover: the master is killed once the
// fleet has sent 10 requests, and the run ends once every limiter is back
// on Redis and the fleet has sent 20 more; or as sched says.
func fleetFailover(t *testing.T, plan contextsvc.Plan, mode redisstore.FailureMode, opts *redis.FailoverOptions, sched *fixedSchedule) *failoverRun {
	t.Helper()
	sen := redistest.StartSentinel(t)
	apiKey := testKey(t)
	const clients = 8
	run := &failoverRun{mode: mode}
	var lims []*redisstore.Limiter
	for range clients {
		rec := &logRecorder{}
		lims = append(lims, newLimiter(t, redistest.FailoverClient(t, sen, opts), apiKey, plan,
			redisstore.WithFailureMode(mode), redisstore.WithLogger(slog.New(rec))))
		run.logs = append(run.logs, rec)
	}
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var requests atomic.Int64
	done := make(chan *fleetResult)
	started := time.Now()
	go func() {
		done <- runFleet(ctx, t, plan, clients, func(i int) contextsvc.Option { return contextsvc.WithLimiter(lims[i]) }, &requests)
	}()
	var killed, promoted time.Time
	if sched != nil {
		time.Sleep(time.Until(started.Add(sched.kill)))
		killed, promoted = failover(t, sen)
		time.Sleep(time.Until(started.Add(sched.end)))
	} else {
		waitFor(t, "requests before the kill", func() bool { return requests.Load() >= 10 })
		killed, promoted = failover(t, sen)
		atPromotion := requests.Load()
		waitFor(t, "the fleet on Redis again", func() bool {
			for _, l := range lims {
				if l.Degraded() {
					return false
				}
			}
			return requests.Load() >= atPromotion+10
		})
		// Ten requests from the time check starts to hold the fleet to
		// the plan again (settle after the last return to Redis that the
		// logs show, or after the promotion when none fell back): under
		// load a limiter may fall back again while the sentinels settle,
		// and the count starts anew at each return.
		settle := redisstore.DefaultRecheckInterval + 2*time.Minute/time.Duration(plan.PerMinute())
		lastBack, after := promoted, int64(-1)
		if back := lastRecovery(run.logs); back.After(lastBack) {
			lastBack = back
		}
		waitFor(t, "requests after the recovery", func() bool {
			for _, l := range lims {
				if l.Degraded() {
					return false
				}
			}
			if back := lastRecovery(run.logs); back.After(lastBack) {
				lastBack, after = back, -1
			}
			if time.Since(lastBack) <= settle {
				return false
			}
			if after < 0 {
				after = requests.Load()
			}
			return requests.Load() >= after+10
		})
	}
	stop()
	res := <-done
	run.res = res
	run.kill, run.promote = killed.Sub(res.start), promoted.Sub(res.start)

	// recovered: when the fleet paced through Redis alone again.
	switch mode {
	case redisstore.FailOpen:
		// The last limiter's return to Redis, as logged.
		run.recovered = run.promote
		for _, rec := range run.logs {
			if _, _, fell := rec.last(logFellBack); !fell {
				continue
			}
			run.degraded++
			_, at, ok := rec.last(logRecovered)
			if _, fellAt, _ := rec.last(logFellBack); !ok || fellAt.After(at) {
				t.Fatalf("a limiter fell back and did not log its return after: %v", rec.lines())
			}
			run.recovered = max(run.recovered, at.Sub(res.start))
		}
	case redisstore.FailClosed:
		// The first request sent after the last failed call.
		lastFailure := run.kill
		for _, f := range res.failed {
			lastFailure = max(lastFailure, f.at)
		}
		if sent := res.sent(lastFailure, res.elapsed); len(sent) > 0 {
			run.recovered = sent[0]
		}
	}
	run.resumed = -1
	for _, a := range res.attempts {
		if a.at > run.kill && a.status != 0 && a.status != http.StatusTooManyRequests && (run.resumed < 0 || a.at < run.resumed) {
			run.resumed = a.at
		}
	}
	return run
}

// lastRecovery is when the last of the limiters logged its return to
// Redis (zero when none has).
func lastRecovery(logs []*logRecorder) time.Time {
	var last time.Time
	for _, rec := range logs {
		if _, at, ok := rec.last(logRecovered); ok && at.After(last) {
			last = at
		}
	}
	return last
}

// longestDegraded is the longest any limiter paced on its local bucket:
// from its last fall-back to its return to Redis, as logged.
func (f *failoverRun) longestDegraded() time.Duration {
	var longest time.Duration
	for _, rec := range f.logs {
		_, fellAt, fell := rec.last(logFellBack)
		_, backAt, back := rec.last(logRecovered)
		if fell && back && backAt.After(fellAt) {
			longest = max(longest, backAt.Sub(fellAt))
		}
	}
	return longest
}

// burstWindow is how long after the fleet is back on Redis the 429s of a
// failover may still come: one recheck interval, in which the limiters
// that came back keep to their share while the last ones come back, and
// the second after it, when a call answered 429 is retried (Retry-After).
const burstWindow = redisstore.DefaultRecheckInterval + time.Second

// check asserts what a failover may cost: before the kill, the plan and no
// 429; over the whole run at most one burst of 429s (the plan's burst),
// every one sent between the kill and burstWindow after the fleet was back
// on Redis; the plan's pace again after; and calls failing only as the
// mode says.
func (f *failoverRun) check(t *testing.T, plan contextsvc.Plan, mode redisstore.FailureMode) {
	t.Helper()
	res := f.res
	if n := res.tooMany(0, f.kill); n != 0 {
		t.Errorf("%d answers 429 before the kill", n)
	}
	for _, fl := range res.failed {
		switch {
		case fl.at < f.kill:
			t.Errorf("a call failed %v into the run, before the kill: %v", fl.at, fl.err)
		case mode == redisstore.FailOpen && !errors.Is(fl.err, contextsvc.ErrRateLimited):
			t.Errorf("FailOpen: a call failed other than by running out of retries on 429: %v", fl.err)
		case mode == redisstore.FailClosed && !errors.Is(fl.err, redisstore.ErrUnavailable):
			t.Errorf("FailClosed: a call failed other than with ErrUnavailable: %v", fl.err)
		}
	}
	switch mode {
	case redisstore.FailOpen:
		// Calls go on: a limiter on its share starts empty and sends its
		// first request within one token of its share (a random part of
		// a token filled). One that stayed on its share twice that long,
		// with calls waiting, must have sent; a shorter stay (go-redis's
		// retries held the Wait past most of the failover) need not.
		token := time.Duration(float64(time.Minute) * float64(len(f.logs)) / float64(plan.PerMinute()))
		if long := f.longestDegraded(); long > 2*token && len(res.sent(f.kill, f.recovered)) == 0 {
			t.Errorf("FailOpen: a limiter paced alone for %v (a token of its share: %v), yet no request was sent between the kill and the recovery",
				long.Round(time.Millisecond), token.Round(time.Millisecond))
		}
	case redisstore.FailClosed:
		// Calls failed (or waited out go-redis's retries), and sent
		// nothing meanwhile.
		if n := res.tooMany(0, res.elapsed); n != 0 {
			t.Errorf("FailClosed: %d answers 429", n)
		}
	}
	// One burst: at most the plan's burst of 429s, all within the window.
	total, inWindow := res.tooMany(0, res.elapsed+time.Hour), res.tooMany(f.kill, f.recovered+burstWindow)
	if total > plan.Burst() || inWindow != total {
		t.Errorf("%d answers 429, %d of them sent between the kill and %v after the fleet was back on Redis; want at most one burst (%d), all in that window; by second: %v",
			total, inWindow, burstWindow, plan.Burst(), res.tooManyBySecond())
	}
	// After the recovery and the share each limiter keeps to for one
	// recheck interval, from two intervals on (when every Wait that began
	// before has returned) the plan's pace.
	interval := time.Minute / time.Duration(plan.PerMinute())
	from := f.recovered + redisstore.DefaultRecheckInterval + 2*interval
	var since []time.Duration
	for _, at := range res.sent(from, res.elapsed) {
		since = append(since, at-from)
	}
	if len(since) == 0 {
		t.Fatal("no request after the recovery")
	}
	checkPaced(t, "after the recovery", since, plan.Burst()-1, interval, time.Millisecond)
}

// planShare is the share of the plan the fleet got over the run.
func (f *failoverRun) planShare(plan contextsvc.Plan) float64 {
	return float64(f.res.ok) / f.res.elapsed.Seconds() / (float64(plan.PerMinute()) / 60)
}

func (f *failoverRun) log(t *testing.T, plan contextsvc.Plan) {
	t.Helper()
	t.Logf("the master was killed %v into the run; the sentinels promoted the replica %v later; the fleet paced through Redis again %v after the kill (%d of %d limiters fell back meanwhile); the first answer other than 429 %v after the kill",
		f.kill.Round(time.Millisecond), (f.promote - f.kill).Round(time.Millisecond), (f.recovered - f.kill).Round(time.Millisecond),
		f.degraded, len(f.logs), (f.resumed - f.kill).Round(time.Millisecond))
	t.Logf("%s; answers 429 by second: %v", f.res.summary(plan), f.res.tooManyBySecond())
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
