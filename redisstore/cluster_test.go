package redisstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
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

// oneKeyHook is a go-redis hook on a cluster client that fails the test
// for any command but a script on exactly one key: all the limiter and
// the deduper may send, so that a cluster never needs a cross-slot
// command from them.
type oneKeyHook struct{ t testing.TB }

func (h oneKeyHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h oneKeyHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		args := cmd.Args()
		name := strings.ToLower(cmd.Name())
		if (name != "evalsha" && name != "eval") || len(args) < 4 || fmt.Sprint(args[2]) != "1" {
			h.t.Errorf("the cluster client was sent %v…, not a script on one key", args[:min(len(args), 3)])
		}
		return next(ctx, cmd)
	}
}

func (h oneKeyHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.t.Errorf("the cluster client was sent a pipeline of %d commands", len(cmds))
		return next(ctx, cmds)
	}
}

// redirects is a go-redis hook on a cluster client's node clients that
// counts the MOVED and ASK answers the nodes gave: proof that a slot's
// move met the traffic. The cluster client follows them; the caller sees
// neither.
type redirects struct{ moved, ask atomic.Int64 }

func (r *redirects) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *redirects) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if err != nil {
			switch {
			case strings.HasPrefix(err.Error(), "MOVED "):
				r.moved.Add(1)
			case strings.HasPrefix(err.Error(), "ASK "):
				r.ask.Add(1)
			}
		}
		return err
	}
}

func (r *redirects) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// clusterClient returns a cluster client of its own for cl, with
// oneKeyHook, and r (if not nil) on each of its node clients.
func clusterClient(t *testing.T, cl *redistest.Cluster, r *redirects) *redis.ClusterClient {
	opts := &redis.ClusterOptions{}
	if r != nil {
		opts.NewClient = func(o *redis.Options) *redis.Client {
			c := redis.NewClient(o)
			c.AddHook(r)
			return c
		}
	}
	c := redistest.ClusterClient(t, cl, opts)
	c.AddHook(oneKeyHook{t})
	return c
}

// TestClusterFleet: 8 clients, each with its own cluster client and
// limiter for one key, call a server that holds the key to the same
// plan, for 2 s without one 429 and without ever pacing locally, and
// together send no more than the plan allows.
func TestClusterFleet(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a Redis Cluster and runs a fleet for 2 s; skipped with -short")
	}
	cl := redistest.SharedCluster(t)
	plan := enterprisePlan(t, 600, 5)
	key := testKey(t)
	logs := &logRecorder{}
	pace := func(int) contextsvc.Option {
		return sharedLimiter(t, clusterClient(t, cl, nil), key, plan, redisstore.WithLogger(slog.New(logs)))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	res := runFleet(ctx, t, plan, 8, pace, nil)
	t.Log(res.summary(plan))
	checkFleetShared(t, res, plan, logs)
}

// checkFleetShared checks a fleet run through a shared limiter that Redis
// served throughout: no call failed, no answer 429, no more requests than
// the plan allows, and no limiter ever paced locally (logs, each
// limiter's logger, is empty).
func checkFleetShared(t *testing.T, res *fleetResult, plan contextsvc.Plan, logs *logRecorder) {
	t.Helper()
	if n := res.tooMany(0, res.elapsed); n != 0 || len(res.failed) != 0 {
		t.Errorf("%d answers 429 (by second: %v), %d failed calls %v; want none", n, res.tooManyBySecond(), len(res.failed), res.failed)
	}
	if res.ok == 0 {
		t.Error("no call was answered")
	}
	checkPaced(t, "the fleet", res.sent(0, res.elapsed), plan.Burst()-1, time.Minute/time.Duration(plan.PerMinute()), time.Millisecond)
	if lines := logs.lines(); len(lines) != 0 {
		t.Errorf("a limiter fell back to pacing locally:\n%s", strings.Join(lines, "\n"))
	}
}

// TestClusterDeduper: three receiver replicas, each with its own cluster
// client and Deduper, get thousands of events twice each (as from two
// webhooks), from 16 concurrent senders. Each event is handled exactly
// once, no delivery is answered 500, and the events' keys are spread over
// all three masters.
func TestClusterDeduper(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a Redis Cluster and delivers 4,000 events; skipped with -short")
	}
	cl := redistest.SharedCluster(t)
	prefix := redistest.Prefix(t)
	const n = 2000
	var ds []contextsvc.Deduper
	for range 3 {
		ds = append(ds, newDeduper(t, clusterClient(t, cl, nil), prefix))
	}
	r := newReceivers(t, ds...)
	ts := time.Now()
	busy := r.deliver(eventIDs("cluster", n), 2, 16, ts)
	checkHandledOnce(t, r, busy, n, ts)

	// Keys per master: every master holds some, and together one per
	// event.
	var perMaster []int
	for _, node := range cl.Nodes() {
		keys, err := redistest.Client(t, node).Keys(context.Background(), prefix+"*").Result()
		if err != nil {
			t.Fatal(err)
		}
		perMaster = append(perMaster, len(keys))
	}
	t.Logf("keys per master: %v", perMaster)
	if sum := perMaster[0] + perMaster[1] + perMaster[2]; sum != n || slices.Contains(perMaster, 0) {
		t.Errorf("keys per master %v, want some on each and %d in all", perMaster, n)
	}
}

// checkHandledOnce delivers again the copies r.deliver set aside (busy:
// each came while the other copy was being handled, and now finds the
// event done), then checks that every attempt was answered 200 or 409
// (none 500: no error reached the sender) and that r's function ran
// exactly once for each of n events (timestamped ts).
func checkHandledOnce(t *testing.T, r *receivers, busy []string, n int, ts time.Time) {
	t.Helper()
	// Each event once: two copies set aside and sent together would hold
	// the event from each other.
	if again := r.deliver(slices.Values(slices.Compact(slices.Sorted(slices.Values(busy)))), 1, 4, ts); len(again) != 0 {
		t.Errorf("%d copies answered 409 again", len(again))
	}
	counts := r.counts()
	t.Logf("%d events, 2 copies each: answers %v", n, counts)
	for status := range counts {
		if status != http.StatusOK && status != http.StatusConflict {
			t.Errorf("%d attempts answered %d", counts[status], status)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.handled) != n {
		t.Errorf("%d events handled, want %d", len(r.handled), n)
	}
	for id, c := range r.handled {
		if c != 1 {
			t.Errorf("event %s handled %d times, want once", id, c)
		}
	}
}

// TestClusterSlotMigration: a fleet of 8 limiters on one key and three
// receiver replicas run on a cluster of the test's own while slots move
// from one master to another under them: the limiter's key's slot and 200
// more, where new events' keys land. The move goes in Redis Cluster's
// three steps (IMPORTING/MIGRATING, MIGRATE of the keys, SETSLOT NODE),
// with traffic between each, so the clients meet ASK answers, and MOVED
// ones unless they reloaded the slots first (counted on their node
// connections). Nothing reaches the callers: no call fails, no answer
// 429, no limiter paces locally, no delivery is answered 500, and each
// event is handled exactly once.
func TestClusterSlotMigration(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a cluster of its own and moves slots under load (about 5 s); skipped with -short")
	}
	cl := redistest.StartCluster(t)
	ctx := context.Background()

	// The fleet.
	plan := enterprisePlan(t, 600, 5)
	apiKey := testKey(t)
	limRedirects, logs := &redirects{}, &logRecorder{}
	pace := func(int) contextsvc.Option {
		return sharedLimiter(t, clusterClient(t, cl, limRedirects), apiKey, plan, redisstore.WithLogger(slog.New(logs)))
	}
	fleetCtx, stopFleet := context.WithCancel(ctx)
	defer stopFleet()
	var requests atomic.Int64
	fleetDone := make(chan *fleetResult)
	go func() { fleetDone <- runFleet(fleetCtx, t, plan, 8, pace, &requests) }()

	// The receivers, given new events until stop closes.
	prefix := redistest.Prefix(t)
	dedupeRedirects := &redirects{}
	var ds []contextsvc.Deduper
	for range 3 {
		ds = append(ds, newDeduper(t, clusterClient(t, cl, dedupeRedirects), prefix))
	}
	r := newReceivers(t, ds...)
	stop := make(chan struct{})
	var events atomic.Int64
	ids := func(yield func(string) bool) {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			events.Add(1)
			if !yield(fmt.Sprintf("evt_migration_%06d", i)) {
				return
			}
		}
	}
	ts := time.Now()
	busyDone := make(chan []string)
	go func() { busyDone <- r.deliver(ids, 2, 4, ts) }()

	// traffic waits until the fleet has sent 3 more requests, the
	// receivers answered 100 more attempts, and cond holds.
	traffic := func(what string, cond func() bool) {
		t.Helper()
		req, sent := requests.Load(), r.sent.Load()
		waitFor(t, what, func() bool { return requests.Load() >= req+3 && r.sent.Load() >= sent+100 && cond() })
	}
	always := func() bool { return true }
	traffic("traffic before the move", always)

	admin := redistest.ClusterClient(t, cl)
	limSlot := int(admin.ClusterKeySlot(ctx, newLimiter(t, admin, apiKey, plan).Key()).Val())
	from, err := cl.Owner(ctx, limSlot)
	if err != nil {
		t.Fatal(err)
	}
	to := (from + 1) % 3
	fromSlots, err := cl.Slots(ctx, from)
	if err != nil {
		t.Fatal(err)
	}
	slots := []int{limSlot}
	for _, s := range fromSlots {
		if s != limSlot && len(slots) <= 200 {
			slots = append(slots, s)
		}
	}
	move, err := cl.BeginMove(ctx, slots, to)
	if err != nil {
		t.Fatal(err)
	}
	// New events' keys in the slots being moved are made on the target,
	// by way of ASK.
	traffic("traffic while the slots are MIGRATING", func() bool { return dedupeRedirects.ask.Load() > 0 })
	if err := move.MigrateKeys(ctx, 10); err != nil {
		t.Fatal(err)
	}
	// The limiter's key is on the target now: every Wait is asked there.
	traffic("traffic after the keys moved", func() bool { return limRedirects.ask.Load() > 0 })
	if err := move.Finish(ctx); err != nil {
		t.Fatal(err)
	}
	// A client that has not reloaded the slots since is answered MOVED;
	// one whose ASK answers made it reload them meanwhile (go-redis does,
	// every 200 ms while they come) goes straight to the new owner.
	traffic("traffic after the move", always)
	close(stop)
	busy := <-busyDone
	stopFleet()
	res := <-fleetDone

	if owner, err := cl.Owner(ctx, limSlot); err != nil || owner != to {
		t.Errorf("the limiter's slot %d is on node %d (%v), want %d", limSlot, owner, err, to)
	}
	t.Logf("moved %d slots from node %d to node %d; the fleet met %d ASK and %d MOVED, the receivers %d ASK and %d MOVED",
		len(move.Slots()), from, to, limRedirects.ask.Load(), limRedirects.moved.Load(), dedupeRedirects.ask.Load(), dedupeRedirects.moved.Load())
	for _, c := range []struct {
		who string
		r   *redirects
	}{{"the fleet", limRedirects}, {"the receivers", dedupeRedirects}} {
		if c.r.ask.Load() == 0 {
			t.Errorf("%s met no ASK answer; the move did not reach them", c.who)
		}
	}

	t.Log("fleet: " + res.summary(plan))
	checkFleetShared(t, res, plan, logs)

	checkHandledOnce(t, r, busy, int(events.Load()), ts)
}
